package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Servers remembers what each server (a base URL and a model) was found to
// accept: the response format, the field that bounds the answer, and the
// model's context window. The engine learns it from the first requests of
// a process and every later review starts from it, so a server that
// rejects json_schema costs one failed request per process, not one per
// review. Give one Servers to every engine of a process (WithServers);
// without one an engine remembers for itself only.
type Servers struct {
	mu    sync.Mutex
	known map[serverKey]*serverFacts
}

// NewServers returns an empty memory.
func NewServers() *Servers { return &Servers{known: map[serverKey]*serverFacts{}} }

type serverKey struct{ baseURL, model string }

// serverFacts is what is known of one server. format and tokensField are
// guarded by Servers.mu; the context by contextMu, held while it is asked
// for, so concurrent reviews ask once.
type serverFacts struct {
	format      string
	tokensField string
	// stream: answers are asked for as server-sent events, until the
	// server rejects that.
	stream bool
	// tried are the token fields tried so far: the field falls back once,
	// and back again only if the other one is rejected too.
	tried map[string]bool

	contextMu   sync.Mutex
	contextDone bool
	context     int
	contextFrom string
	// learned is the context an error of the server named ("maximum
	// context length is 2048 tokens"), which overrides any other number.
	learned int
	// tokenRatio is how many of the model's tokens the engine's estimate
	// of one token turned out to be, at most, from the server's counts
	// (usage, or an overflow error): code with many numbers and symbols
	// is denser than prose. At least 1; guarded by Servers.mu.
	tokenRatio float64
}

// facts returns the server's facts, starting from cfg's choices.
func (s *Servers) facts(cfg Config) *serverFacts {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := serverKey{cfg.BaseURL, cfg.Model}
	f := s.known[k]
	if f == nil {
		f = &serverFacts{format: cfg.ResponseFormat, tokensField: cfg.MaxTokensField, stream: !cfg.NoStream, tried: map[string]bool{cfg.MaxTokensField: true}, tokenRatio: 1}
		s.known[k] = f
	}
	return f
}

// protocol returns the response format and token field to use now.
func (s *Servers) protocol(f *serverFacts) (format, field string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f.format, f.tokensField
}

// streams reports whether answers are asked for streamed.
func (s *Servers) streams(f *serverFacts) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f.stream
}

// streamRejected makes the server's answers be asked for whole; it reports
// whether this call changed that (a concurrent request may have first).
func (s *Servers) streamRejected(f *serverFacts) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := f.stream
	f.stream = false
	return was
}

// formatRejected moves the server from format to the next one in the
// fallback order and returns the format to use; ok is false when there is
// none left. A concurrent request that already moved it on is followed.
func (s *Servers) formatRejected(f *serverFacts, format string) (next string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.format != format {
		return f.format, true
	}
	switch format {
	case FormatJSONSchema:
		f.format = FormatJSONObject
	case FormatJSONObject:
		f.format = FormatPrompt
	default:
		return format, false
	}
	return f.format, true
}

// fieldRejected switches the server to the other token field; ok is false
// when both were tried.
func (s *Servers) fieldRejected(f *serverFacts, field string) (next string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.tokensField != field {
		return f.tokensField, true
	}
	other := MaxTokens
	if field == MaxTokens {
		other = MaxCompletionTokens
	}
	if f.tried[other] {
		return field, false
	}
	f.tried[other] = true
	f.tokensField = other
	return other, true
}

// contextWindow returns the model's context in tokens and where the number
// came from: the configuration, else the server's model list (asked once
// per server), else DefaultContextTokens.
func (e *Engine) contextWindow(ctx context.Context) (tokens int, from string) {
	f := e.facts
	f.contextMu.Lock()
	defer f.contextMu.Unlock()
	if f.learned > 0 {
		return f.learned, "the server's error"
	}
	if e.cfg.ContextTokens > 0 {
		return e.cfg.ContextTokens, "configured"
	}
	if !f.contextDone {
		n, err := e.askContext(ctx)
		switch {
		case err != nil:
			// Not remembered when the review was canceled: the next one asks.
			if ctx.Err() != nil {
				return DefaultContextTokens, "the default"
			}
			e.log.InfoContext(ctx, "llm: the model's context window is not known; using the default", "model", e.cfg.Model, "default", DefaultContextTokens, "reason", e.redact(err))
			f.context, f.contextFrom = DefaultContextTokens, "the default"
		case n == 0:
			f.context, f.contextFrom = DefaultContextTokens, "the default"
		default:
			f.context, f.contextFrom = n, "the server's model list"
		}
		f.contextDone = true
	}
	return f.context, f.contextFrom
}

// modelList is GET {base}/models as the servers quorum knows answer it.
// OpenAI itself says nothing of the context; vLLM says max_model_len,
// LM Studio and OpenRouter context_length, llama.cpp's server n_ctx (or
// the model's trained n_ctx_train) in meta.
type modelList struct {
	Data []struct {
		ID            string `json:"id"`
		MaxModelLen   int    `json:"max_model_len"`
		ContextLength int    `json:"context_length"`
		Meta          struct {
			NCtx      int `json:"n_ctx"`
			NCtxTrain int `json:"n_ctx_train"`
		} `json:"meta"`
	} `json:"data"`
}

// askContext asks the server's model list for the model's context window;
// 0 when the server does not say.
func (e *Engine) askContext(ctx context.Context) (int, error) {
	u, err := url.Parse(e.cfg.BaseURL)
	if err != nil {
		return 0, err
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/models"
	u.RawPath = ""
	rctx, cancel := context.WithTimeout(ctx, min(e.cfg.Timeout, modelListTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	e.authorize(req)
	resp, err := e.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET models: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize))
	if err != nil {
		return 0, fmt.Errorf("GET models: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET models: HTTP %d", resp.StatusCode)
	}
	var list modelList
	if err := json.Unmarshal(data, &list); err != nil {
		return 0, fmt.Errorf("GET models: not a model list: %v", err)
	}
	for _, m := range list.Data {
		if m.ID != e.cfg.Model && len(list.Data) > 1 {
			continue
		}
		for _, n := range []int{m.MaxModelLen, m.ContextLength, m.Meta.NCtx, m.Meta.NCtxTrain} {
			if n > 0 {
				return n, nil
			}
		}
	}
	return 0, nil
}

// ratio returns the server's token ratio.
func (s *Servers) ratio(f *serverFacts) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f.tokenRatio
}

// counted records the server's count of a prompt the engine estimated
// at estimate tokens; it reports whether the ratio grew.
func (s *Servers) counted(f *serverFacts, estimate, tokens int) bool {
	if estimate <= 0 || tokens <= 0 {
		return false
	}
	// A tenth more than measured: the next prompts are other text.
	r := min(float64(tokens)/float64(estimate)*1.1, maxTokenRatio)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r <= f.tokenRatio {
		return false
	}
	f.tokenRatio = r
	return true
}

// maxTokenRatio bounds the token ratio, so that one odd count cannot
// shrink every request to nothing.
const maxTokenRatio = 3

// contextLimitRe reads the context window, and the prompt's tokens, from
// the error OpenAI, vLLM and llama-cpp-python's server answer to a prompt
// that does not fit: "This model's maximum context length is 2048 tokens.
// However, you requested 2472 tokens (2172 in the messages, 300 in the
// completion)".
var (
	contextLimitRe    = regexp.MustCompile(`maximum context length is (\d+) tokens`)
	contextMessagesRe = regexp.MustCompile(`(\d+) in the messages`)
)

// overflow reads a context_length_exceeded error: the window, and how
// many tokens the prompt was (0 when not said).
func overflow(err error) (window, prompt int, ok bool) {
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		return 0, 0, false
	}
	m := contextLimitRe.FindStringSubmatch(ae.body)
	if m == nil {
		return 0, 0, false
	}
	window, _ = strconv.Atoi(m[1])
	if m := contextMessagesRe.FindStringSubmatch(ae.body); m != nil {
		prompt, _ = strconv.Atoi(m[1])
	}
	return window, prompt, window > 0
}

// learnContext remembers the context window an overflow error of the
// server names, and reports whether the review should be planned again:
// the window is smaller than planned, or the prompt was larger than
// estimated (complete has recorded the ratio).
func (e *Engine) learnContext(err error, p plan) bool {
	n, _, ok := overflow(err)
	if !ok {
		return false
	}
	f := e.facts
	f.contextMu.Lock()
	if f.learned == 0 || n < f.learned {
		f.learned = n
	}
	f.contextMu.Unlock()
	return n < p.context || e.servers.ratio(f) > p.ratio
}
