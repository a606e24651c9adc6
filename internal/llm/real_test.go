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

// TestRealServer sends the engine's requests, as the engine builds, sends
// and reads them, to llama-cpp-python's server and a small model
// (scripts/llm/install), with a short prompt and a short answer: the
// server rejects json_schema with a 500 that the engine reads as a
// refused format (the fallback to json_object is built on it); it answers
// json_object as a stream of chat.completion.chunk events, which the
// engine reads into the answer's text, and an answer cut at its bound as
// cut, with the text so far; its error for a prompt over its context
// (whose size its model list does not say) reads as the engine expects.
//
// A whole review against the server, the engine's prompt and its
// findings, is cmd/quorum's TestRealLLM: quorum review runs this engine
// there, with an answer of up to 220 tokens (its serve half asks for
// 64). Such a review costs the server's single thread some 35 s (about
// 11 ms a prompt token, 90 ms an answer token written against the JSON
// grammar), so the suite makes it there only.
func TestRealServer(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Options{ContextTokens: 2048})
	rec := &recorder{}
	e, err := New(Config{BaseURL: srv.BaseURL, Model: srv.Model, Timeout: 2 * time.Minute}, specialist.Security, WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	msgs := []message{
		{Role: "system", Content: "You review code. Answer with a JSON object."},
		{Role: "user", Content: `Report the findings of this change: "+ return db.Query(\"SELECT * FROM t WHERE id = \" + id)".`},
	}
	send := func(format string, answer int) (string, error) {
		t.Helper()
		body, err := json.Marshal(e.request(msgs, format, MaxTokens, answer, true))
		if err != nil {
			t.Fatal(err)
		}
		content, _, _, err := e.attempt(ctx, body, "change", 1)
		return content, err
	}

	// json_schema: refused, in words the engine reads as the format's.
	var ae *APIError
	if _, err := send(FormatJSONSchema, 4); err == nil {
		t.Fatal("the server took json_schema; the fallback this engine keeps for it is then untested here")
	} else if !errors.As(err, &ae) || ae.StatusCode != http.StatusInternalServerError ||
		!strings.Contains(ae.body, "response_format") || !rejects(ae, formatWords(FormatJSONSchema)) {
		t.Errorf("json_schema was answered %v; the fallback is built on a 500 naming response_format", err)
	}

	// json_object, streamed, cut at 4 tokens, where no object with the
	// findings the schema requires fits (`{"findings": []}` is about 6),
	// whatever the model makes of the prompt: the text so far, and the
	// cut said.
	content, err := send(FormatJSONObject, 4)
	if !errors.Is(err, ErrTruncated) || !strings.HasPrefix(strings.TrimSpace(content), "{") {
		t.Errorf("a json_object answer cut at 4 tokens read as %q, %v; want the JSON so far and ErrTruncated", content, err)
	}
	chats := rec.chats()
	if len(chats) != 2 {
		t.Fatalf("%d chat requests, want 2: %+v", len(chats), chats)
	}
	rf, _ := chats[1].body["response_format"].(map[string]any)
	if chats[1].status != http.StatusOK || rf["type"] != FormatJSONObject || chats[1].body["max_tokens"] != float64(4) ||
		chats[1].body["model"] != srv.Model || chats[1].body["stream"] != true {
		t.Errorf("json_object request: %d, body %v", chats[1].status, chats[1].body)
	}
	// llama-cpp-python's server answers server-sent events of
	// chat.completion.chunk objects, which carry no usage (so a review's
	// prompt size is the engine's estimate).
	if !strings.Contains(chats[1].answer, "data: {") || !strings.Contains(chats[1].answer, `"chat.completion.chunk"`) {
		t.Errorf("the json_object request was not answered as a stream: %.300q", chats[1].answer)
	}

	// A prompt larger than the server's context: its error names the
	// window and the prompt's tokens in the words the engine reads
	// (TestContextFromOverflowError splits a change again on them).
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
