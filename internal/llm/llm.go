// Package llm is the LLM engine: it makes a specialist review a change
// through an OpenAI-compatible chat-completions endpoint (OpenAI, Azure
// OpenAI, Ollama, vLLM, llama.cpp server), with a prompt per specialist
// that presents the diff's hunks with explicit new-file line numbers, and a
// JSON schema (structured output) for the findings it returns.
//
// Every failure of the endpoint or the model (an HTTP error, a timeout, a
// malformed, truncated or refused answer) is an error of the specialist,
// never a panic; 429, 5xx and timeouts are retried once.
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// APIKeyEnv is the environment variable the command line reads the API key
// from by default.
const APIKeyEnv = "QUORUM_LLM_API_KEY"

// Response formats: how the answer's shape is requested from the server.
const (
	// FormatJSONSchema asks for structured output against the findings
	// schema (OpenAI, Azure, recent vLLM, Ollama and llama.cpp server).
	FormatJSONSchema = "json_schema"
	// FormatJSONObject asks only for a JSON object, for servers without
	// json_schema support; the schema is then given in the prompt.
	FormatJSONObject = "json_object"
)

// Names of the request field that bounds the answer's length.
const (
	// MaxCompletionTokens is OpenAI's current field, required by its
	// reasoning models.
	MaxCompletionTokens = "max_completion_tokens"
	// MaxTokens is the older field, which Ollama, llama.cpp server and
	// older vLLM read.
	MaxTokens = "max_tokens"
)

// Defaults for Config's zero values.
const (
	DefaultTimeout       = 2 * time.Minute
	DefaultMaxTokens     = 4096
	DefaultContextTokens = 32000
	DefaultMaxRetryAfter = 30 * time.Second
	DefaultConcurrency   = 2
)

const (
	// defaultRetryBackoff is the wait before a retry the server did not
	// time with Retry-After.
	defaultRetryBackoff = time.Second
	// minimumPromptBudget is the fewest characters of diff a request must
	// be able to carry for the config to make sense.
	minimumPromptBudget = 1000
	// charsPerTokenEstimate estimates tokens without the model's tokenizer.
	charsPerTokenEstimate = 4
)

// Config says which endpoint and model the engine uses and how.
type Config struct {
	// BaseURL is the API's base, to which "/chat/completions" is appended:
	// "https://api.openai.com/v1", "http://localhost:11434/v1". A query
	// (Azure's "?api-version=…") is kept.
	BaseURL string
	// Model is the model (for Azure, the deployment) to ask.
	Model string
	// APIKey authenticates to the endpoint; empty sends no credential (a
	// local server). It is never logged nor put into an error.
	APIKey string
	// APIKeyHeader is the header that carries APIKey: empty for
	// "Authorization: Bearer <key>", or a header name such as "api-key"
	// (Azure), which then carries the bare key.
	APIKeyHeader string
	// Timeout bounds each request; DefaultTimeout when 0.
	Timeout time.Duration
	// MaxTokens bounds each answer; DefaultMaxTokens when 0.
	MaxTokens int
	// MaxTokensField is MaxCompletionTokens (the default) or MaxTokens.
	MaxTokensField string
	// ResponseFormat is FormatJSONSchema (the default) or FormatJSONObject.
	ResponseFormat string
	// ContextTokens is the model's context window, in tokens, which
	// prompt and answer share; a change whose prompt would not fit is
	// split by file into several requests. DefaultContextTokens when 0.
	ContextTokens int
	// MaxRetryAfter is the longest Retry-After the engine waits for before
	// its one retry; a longer one fails at once. DefaultMaxRetryAfter when 0.
	MaxRetryAfter time.Duration
	// Concurrency is how many requests of one review run at a time;
	// DefaultConcurrency when 0.
	Concurrency int
}

// Instruction is extra guidance for the files whose path matches PathGlob
// (a doublestar glob, as in .quorum.yaml), added to the prompt beside them.
type Instruction struct {
	PathGlob string
	Text     string
}

// Option changes an Engine built by New.
type Option func(*Engine)

// WithInstructions adds per-path instructions to every prompt.
func WithInstructions(ins []Instruction) Option {
	return func(e *Engine) { e.instructions = append(e.instructions, ins...) }
}

// WithHTTPClient sets the HTTP client; by default one with
// http.DefaultTransport that follows no redirect. Per-request timeouts come
// from Config.Timeout either way.
func WithHTTPClient(c *http.Client) Option {
	return func(e *Engine) { e.http = c }
}

// WithLogger sets the logger; nothing is logged otherwise. The engine logs
// one line per request (specialist, model, chunk, status, duration), never
// the key, the prompt or the answer.
func WithLogger(l *slog.Logger) Option {
	return func(e *Engine) { e.log = l }
}

// WithClock sets how the engine reads the time (for HTTP-date
// Retry-After headers) and waits before a retry, so tests never sleep.
func WithClock(now func() time.Time, sleep func(context.Context, time.Duration) error) Option {
	return func(e *Engine) { e.now, e.sleep = now, sleep }
}

// WithFocus replaces the specialist's description of what it looks for in
// the system prompt: the way to give a specialist other than the built-in
// four a precise brief.
func WithFocus(focus string) Option {
	return func(e *Engine) { e.focus = focus }
}

// Engine is a specialist that reviews through an LLM.
type Engine struct {
	cfg          Config
	name         string
	focus        string
	endpoint     string
	instructions []Instruction
	http         *http.Client
	log          *slog.Logger
	now          func() time.Time
	sleep        func(context.Context, time.Duration) error
}

var _ specialist.Specialist = (*Engine)(nil)

// New returns an engine that reviews as the specialist name through the
// endpoint cfg describes.
func New(cfg Config, name string, opts ...Option) (*Engine, error) {
	if name == "" {
		return nil, errors.New("llm: no specialist name")
	}
	if cfg.Model == "" {
		return nil, errors.New("llm: no model")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not quoted whole: it could carry credentials.
		return nil, errors.New("llm: base URL must be an absolute http or https URL")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	switch cfg.MaxTokensField {
	case "":
		cfg.MaxTokensField = MaxCompletionTokens
	case MaxCompletionTokens, MaxTokens:
	default:
		return nil, fmt.Errorf("llm: max tokens field %q is neither %s nor %s", cfg.MaxTokensField, MaxCompletionTokens, MaxTokens)
	}
	switch cfg.ResponseFormat {
	case "":
		cfg.ResponseFormat = FormatJSONSchema
	case FormatJSONSchema, FormatJSONObject:
	default:
		return nil, fmt.Errorf("llm: response format %q is neither %s nor %s", cfg.ResponseFormat, FormatJSONSchema, FormatJSONObject)
	}
	if cfg.ContextTokens == 0 {
		cfg.ContextTokens = DefaultContextTokens
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Timeout < 0 || cfg.MaxTokens < 0 || cfg.ContextTokens < 0 || cfg.MaxRetryAfter < 0 || cfg.Concurrency < 0 {
		return nil, errors.New("llm: negative limit in config")
	}
	e := &Engine{
		cfg:      cfg,
		name:     name,
		focus:    focuses[name],
		endpoint: u.String(),
		// Redirects are not followed: the key would go along to wherever
		// the redirect points (Go drops only Authorization across hosts,
		// not an api-key header).
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		log:   slog.New(slog.DiscardHandler),
		now:   time.Now,
		sleep: sleepCtx,
	}
	for _, o := range opts {
		o(e)
	}
	if e.focus == "" {
		e.focus = genericFocus(name)
	}
	if e.promptBudget() < minimumPromptBudget {
		return nil, fmt.Errorf("llm: context of %d tokens leaves too little room for a prompt beside an answer of %d", cfg.ContextTokens, cfg.MaxTokens)
	}
	return e, nil
}

// Name returns the specialist's name.
func (e *Engine) Name() string { return e.name }

// Review asks the model about the change, one request per chunk of files
// that fits the context window, and returns the findings that land on the
// change's added or modified lines (or on a changed file as a whole).
func (e *Engine) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	chunks := e.chunks(c)
	results := make([][]specialist.Finding, len(chunks))
	errs := make([]error, len(chunks))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, e.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, ch := range chunks {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			results[i], errs[i] = e.reviewChunk(ctx, c, ch, i, len(chunks))
			if errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	// The first error in chunk order that is not only the cancellation
	// another chunk's failure caused.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		return nil, fmt.Errorf("llm %s: %w", e.name, first)
	}
	var all []specialist.Finding
	for _, r := range results {
		all = append(all, r...)
	}
	// Every file of the change went to the model, whole or in parts.
	for _, f := range c.Files {
		if f.Status != change.StatusDeleted {
			specialist.Analysed(ctx, "llm", f.NewPath)
		}
	}
	return dedupe(all), nil
}

// reviewChunk sends one chunk and converts its answer.
func (e *Engine) reviewChunk(ctx context.Context, c *change.Change, ch chunk, i, n int) ([]specialist.Finding, error) {
	content, err := e.complete(ctx, e.messages(ch), fmt.Sprintf("%d/%d", i+1, n))
	if err != nil {
		if n > 1 {
			return nil, fmt.Errorf("chunk %d of %d: %w", i+1, n, err)
		}
		return nil, err
	}
	raws, err := parseAnswer(content)
	if err != nil {
		return nil, err
	}
	return e.findings(ctx, c, raws), nil
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
