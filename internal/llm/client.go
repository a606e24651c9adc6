package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
)

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
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

// chatResponse is the chat completion object, as far as the engine reads it.
type chatResponse struct {
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
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

// complete sends messages and returns the answer's content, retrying once
// after a 429, a 5xx, a timeout or a connection failure.
func (e *Engine) complete(ctx context.Context, msgs []message, chunk string) (string, error) {
	body, err := json.Marshal(e.request(msgs))
	if err != nil {
		return "", fmt.Errorf("encode request: %w", err)
	}
	for attempt := 1; ; attempt++ {
		content, wait, err := e.attempt(ctx, body, chunk, attempt)
		if err == nil || attempt == 2 || wait < 0 {
			return content, err
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
	}
}

// request builds the request body.
func (e *Engine) request(msgs []message) chatRequest {
	r := chatRequest{Model: e.cfg.Model, Messages: msgs, Temperature: 0}
	if e.cfg.MaxTokensField == MaxTokens {
		r.MaxTokens = e.cfg.MaxTokens
	} else {
		r.MaxCompletionTokens = e.cfg.MaxTokens
	}
	if e.cfg.ResponseFormat == FormatJSONObject {
		r.ResponseFormat = &responseFormat{Type: FormatJSONObject}
	} else {
		r.ResponseFormat = &responseFormat{Type: FormatJSONSchema, JSONSchema: &jsonSchema{Name: "findings", Strict: true, Schema: findingsSchema}}
	}
	return r
}

// attempt makes one request. wait >= 0 means the failure may be retried
// after wait; wait < 0 that it may not.
func (e *Engine) attempt(ctx context.Context, body []byte, chunk string, attempt int) (content string, wait time.Duration, err error) {
	start := e.now()
	rctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", -1, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.cfg.APIKey != "" {
		if e.cfg.APIKeyHeader == "" {
			req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
		} else {
			req.Header.Set(e.cfg.APIKeyHeader, e.cfg.APIKey)
		}
	}
	resp, err := e.http.Do(req)
	if err != nil {
		e.logAttempt(ctx, chunk, attempt, 0, start, err)
		if ctx.Err() != nil {
			return "", -1, e.redact(ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) || rctx.Err() != nil {
			return "", defaultRetryBackoff, fmt.Errorf("request timed out after %s", e.cfg.Timeout)
		}
		// url.Error names the endpoint, which is config, not a secret; the
		// key is in a header and never in err, but redact to be sure.
		return "", defaultRetryBackoff, e.redact(fmt.Errorf("send request: %w", err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize+1))
	if err == nil && len(data) > maxResponseSize {
		err = fmt.Errorf("response larger than %d bytes", maxResponseSize)
	}
	if err != nil {
		e.logAttempt(ctx, chunk, attempt, resp.StatusCode, start, err)
		if ctx.Err() != nil {
			return "", -1, ctx.Err()
		}
		if rctx.Err() != nil {
			return "", defaultRetryBackoff, fmt.Errorf("request timed out after %s reading the response", e.cfg.Timeout)
		}
		return "", -1, e.redact(fmt.Errorf("read response: %w", err))
	}
	if resp.StatusCode/100 != 2 {
		apiErr := e.apiError(resp, data)
		e.logAttempt(ctx, chunk, attempt, resp.StatusCode, start, apiErr)
		switch {
		case resp.StatusCode == http.StatusTooManyRequests:
			return "", max(apiErr.RetryAfter, defaultRetryBackoff), apiErr
		case resp.StatusCode >= 500:
			return "", max(apiErr.RetryAfter, defaultRetryBackoff), apiErr
		default:
			return "", -1, apiErr
		}
	}
	e.logAttempt(ctx, chunk, attempt, resp.StatusCode, start, nil)
	content, err = e.answer(data)
	return content, -1, err
}

// answer takes the content out of a successful response.
func (e *Engine) answer(data []byte) (string, error) {
	var r chatResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return "", fmt.Errorf("%w: not a chat completion: %v", ErrMalformed, err)
	}
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
