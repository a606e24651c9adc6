package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/llm/llmtest"
	"github.com/quorum-review/quorum/internal/specialist"
)

// exchange is one request to the real server and what it answered.
type exchange struct {
	method, path string
	body         map[string]any
	status       int
	answer       string
}

// recorder is an HTTP transport that keeps every exchange.
type recorder struct {
	mu   sync.Mutex
	seen []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	x := exchange{method: req.Method, path: req.URL.Path}
	if req.Body != nil {
		data, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(data, &x.body)
		req.Body = io.NopCloser(bytes.NewReader(data))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(data))
		x.status, x.answer = resp.StatusCode, string(data)
	}
	r.mu.Lock()
	r.seen = append(r.seen, x)
	r.mu.Unlock()
	return resp, err
}

func (r *recorder) chats() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []exchange
	for _, x := range r.seen {
		if x.method == http.MethodPost {
			out = append(out, x)
		}
	}
	return out
}

// TestRealServer runs the engine against llama-cpp-python's server and a
// small model (scripts/llm/install): the server rejects json_schema with
// a 500, and the engine goes on with json_object, once per server; the
// answer is parsed and its findings land on changed lines; the prompt's
// size the server counted is in the note; the server's error for a prompt
// over its context (whose size its model list does not say) reads as the
// engine expects. The model's judgement is not under test.
func TestRealServer(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Options{ContextTokens: 2048})
	rec := &recorder{}
	servers := NewServers()
	cfg := Config{BaseURL: srv.BaseURL, Model: srv.Model, MaxTokens: 300, Timeout: 2 * time.Minute}
	engine := func(name string) *Engine {
		e, err := New(cfg, name, WithServers(servers), WithHTTPClient(&http.Client{Transport: rec}))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	review := func(e *Engine, c *change.Change) ([]specialist.Finding, []string) {
		t.Helper()
		var mu sync.Mutex
		var notes []string
		ctx := specialist.WithNotes(context.Background(), func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() })
		begin := time.Now()
		got, err := e.Review(ctx, c)
		if err != nil {
			t.Fatalf("Review: %v (%v)\nexchanges: %+v", err, errorsUnwrap(err), rec.chats())
		}
		t.Logf("review by %s: %s, %d findings", e.Name(), time.Since(begin).Round(time.Millisecond), len(got))
		for _, f := range got {
			file := fileOf(c, f.Path)
			if file == nil || (f.Line != 0 && !file.Changed(f.Line)) {
				t.Errorf("finding %s:%d is not on a changed line", f.Path, f.Line)
			}
			if f.Model != srv.Model || f.Engine != specialist.EngineLLM {
				t.Errorf("finding %+v does not name the model and engine", f)
			}
		}
		return got, notes
	}

	_, c := smallChange(t)
	_, notes := review(engine(specialist.Security), c)
	chats := rec.chats()
	if len(chats) != 2 {
		t.Fatalf("%d chat requests, want 2 (json_schema, rejected; json_object): %+v", len(chats), chats)
	}
	if chats[0].status != http.StatusInternalServerError || !strings.Contains(chats[0].answer, "response_format") {
		t.Errorf("the server answered json_schema with %d %s; the fallback is built on a 500 naming response_format", chats[0].status, chats[0].answer)
	}
	rf, _ := chats[1].body["response_format"].(map[string]any)
	if chats[1].status != http.StatusOK || rf["type"] != FormatJSONObject || chats[1].body["max_tokens"] != float64(300) || chats[1].body["model"] != srv.Model {
		t.Errorf("second request: %d, body %v", chats[1].status, chats[1].body)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "tokens in 1 request") || strings.Contains(notes[0], "about") ||
		!strings.Contains(notes[0], "so they were asked for as json_object") {
		t.Errorf("notes %q, want the counted prompt size and the fallback", notes)
	}

	t.Logf("the server counted the first prompt: %s", chats[1].answer[strings.LastIndex(chats[1].answer, `"usage"`):])

	// A prompt larger than the server's context: its error names the
	// window and the prompt's tokens in the words the engine reads
	// (TestContextFromOverflowError splits a change again on them; that
	// is not repeated here, where every request costs seconds of CPU).
	e := engine(specialist.Logic)
	huge := strings.Repeat("func f(x int) int { return x*2 + 1 }\n", 400)
	body, _ := json.Marshal(e.request([]message{{Role: "user", Content: huge}}, FormatJSONObject, MaxTokens, 300))
	resp, err := http.Post(e.endpoint, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	window, prompt, ok := overflow(e.apiError(resp, data))
	if !ok || window != 2048 || prompt < 2048 {
		t.Errorf("the server's overflow error %d %s reads as window %d, prompt %d", resp.StatusCode, data, window, prompt)
	}
	t.Logf("the server's answer to a prompt over its context: %d %s", resp.StatusCode, data)
}

func fileOf(c *change.Change, path string) *change.File {
	for _, f := range c.Files {
		if f.Path() == path {
			return f
		}
	}
	return nil
}

func errorsUnwrap(err error) error {
	if f, ok := err.(*Failure); ok {
		return f.Err
	}
	return err
}
