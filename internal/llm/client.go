package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors a review can fail with, besides *APIError and transport errors.
var (
	// ErrTruncated: the answer hit the token limit (finish_reason "length")
	// and its JSON is incomplete.
	ErrTruncated = errors.New("answer truncated at the token limit")
	// ErrRefused: the model refused the request (the message's refusal
	// field, or finish_reason "content_filter").
	ErrRefused = errors.New("model refused")
	// ErrNoChoices: the response held no choice.
	ErrNoChoices = errors.New("response has no choices")
	// ErrMalformed: the response or the answer in it is not what the
	// protocol or the findings schema says.
	ErrMalformed = errors.New("malformed response")
	// errEndedEarly: a streamed answer ended before its end (the
	// connection dropped, or the server stopped writing).
	errEndedEarly = errors.New("the answer's stream ended early")
	// errUnreachable: no connection to the server (refused, reset, a
	// name that does not resolve).
	errUnreachable = errors.New("server unreachable")
)

// timeoutError is a request that had no (whole) answer within the
// request time limit.
type timeoutError struct {
	after   time.Duration
	reading bool
}

func (t *timeoutError) Error() string {
	if t.reading {
		return fmt.Sprintf("request timed out after %s reading the response", t.after)
	}
	return fmt.Sprintf("request timed out after %s", t.after)
}

// APIError is an HTTP error the endpoint answered with, carrying the API's
// own error message (OpenAI's {"error": {"message", "type", "param",
// "code"}}).
type APIError struct {
	StatusCode int
	Type       string
	Code       string
	Message    string
	// RetryAfter is what the server asked to wait, when it said.
	RetryAfter time.Duration
	// body is the start of the response, in lower case, read to tell
	// whether the server rejects the response format or the token field
	// (which a validation dump may name past what Message keeps).
	body string
}

// Error says the status, the API's error type and code, and its message.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
	if e.Type != "" || e.Code != "" {
		b.WriteString(" (")
		b.WriteString(strings.Trim(e.Type+"/"+e.Code, "/"))
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// chatRequest is the body of POST /chat/completions, as far as the engine
// uses it.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []message       `json:"messages"`
	Temperature         float64         `json:"temperature"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *jsonSchema     `json:"json_schema,omitempty"`
	Schema     json.RawMessage `json:"schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

// chatResponse is the chat completion object, as far as the engine reads it.
type chatResponse struct {
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
}

// choice is one of a completion's answers; the engine asks for one.
type choice struct {
	Index   int `json:"index"`
	Message struct {
		Role    string  `json:"role"`
		Content *string `json:"content"`
		Refusal *string `json:"refusal"`
	} `json:"message"`
	FinishReason string `json:"finish_reason"`
}

// usage is what the server counted of one request.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type errorResponse struct {
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		// Code is a string at OpenAI and a number at some servers.
		Code json.RawMessage `json:"code"`
	} `json:"error"`
}

// maxResponseSize bounds what is read of a response.
const maxResponseSize = 8 << 20

// complete asks about one chunk and returns the answer's content. It
// retries once after a 429, a 5xx, a timeout or a connection failure, and
// moves the server on to the next response format or the other token
// field when it rejects the one sent (which is not a retry: the server
// answered, and what it rejected is remembered).
func (e *Engine) complete(ctx context.Context, ch chunk, label string, p plan, st *stats) (string, error) {
	estimate := -1
	retried := false
	var last error
	for attempt := 1; ; attempt++ {
		format, field := e.servers.protocol(e.facts)
		stream := e.servers.streams(e.facts)
		msgs := e.messages(ch, format, p.known)
		// The most the request can take of the review's budget: its
		// prompt, in the server's tokens as far as they are known, and
		// the longest answer asked for.
		held := int(float64(promptTokensEstimate(msgs))*p.ratio) + 1 + p.answer
		if !e.budget.hold(held) {
			if last != nil {
				return "", fmt.Errorf("%w (no budget left for a retry)", last)
			}
			return "", errOverBudget
		}
		if estimate < 0 {
			estimate = promptTokensEstimate(msgs)
			st.asked(estimate)
		}
		body, err := json.Marshal(e.request(msgs, format, field, p.answer, stream))
		if err != nil {
			e.budget.settle(held, 0)
			return "", fmt.Errorf("encode request: %w", err)
		}
		content, u, wait, err := e.attempt(ctx, body, label, attempt)
		// What the request took: all the server counted, or what it
		// answered, even cut short or refused; a request that failed
		// without either took nothing the engine can know of.
		took := 0
		if err == nil || content != "" || u != nil {
			took = tokensTaken(held-p.answer, content, u)
		}
		e.budget.settle(held, took)
		last = err
		if stream && errors.Is(err, errInterrupted) {
			// Not a retry: the server cut the stream for another request,
			// and answers whole ones uncut. Only a streamed request is
			// asked again so: a server that streams, and interrupts, when
			// asked for a whole answer would be asked again without end.
			if e.servers.streamRejected(e.facts) {
				e.log.InfoContext(ctx, "llm: the server interrupts streamed answers; asking for whole answers", "model", e.cfg.Model)
			}
			continue
		}
		if content != "" && atTimeLimit(err) && len(salvage(content)) > 0 {
			// The time limit cut a streamed answer after some findings
			// were complete: they are the answer, rather than a retry
			// that would have less time still. A stream that ended early
			// otherwise (a dropped connection, a broken event) is retried
			// or fails as a whole answer would.
			st.answered(estimate, u, format)
			return content, fmt.Errorf("%w: %w", errStopped, err)
		}
		if err == nil {
			if u != nil && u.CompletionTokens > p.answer {
				// The server answered at more length than asked: it
				// ignores the field. The next request sends the other.
				if next, ok := e.servers.fieldRejected(e.facts, field); ok && next != field {
					e.log.InfoContext(ctx, "llm: the server ignores the token field; switching", "model", e.cfg.Model, "ignored", field, "next", next)
				}
			}
			if u != nil {
				e.servers.counted(e.facts, estimate, u.PromptTokens)
			}
			st.answered(estimate, u, format)
			return content, nil
		}
		if errors.Is(err, ErrTruncated) {
			st.answered(estimate, u, format)
			return content, err
		}
		if _, tokens, ok := overflow(err); ok {
			e.servers.counted(e.facts, estimate, tokens)
		}
		var ae *APIError
		if errors.As(err, &ae) && rejects(ae, formatWords(format)) {
			if next, ok := e.servers.formatRejected(e.facts, format); ok {
				e.log.InfoContext(ctx, "llm: the server rejects the response format; falling back", "model", e.cfg.Model, "rejected", format, "next", next, "status", ae.StatusCode)
				continue
			}
		}
		if errors.As(err, &ae) && rejects(ae, []string{field}) {
			if next, ok := e.servers.fieldRejected(e.facts, field); ok {
				e.log.InfoContext(ctx, "llm: the server rejects the token field; switching", "model", e.cfg.Model, "rejected", field, "next", next, "status", ae.StatusCode)
				continue
			}
		}
		if stream && errors.As(err, &ae) && rejects(ae, []string{"stream"}) && streamWord.MatchString(ae.body) {
			if e.servers.streamRejected(e.facts) {
				e.log.InfoContext(ctx, "llm: the server rejects streaming; asking for whole answers", "model", e.cfg.Model, "status", ae.StatusCode)
			}
			continue
		}
		if retried || wait < 0 {
			return "", err
		}
		if ctx.Err() != nil {
			return "", err
		}
		if wait > e.cfg.MaxRetryAfter {
			return "", fmt.Errorf("%w (server asks to wait %s, longer than the %s allowed)", err, wait, e.cfg.MaxRetryAfter)
		}
		if dl, ok := ctx.Deadline(); ok && e.now().Add(wait).After(dl) {
			return "", fmt.Errorf("%w (no time left to wait %s before a retry)", err, wait)
		}
		if serr := e.sleep(ctx, wait); serr != nil {
			return "", err
		}
		retried = true
	}
}

// atTimeLimit reports whether err is the request's or the review's time
// limit.
func atTimeLimit(err error) bool {
	var te *timeoutError
	return errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded)
}

// tokensTaken is what an answered request took: the server's count when
// it gave one, else the estimates of prompt and answer.
func tokensTaken(prompt int, content string, u *usage) int {
	// A negative count is no count: added to another, it would give
	// back what the request took.
	if u != nil && u.PromptTokens >= 0 && u.CompletionTokens >= 0 && u.PromptTokens+u.CompletionTokens > 0 {
		return u.PromptTokens + u.CompletionTokens
	}
	return prompt + len(content)/charsPerTokenEstimate + 1
}

// streamWord is how an error names the stream parameter: not a proxy's
// "upstream", whose failure is a 500 like a rejection's.
var streamWord = regexp.MustCompile(`(^|[^a-z])stream`)

// formatWords are what a server's error names when it rejects format.
// llama-cpp-python's server, asked for json_schema, answers 500 with a
// validation dump that names response_format and the types it accepts.
func formatWords(format string) []string {
	switch format {
	case FormatJSONSchema:
		return []string{"response_format", "json_schema"}
	case FormatJSONObject:
		return []string{"response_format", "json_object"}
	}
	return nil
}

// rejects reports whether an error response rejects the request for one of
// words: a 400, 422 or 500 (servers that validate late answer 500) whose
// body names it.
func rejects(ae *APIError, words []string) bool {
	if ae.StatusCode != http.StatusBadRequest && ae.StatusCode != http.StatusUnprocessableEntity && ae.StatusCode != http.StatusInternalServerError {
		return false
	}
	for _, w := range words {
		if strings.Contains(ae.body, w) {
			return true
		}
	}
	return false
}

// promptTokensEstimate estimates a prompt's tokens without the model's
// tokenizer.
func promptTokensEstimate(msgs []message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
	}
	return n/charsPerTokenEstimate + 1
}

// request builds the request body.
func (e *Engine) request(msgs []message, format, field string, answer int, stream bool) chatRequest {
	r := chatRequest{Model: e.cfg.Model, Messages: msgs, Temperature: 0}
	if stream {
		r.Stream, r.StreamOptions = true, &streamOptions{IncludeUsage: true}
	}
	if field == MaxTokens {
		r.MaxTokens = answer
	} else {
		r.MaxCompletionTokens = answer
	}
	switch format {
	case FormatJSONSchema:
		r.ResponseFormat = &responseFormat{Type: FormatJSONSchema, JSONSchema: &jsonSchema{Name: "findings", Strict: true, Schema: findingsSchema}}
	case FormatJSONObject:
		// The schema beside json_object is llama.cpp's extension (its
		// server and llama-cpp-python's constrain the answer to it with a
		// grammar); other servers ignore it, and one that rejects it is
		// asked with the schema in the prompt alone.
		r.ResponseFormat = &responseFormat{Type: FormatJSONObject, Schema: findingsSchema}
	}
	return r
}

// attempt makes one request. wait >= 0 means the failure may be retried
// after wait; wait < 0 that it may not. A streamed answer that a time
// limit or a dropped connection ended early comes with its error and the
// text read so far.
func (e *Engine) attempt(ctx context.Context, body []byte, chunk string, attempt int) (content string, u *usage, wait time.Duration, err error) {
	start := e.now()
	rctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", nil, -1, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	e.authorize(req)
	resp, err := e.http.Do(req)
	if err != nil {
		e.logAttempt(ctx, chunk, attempt, 0, start, err)
		if ctx.Err() != nil {
			return "", nil, -1, e.redact(ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) || rctx.Err() != nil {
			return "", nil, defaultRetryBackoff, &timeoutError{after: e.cfg.Timeout}
		}
		// url.Error names the endpoint, which is config, not a secret; the
		// key is in a header and never in err, but redact to be sure.
		return "", nil, defaultRetryBackoff, e.redact(fmt.Errorf("%w: send request: %w", errUnreachable, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 && isEventStream(resp.Header.Get("Content-Type")) {
		return e.streamed(ctx, rctx, resp, chunk, attempt, start)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize+1))
	if err == nil && len(data) > maxResponseSize {
		err = fmt.Errorf("response larger than %d bytes", maxResponseSize)
	}
	if err != nil {
		e.logAttempt(ctx, chunk, attempt, resp.StatusCode, start, err)
		if ctx.Err() != nil {
			return "", nil, -1, ctx.Err()
		}
		if rctx.Err() != nil {
			return "", nil, defaultRetryBackoff, &timeoutError{after: e.cfg.Timeout, reading: true}
		}
		return "", nil, -1, e.redact(fmt.Errorf("%w: read response: %w", errUnreachable, err))
	}
	if resp.StatusCode/100 != 2 {
		apiErr := e.apiError(resp, data)
		e.logAttempt(ctx, chunk, attempt, resp.StatusCode, start, apiErr)
		switch {
		case resp.StatusCode == http.StatusTooManyRequests:
			return "", nil, max(apiErr.RetryAfter, defaultRetryBackoff), apiErr
		case resp.StatusCode >= 500:
			return "", nil, max(apiErr.RetryAfter, defaultRetryBackoff), apiErr
		default:
			return "", nil, -1, apiErr
		}
	}
	e.logAttempt(ctx, chunk, attempt, resp.StatusCode, start, nil)
	content, u, err = e.answer(data)
	return content, u, -1, err
}

// streamed reads a streamed answer. An error while reading is classified
// as a whole answer's would be (the review's end, the request's time
// limit, a lost connection), with the text so far beside it.
func (e *Engine) streamed(ctx, rctx context.Context, resp *http.Response, chunk string, attempt int, start time.Time) (string, *usage, time.Duration, error) {
	r, whole, err := readStream(resp.Body, e.clip)
	var content string
	if len(r.Choices) > 0 && r.Choices[0].Message.Content != nil {
		content = *r.Choices[0].Message.Content
	}
	if err == nil && !whole {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		e.logAttempt(ctx, chunk, attempt, resp.StatusCode, start, err)
		switch {
		case ctx.Err() != nil:
			return content, r.Usage, -1, ctx.Err()
		case rctx.Err() != nil:
			return content, r.Usage, defaultRetryBackoff, &timeoutError{after: e.cfg.Timeout, reading: true}
		case errors.Is(err, ErrMalformed), errors.Is(err, ErrNoChoices), errors.Is(err, errInterrupted):
			return content, r.Usage, -1, e.redact(err)
		}
		return content, r.Usage, defaultRetryBackoff, e.redact(fmt.Errorf("%w: %w", errEndedEarly, err))
	}
	e.logAttempt(ctx, chunk, attempt, resp.StatusCode, start, nil)
	content, err = e.content(r, nil)
	return content, r.Usage, -1, err
}

// authorize puts the API key on a request, when there is one.
func (e *Engine) authorize(req *http.Request) {
	if e.cfg.APIKey == "" {
		return
	}
	if e.cfg.APIKeyHeader == "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	} else {
		req.Header.Set(e.cfg.APIKeyHeader, e.cfg.APIKey)
	}
}

// answer takes the content out of a successful response.
func (e *Engine) answer(data []byte) (string, *usage, error) {
	var r chatResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return "", nil, fmt.Errorf("%w: not a chat completion: %v", ErrMalformed, err)
	}
	content, err := e.content(r, data)
	return content, r.Usage, err
}

// content is the answer's text, or why there is none.
func (e *Engine) content(r chatResponse, data []byte) (string, error) {
	if len(r.Choices) == 0 {
		// Some proxies answer an error object with status 200.
		var er errorResponse
		if json.Unmarshal(data, &er) == nil && er.Error != nil && er.Error.Message != "" {
			return "", fmt.Errorf("%w: %s", ErrNoChoices, e.clip(er.Error.Message))
		}
		return "", ErrNoChoices
	}
	ch := r.Choices[0]
	if ch.Message.Refusal != nil && *ch.Message.Refusal != "" {
		return "", fmt.Errorf("%w: %s", ErrRefused, e.clip(*ch.Message.Refusal))
	}
	switch ch.FinishReason {
	case "length":
		// The text so far goes along: findings complete before the cut
		// can still be read (a small model may write at length).
		if ch.Message.Content != nil {
			return *ch.Message.Content, ErrTruncated
		}
		return "", ErrTruncated
	case "content_filter":
		return "", fmt.Errorf("%w: content filter", ErrRefused)
	}
	if ch.Message.Content == nil || strings.TrimSpace(*ch.Message.Content) == "" {
		return "", fmt.Errorf("%w: empty answer (finish_reason %q)", ErrMalformed, ch.FinishReason)
	}
	return *ch.Message.Content, nil
}

// apiError reads an error response: OpenAI's error object when the body is
// one, else the start of the body as text.
func (e *Engine) apiError(resp *http.Response, data []byte) *APIError {
	ae := &APIError{StatusCode: resp.StatusCode, RetryAfter: e.retryAfter(resp.Header)}
	var er errorResponse
	if json.Unmarshal(data, &er) == nil && er.Error != nil {
		ae.Message, ae.Type = er.Error.Message, er.Error.Type
		var s string
		if json.Unmarshal(er.Error.Code, &s) == nil {
			ae.Code = s
		} else if len(er.Error.Code) > 0 && string(er.Error.Code) != "null" {
			ae.Code = string(er.Error.Code)
		}
	} else {
		ae.Message = strings.TrimSpace(string(data))
	}
	const bodyKept = 64 << 10
	ae.body = strings.ToLower(string(data[:min(len(data), bodyKept)]))
	ae.Message = e.clip(ae.Message)
	ae.Type, ae.Code = e.clip(ae.Type), e.clip(ae.Code)
	return ae
}

// retryAfter reads OpenAI's retry-after-ms, or Retry-After in seconds or as
// an HTTP date; 0 when absent or unreadable.
func (e *Engine) retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(e.now()), 0)
	}
	return 0
}

// clip makes text from the server safe to put in an error: the key
// removed (a proxy may echo headers), one line, bounded.
func (e *Engine) clip(s string) string {
	if e.cfg.APIKey != "" {
		s = strings.ReplaceAll(s, e.cfg.APIKey, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	const limit = 500
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// redact removes the key from an error's text.
func (e *Engine) redact(err error) error {
	if err == nil || e.cfg.APIKey == "" || !strings.Contains(err.Error(), e.cfg.APIKey) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), e.cfg.APIKey, "[redacted]"))
}

func (e *Engine) logAttempt(ctx context.Context, chunk string, attempt, status int, start time.Time, err error) {
	attrs := []any{"specialist", e.name, "model", e.cfg.Model, "chunk", chunk, "attempt", attempt, "status", status, "duration", e.now().Sub(start)}
	if err != nil {
		e.log.WarnContext(ctx, "llm request failed", append(attrs, "err", e.redact(err))...)
		return
	}
	e.log.DebugContext(ctx, "llm request", attrs...)
}
