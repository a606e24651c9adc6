package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/specialist"
)

// llamaCppFormatError is what llama-cpp-python's server (0.3.36) answers,
// with status 500, to a request for json_schema: a validation dump that
// names response_format somewhere past its first lines, here with a path
// of the server's machine and a key, as such dumps may carry.
const llamaCppFormatError = `{"error": {"message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}, 'url': 'https://errors.pydantic.dev/2.10/v/literal_error'}] File /srv/models/private/app.py line 42, OPENAI_API_KEY=sk-live-abcdef0123456789", "type": "internal_server_error", "param": null, "code": null}}`

// notes runs a review with a note sink and returns the notes.
func reviewWithNotes(t *testing.T, e *Engine) ([]specialist.Finding, []string, error) {
	t.Helper()
	_, c := smallChange(t)
	var mu sync.Mutex
	var notes []string
	ctx := specialist.WithNotes(context.Background(), func(n string) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, n)
	})
	got, err := e.Review(ctx, c)
	return got, notes, err
}

func formatOf(r seenRequest) string {
	rf, ok := r.Body["response_format"].(map[string]any)
	if !ok {
		return FormatPrompt
	}
	s, _ := rf["type"].(string)
	return s
}

// TestFormatFallback: json_schema rejected (500 naming response_format),
// json_object rejected (400 naming json_object): the answer is asked for in
// the prompt alone, and the next engine of the process starts there.
func TestFormatFallback(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) {
		switch formatOf(seenRequest{Body: req}) {
		case FormatJSONSchema:
			writeRawStatus(w, http.StatusInternalServerError, llamaCppFormatError)
		case FormatJSONObject:
			writeRawStatus(w, http.StatusBadRequest, apiErrorJSON("response_format json_object is not supported", "invalid_request_error", nil))
		default:
			writeRaw(w, answer(finding("store/store.go", 15, 15, "high", "security", "Query built by concatenation", nil)))
		}
	}
	servers := NewServers()
	e, ns, logs := newEngine(t, f, Config{}, specialist.Security, WithServers(servers))
	got, notes, err := reviewWithNotes(t, e)
	if err != nil || len(got) != 1 {
		t.Fatalf("Review = %v, %v; want one finding", got, err)
	}
	var formats []string
	for _, r := range f.seen() {
		formats = append(formats, formatOf(r))
	}
	if strings.Join(formats, ",") != "json_schema,json_object,prompt" {
		t.Errorf("formats asked: %v, want json_schema, json_object, prompt", formats)
	}
	if !strings.Contains(f.seen()[2].system(), `"suggested_replacement"`) {
		t.Error("the schema is not in the prompt of the last request")
	}
	if len(ns.recorded()) != 0 {
		t.Errorf("waited %v before a fallback; a rejected format is not a retry", ns.recorded())
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "the server does not take json_schema answers, so they were asked for as JSON described in the prompt") {
		t.Errorf("notes %q", notes)
	}
	if !strings.Contains(logs.String(), "rejects the response format") {
		t.Errorf("the fallback is not logged:\n%s", logs)
	}

	// A second engine of the process, for another specialist, asks in the
	// prompt at once.
	before := len(f.seen())
	e2, _, _ := newEngine(t, f, Config{}, specialist.Logic, WithServers(servers))
	if _, _, err := reviewWithNotes(t, e2); err != nil {
		t.Fatal(err)
	}
	after := f.seen()[before:]
	if len(after) != 1 || formatOf(after[0]) != FormatPrompt {
		t.Errorf("the second engine sent %d requests, the first as %s; want one, in the prompt", len(after), formatOf(after[0]))
	}
}

// TestFormatNotRejected: an error that names neither the format nor the
// token field is the review's failure, with no fallback.
func TestFormatNotRejected(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{status: 422, body: apiErrorJSON("messages: field required", "invalid_request_error", nil)})
	e, _, _ := newEngine(t, f, Config{}, specialist.Security)
	if _, _, err := reviewWithNotes(t, e); err == nil || err.Error() != "the LLM engine was unavailable: HTTP 422" {
		t.Fatalf("error %v", err)
	}
	if n := len(f.seen()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestTokenFieldFallback: max_completion_tokens rejected by name, then
// max_tokens, remembered; and a server that silently ignores the field
// (answers longer than asked) is switched too.
func TestTokenFieldFallback(t *testing.T) {
	t.Parallel()
	fieldOf := func(r seenRequest) string {
		if _, ok := r.Body["max_tokens"]; ok {
			return MaxTokens
		}
		return MaxCompletionTokens
	}
	t.Run("rejected", func(t *testing.T) {
		t.Parallel()
		f := newFakeAPI(t)
		f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) {
			if fieldOf(seenRequest{Body: req}) == MaxCompletionTokens {
				writeRawStatus(w, http.StatusUnprocessableEntity, `{"detail": [{"loc": ["body", "max_completion_tokens"], "msg": "extra fields not permitted"}]}`)
				return
			}
			writeRaw(w, answer())
		}
		servers := NewServers()
		e, _, _ := newEngine(t, f, Config{MaxTokens: 700, MaxTokensField: MaxCompletionTokens}, specialist.Logic, WithServers(servers))
		if _, _, err := reviewWithNotes(t, e); err != nil {
			t.Fatal(err)
		}
		e2, _, _ := newEngine(t, f, Config{MaxTokens: 700, MaxTokensField: MaxCompletionTokens}, specialist.Tests, WithServers(servers))
		if _, _, err := reviewWithNotes(t, e2); err != nil {
			t.Fatal(err)
		}
		var fields []string
		for _, r := range f.seen() {
			fields = append(fields, fieldOf(r))
		}
		if strings.Join(fields, ",") != "max_completion_tokens,max_tokens,max_tokens" {
			t.Errorf("fields sent: %v", fields)
		}
		if last := f.seen()[2]; last.Body["max_tokens"] != float64(700) {
			t.Errorf("max_tokens %v, want 700", last.Body["max_tokens"])
		}
	})
	t.Run("max_tokens rejected", func(t *testing.T) {
		t.Parallel()
		// OpenAI's answer to max_tokens for a reasoning model.
		f := newFakeAPI(t)
		f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) {
			if fieldOf(seenRequest{Body: req}) == MaxTokens {
				writeRawStatus(w, http.StatusBadRequest, apiErrorJSON("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "invalid_request_error", "unsupported_parameter"))
				return
			}
			writeRaw(w, answer())
		}
		e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
		if _, _, err := reviewWithNotes(t, e); err != nil {
			t.Fatal(err)
		}
		reqs := f.seen()
		if len(reqs) != 2 || fieldOf(reqs[0]) != MaxTokens || fieldOf(reqs[1]) != MaxCompletionTokens {
			t.Errorf("want max_tokens, then max_completion_tokens; got %d requests", len(reqs))
		}
	})
	t.Run("ignored", func(t *testing.T) {
		t.Parallel()
		f := newFakeAPI(t)
		long := `{"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"findings\": []}"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 900, "completion_tokens": 1500, "total_tokens": 2400}}`
		f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) { writeRaw(w, long) }
		servers := NewServers()
		for _, name := range []string{specialist.Logic, specialist.Tests} {
			e, _, _ := newEngine(t, f, Config{MaxTokens: 1000, MaxTokensField: MaxCompletionTokens}, name, WithServers(servers))
			if _, _, err := reviewWithNotes(t, e); err != nil {
				t.Fatal(err)
			}
		}
		reqs := f.seen()
		if len(reqs) != 2 || fieldOf(reqs[0]) != MaxCompletionTokens || fieldOf(reqs[1]) != MaxTokens {
			t.Errorf("want max_completion_tokens, then max_tokens after an answer of 1500 tokens for 1000 asked")
		}
	})
}

// TestContextFromModelList: the context window comes from the server's
// model list (vLLM's max_model_len), asked once per server, and the notes
// say how large the prompt was and that the change was split.
func TestContextFromModelList(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{body: answer()})
	f.models = `{"object": "list", "data": [{"id": "other", "object": "model", "max_model_len": 100000}, {"id": "test-model", "object": "model", "max_model_len": 2600}]}`
	servers := NewServers()
	e, _, _ := newEngine(t, f, Config{MaxTokens: 300}, specialist.Logic, WithServers(servers))
	r := newRepo(t)
	base := r.commit(map[string]string{"keep.txt": "x\n"})
	files := map[string]string{}
	for i := range 4 {
		files["f"+string(rune('a'+i))+".txt"] = strings.Repeat("a line of text that the model will read, of some length\n", 30)
	}
	c := r.Change(base, r.commit(files))
	var notes []string
	ctx := specialist.WithNotes(context.Background(), func(n string) { notes = append(notes, n) })
	if _, err := e.Review(ctx, c); err != nil {
		t.Fatal(err)
	}
	n := len(f.seen())
	if n < 2 {
		t.Fatalf("%d requests: the change was not split for a context of 2600 tokens", n)
	}
	for i, req := range f.seen() {
		if est := promptTokensEstimate([]message{{Content: req.system()}, {Content: req.user()}}); est+300 > 2600 {
			t.Errorf("request %d: about %d prompt tokens and 300 for the answer overflow 2600", i, est)
		}
	}
	// The fake counts 10 prompt tokens a request.
	want := "the LLM engine sent test-model a prompt of " + thousands(10*n) + " tokens in " + plural(n, "request") + " and had its answers in 0.0 s; the change was split to fit the model's context of 2,600 tokens (the server's model list)."
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q\nwant %q", notes, want)
	}
	e2, _, _ := newEngine(t, f, Config{MaxTokens: 300}, specialist.Tests, WithServers(servers))
	if _, err := e2.Review(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	asked := f.modelAsked
	f.mu.Unlock()
	if asked != 1 {
		t.Errorf("the model list was asked %d times, want once", asked)
	}
}

// TestSmallContextLimitsTheAnswer: a context too small for the default
// answer limit lowers it, and says so; a configured limit that does not fit
// is an error that says what to change.
func TestSmallContextLimitsTheAnswer(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{body: answer()})
	f.models = `{"object": "list", "data": [{"id": "test-model", "object": "model", "meta": {"n_ctx_train": 4096}}]}`
	e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
	_, notes, err := reviewWithNotes(t, e)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.seen()[0].Body["max_tokens"]; got != float64(1024) {
		t.Errorf("max_tokens %v, want 1024 (a quarter of 4096)", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "answers were limited to 1,024 tokens to leave room for the prompt") {
		t.Errorf("notes %q", notes)
	}

	e2, _, _ := newEngine(t, f, Config{MaxTokens: 3500}, specialist.Logic)
	_, _, err = reviewWithNotes(t, e2)
	if err == nil || !strings.Contains(err.Error(), "the model's context of 4,096 tokens is too small for a prompt") {
		t.Errorf("error %v", err)
	}
}

// TestFailureSummaryHoldsNoServerText: whatever the server says in its
// error goes to the log; the review's error, which the summary posted on
// the pull request quotes, is one short line without it.
func TestFailureSummaryHoldsNoServerText(t *testing.T) {
	t.Parallel()
	secretBits := []string{"/srv/models/private/app.py", "sk-live-abcdef0123456789", "pydantic", "Input should be"}
	for _, tc := range []struct {
		name, want string
		rep        reply
	}{
		{"500 that names no format", "the LLM engine was unavailable: HTTP 500",
			reply{status: 500, body: `{"error": {"message": "Traceback: File /srv/models/private/app.py, line 42: OPENAI_API_KEY=sk-live-abcdef0123456789 pydantic: Input should be valid", "type": "internal_server_error"}}`}},
		{"text body", "the LLM engine was unavailable: HTTP 502",
			reply{status: 502, body: "upstream /srv/models/private/app.py failed: sk-live-abcdef0123456789 (pydantic: Input should be ...)"}},
		{"error object with 200", "the LLM engine's answer was not usable: not the JSON asked for",
			reply{body: `{"error": {"message": "at /srv/models/private/app.py with sk-live-abcdef0123456789: pydantic Input should be"}}`}},
		{"refusal", "the LLM engine's model refused to answer",
			reply{body: completionWith(map[string]any{"role": "assistant", "content": nil, "refusal": "I will not read /srv/models/private/app.py or sk-live-abcdef0123456789 (pydantic: Input should be)"}, "stop")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, tc.rep)
			e, _, logs := newEngine(t, f, Config{}, specialist.Security)
			_, _, err := reviewWithNotes(t, e)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			for _, s := range secretBits {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the summary line carries %q", s)
				}
			}
			if !strings.Contains(logs.String(), "/srv/models/private/app.py") {
				t.Errorf("the log lacks the server's text:\n%s", logs)
			}
			var failure *Failure
			if !errors.As(err, &failure) {
				t.Errorf("error %T is not a *Failure", err)
			}
		})
	}
}

// TestServerGoneIsShort: a server that is not there is a short line too.
func TestServerGoneIsShort(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	base := f.baseURL()
	f.srv.Close()
	e, _, logs := newEngine(t, f, Config{BaseURL: base}, specialist.Security)
	_, _, err := reviewWithNotes(t, e)
	if err == nil || err.Error() != "the LLM engine was unavailable: no connection to the server" {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("the log does not say why:\n%s", logs)
	}
}

func writeRawStatus(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

// TestContextFromOverflowError: a server whose model list says nothing of
// the context (llama-cpp-python's) answers a prompt too large for it with
// OpenAI's context_length_exceeded error; the engine takes the window from
// it, splits the change again, and remembers it.
func TestContextFromOverflowError(t *testing.T) {
	t.Parallel()
	const window = 2200
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) {
		r := seenRequest{Body: req}
		est := promptTokensEstimate([]message{{Content: r.system()}, {Content: r.user()}})
		asked, _ := req["max_tokens"].(float64)
		if est+int(asked) > window {
			writeRawStatus(w, http.StatusBadRequest, apiErrorJSON(fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", window, est+int(asked), est, int(asked)), "invalid_request_error", "context_length_exceeded"))
			return
		}
		writeRaw(w, answer())
	}
	r := newRepo(t)
	base := r.commit(map[string]string{"keep.txt": "x\n"})
	files := map[string]string{}
	for i := range 4 {
		files[fmt.Sprintf("f%d.txt", i)] = strings.Repeat("a line of text that the model will read, of some length\n", 30)
	}
	c := r.Change(base, r.commit(files))
	servers := NewServers()
	e, _, _ := newEngine(t, f, Config{MaxTokens: 300}, specialist.Logic, WithServers(servers))
	var notes []string
	ctx := specialist.WithNotes(context.Background(), func(n string) { notes = append(notes, n) })
	if _, err := e.Review(ctx, c); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "the change was split to fit the model's context of 2,200 tokens (the server's error)") {
		t.Errorf("notes %q", notes)
	}
	before := len(f.seen())
	e2, _, _ := newEngine(t, f, Config{MaxTokens: 300}, specialist.Tests, WithServers(servers))
	if _, err := e2.Review(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	for _, req := range f.seen()[before:] {
		if est := promptTokensEstimate([]message{{Content: req.system()}, {Content: req.user()}}); est+300 > window {
			t.Errorf("the second review sent a prompt of about %d tokens, over the window it was told of", est)
		}
	}
}

// TestTruncatedAnswerKeepsCompleteFindings: an answer cut at the token
// limit after one whole finding keeps that finding and says so; one cut
// before any finding was whole fails the review (TestBadResponses).
func TestTruncatedAnswerKeepsCompleteFindings(t *testing.T) {
	t.Parallel()
	cut := `{"findings": [{"path": "store/store.go", "line": 15, "end_line": 15, "severity": "high", "category": "security", "headline": "Query built by concatenation", "body": "Use a placeholder.", "quote": "db.QueryRow(\"SELECT name FROM t WHERE name LIKE '\" + pattern", "suggested_replacement": null}, {"path": "store/store.go", "line": 16, "end_line": 16, "severity": "low", "category": "logic", "headline": "A long and rambling hea`
	f := newFakeAPI(t, reply{body: completion(cut, "length")})
	e, _, _ := newEngine(t, f, Config{MaxTokens: 300}, specialist.Security)
	got, notes, err := reviewWithNotes(t, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Line != 15 || got[0].Headline != "Query built by concatenation" {
		t.Errorf("findings %+v, want the one complete before the cut", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "1 answer was cut off at 300 tokens, and only the findings complete before the cut were kept") {
		t.Errorf("notes %q", notes)
	}
}

// TestSpecialistTimeLimit: a review that runs out of the specialist's
// time ends a little before it, with a line that says how much was sent.
func TestSpecialistTimeLimit(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) { <-r.Context().Done() }
	e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
	_, c := smallChange(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := e.Review(ctx, c)
	if ctx.Err() != nil {
		t.Errorf("the review returned after the specialist's deadline")
	}
	want := "the LLM engine ran out of the specialist's time after 0.0 s, with 1 request sent (a prompt of about "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want %q… wrapping context.DeadlineExceeded", err, want)
	}
}
