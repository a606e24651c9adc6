package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
// answer is streamed, parsed, and its findings land on changed lines; the
// prompt's size is in the note; the server's error for a prompt
// over its context (whose size its model list does not say) reads as the
// engine expects. The model's judgement is not under test.
func TestRealServer(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Options{ContextTokens: 2048})
	rec := &recorder{}
	servers := NewServers()
	// 220 tokens: the answer is cut either way (the model's review of this
	// change ran to 300 with no finding that held), and one cut before any
	// finding closes fails the review, so the first must close in time;
	// each token written against the JSON grammar costs the server about
	// 90 ms of CPU.
	cfg := Config{BaseURL: srv.BaseURL, Model: srv.Model, MaxTokens: 220, Timeout: 2 * time.Minute}
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
	if chats[1].status != http.StatusOK || rf["type"] != FormatJSONObject || chats[1].body["max_tokens"] != float64(220) || chats[1].body["model"] != srv.Model {
		t.Errorf("second request: %d, body %v", chats[1].status, chats[1].body)
	}
	// The answer was streamed: llama-cpp-python's server answers server-
	// sent events of chat.completion.chunk objects, which carry no usage,
	// so the prompt's size is the engine's estimate.
	if chats[1].body["stream"] != true || !strings.Contains(chats[1].answer, "data: {") || !strings.Contains(chats[1].answer, `"chat.completion.chunk"`) {
		t.Errorf("the second request was not answered as a stream: stream=%v, answer %.200q", chats[1].body["stream"], chats[1].answer)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "a prompt of about ") || !strings.Contains(notes[0], "tokens in 1 request") ||
		!strings.Contains(notes[0], "so they were asked for as json_object") {
		t.Errorf("notes %q, want the prompt size and the fallback", notes)
	}

	// A prompt larger than the server's context: its error names the
	// window and the prompt's tokens in the words the engine reads
	// (TestContextFromOverflowError splits a change again on them; that
	// is not repeated here, where every request costs seconds of CPU).
	e := engine(specialist.Logic)
	huge := strings.Repeat("func f(x int) int { return x*2 + 1 }\n", 400)
	body, _ := json.Marshal(e.request([]message{{Role: "user", Content: huge}}, FormatJSONObject, MaxTokens, 300, false))
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

// TestRealServerInterruptsStreams checks what TestServerRejectingStreams's
// double does against the real server: llama-cpp-python's server, as it
// runs by default, ends the answer it is streaming with [DONE] and no
// finish reason when another request arrives, and readStream reads that
// as an interruption. Two short requests, not two reviews: each review's
// prompt costs the server seconds of CPU.
func TestRealServerInterruptsStreams(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Options{})
	e, err := New(Config{BaseURL: srv.BaseURL, Model: srv.Model}, specialist.Logic)
	if err != nil {
		t.Fatal(err)
	}
	post := func(req chatRequest) *http.Response {
		t.Helper()
		body, _ := json.Marshal(req)
		resp, err := http.Post(e.endpoint, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			data, _ := io.ReadAll(resp.Body)
			t.Fatalf("%d %s", resp.StatusCode, data)
		}
		return resp
	}
	long := e.request([]message{{Role: "user", Content: "Count from one to two hundred in words."}}, FormatPrompt, MaxTokens, 400, true)
	resp := post(long)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !isEventStream(ct) {
		t.Fatalf("Content-Type %q, want a stream", ct)
	}
	// Once the answer is under way, another request arrives.
	br := bufio.NewReader(resp.Body)
	var head bytes.Buffer
	for !strings.Contains(head.String(), `"content": "`) {
		line, err := br.ReadString('\n')
		head.WriteString(line)
		if err != nil {
			t.Fatalf("the stream ended before its first word: %v\n%s", err, head.String())
		}
	}
	other := make(chan error, 1)
	go func() {
		r := post(e.request([]message{{Role: "user", Content: "Say yes."}}, FormatPrompt, MaxTokens, 3, false))
		_, err := io.Copy(io.Discard, r.Body)
		r.Body.Close()
		other <- err
	}()
	// The server sends [DONE] and then drops the connection without
	// ending its chunked body: the read ends in an unexpected EOF, after
	// the event readStream stops at.
	rest, err := io.ReadAll(br)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	stream := head.String() + string(rest)
	r, whole, err := readStream(strings.NewReader(stream), e.clip)
	if !errors.Is(err, errInterrupted) || whole {
		t.Errorf("readStream: whole %v, err %v; want the interruption:\n%s", whole, err, stream[max(0, len(stream)-600):])
	}
	if len(r.Choices) == 0 || r.Choices[0].Message.Content == nil || *r.Choices[0].Message.Content == "" {
		t.Errorf("no text before the interruption")
	}
	if err := <-other; err != nil {
		t.Errorf("the other request: %v", err)
	}
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
