package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/specialist"
)

// chunkEvent is one server-sent event of OpenAI's streamed chat completion
// (the chat.completion.chunk object): a delta of the one choice, and its
// finish reason on the last.
func chunkEvent(delta map[string]any, finish any) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1763865000, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
	})
	return "data: " + string(b) + "\n\n"
}

// streamOf is content streamed as OpenAI streams it, in pieces of n bytes:
// a first event with the role, the content's deltas, a last one with the
// finish reason, the usage chunk (stream_options.include_usage: no
// choices) and [DONE]. Comments (": ping", as sse-starlette sends) come
// between events.
func streamOf(content string, n int, usage bool) string {
	var b strings.Builder
	b.WriteString(chunkEvent(map[string]any{"role": "assistant", "content": ""}, nil))
	for i := 0; i < len(content); i += n {
		b.WriteString(chunkEvent(map[string]any{"content": content[i:min(i+n, len(content))]}, nil))
		if i == 0 {
			b.WriteString(": ping - 2026-11-27 03:00:00\n\n")
		}
	}
	b.WriteString(chunkEvent(map[string]any{}, "stop"))
	if usage {
		u, _ := json.Marshal(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 777, "completion_tokens": 55, "total_tokens": 832}})
		b.WriteString("data: " + string(u) + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// findingsJSON is the content of an answer with the findings given.
func findingsJSON(findings ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"findings": findings})
	return string(b)
}

func writeStream(w http.ResponseWriter, events string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	io.WriteString(w, events)
}

// TestStreamedAnswer: answers are asked for streamed, with the usage chunk;
// a stream of small deltas, with comments between the events, reads as
// the whole answer, and the server's count of the prompt is the note's.
func TestStreamedAnswer(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	content := findingsJSON(finding("store/store.go", 15, 15, "high", "security", "Query built by concatenation", nil))
	f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) {
		if req["stream"] != true {
			t.Errorf("request not streamed: %v", req["stream"])
		}
		if so, _ := req["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Errorf("stream_options %v, want include_usage", req["stream_options"])
		}
		writeStream(w, streamOf(content, 7, true))
	}
	e, _, _ := newEngine(t, f, Config{}, specialist.Security)
	got, notes, err := reviewWithNotes(t, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Line != 15 || got[0].Headline != "Query built by concatenation" {
		t.Errorf("findings %+v", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "a prompt of 777 tokens in 1 request") {
		t.Errorf("notes %q, want the server's count from the usage chunk", notes)
	}
	if h := f.seen()[0].Header.Get("Accept"); !strings.Contains(h, "text/event-stream") {
		t.Errorf("Accept %q", h)
	}
}

// TestNoStream: Config.NoStream asks for whole answers.
func TestNoStream(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{body: answer()})
	e, _, _ := newEngine(t, f, Config{NoStream: true}, specialist.Logic)
	if _, _, err := reviewWithNotes(t, e); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.seen()[0].Body["stream"]; ok {
		t.Errorf("request %v asks for a stream", f.seen()[0].Body)
	}
}

// TestStreamCutAtTheTimeLimit: the request's time limit comes while the
// answer is still streaming, after one finding was complete: that finding
// is kept, nothing is retried, and the note says so. A stream cut before
// any finding was complete is a timeout, retried once.
func TestStreamCutAtTheTimeLimit(t *testing.T) {
	t.Parallel()
	one := finding("store/store.go", 15, 15, "high", "security", "Query built by concatenation", nil)
	whole := findingsJSON(one, finding("store/store.go", 16, 16, "low", "logic", "Returns the error unwrapped", nil))
	// The second finding starts after the first's closing brace.
	cutAt := strings.Index(whole, "},{") + 2
	for _, tc := range []struct {
		name     string
		sent     string
		findings int
		requests int
		wantNote string
		wantErr  string
	}{
		{name: "after a whole finding", sent: whole[:cutAt+20], findings: 1, requests: 1,
			wantNote: "1 answer was still being written at the time limit, and only the findings complete by then were kept (--llm-timeout allows more time)"},
		{name: "before any finding", sent: whole[:30], requests: 2,
			wantErr: "the LLM engine timed out: no answer within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, chunkEvent(map[string]any{"role": "assistant", "content": tc.sent}, nil))
				w.(http.Flusher).Flush()
				// The model is still writing when the client gives up.
				<-r.Context().Done()
			}
			e, _, _ := newEngine(t, f, Config{Timeout: 200 * time.Millisecond}, specialist.Security)
			got, notes, err := reviewWithNotes(t, e)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.findings {
				t.Errorf("%d findings %+v, want %d", len(got), got, tc.findings)
			}
			if n := len(f.seen()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if tc.wantNote != "" && (len(notes) != 1 || !strings.Contains(notes[0], tc.wantNote)) {
				t.Errorf("notes %q, want %q", notes, tc.wantNote)
			}
		})
	}
}

// TestServerRejectingStreams: a server that rejects stream (400 naming
// it), or interrupts a streamed answer (llama-cpp-python's server ends a
// stream with [DONE] and no finish reason when another request arrives),
// is asked again for a whole answer, which is not a retry, and the next
// engine of the process asks for whole answers from the start.
func TestServerRejectingStreams(t *testing.T) {
	t.Parallel()
	one := finding("store/store.go", 15, 15, "high", "security", "Query built by concatenation", nil)
	for _, tc := range []struct {
		name   string
		stream func(w http.ResponseWriter)
	}{
		{"rejected", func(w http.ResponseWriter) {
			writeRawStatus(w, http.StatusBadRequest, apiErrorJSON("stream is not supported by this deployment", "invalid_request_error", "unsupported_parameter"))
		}},
		{"interrupted", func(w http.ResponseWriter) {
			// A whole finding arrived before the interruption: it is not
			// kept, as the whole answer will have it.
			content := findingsJSON(one, one)
			writeStream(w, chunkEvent(map[string]any{"role": "assistant", "content": content[:len(content)/2+40]}, nil)+"data: [DONE]\n\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) {
				if req["stream"] == true {
					tc.stream(w)
					return
				}
				writeRaw(w, answer(one))
			}
			servers := NewServers()
			for i, want := range [][]bool{{true, false}, {false}} {
				before := len(f.seen())
				e, ns, _ := newEngine(t, f, Config{}, specialist.Security, WithServers(servers))
				got, notes, err := reviewWithNotes(t, e)
				if err != nil || len(got) != 1 {
					t.Fatalf("review %d: %v, %d findings", i+1, err, len(got))
				}
				if len(notes) != 1 || strings.Contains(notes[0], "time limit") {
					t.Errorf("review %d: notes %q", i+1, notes)
				}
				var streamed []bool
				for _, r := range f.seen()[before:] {
					streamed = append(streamed, r.Body["stream"] == true)
				}
				if fmt.Sprint(streamed) != fmt.Sprint(want) {
					t.Errorf("review %d: requests streamed %v, want %v", i+1, streamed, want)
				}
				if len(ns.recorded()) != 0 {
					t.Errorf("review %d waited %v: a rejected stream is not a retry", i+1, ns.recorded())
				}
			}
		})
	}
}

// TestBadStreams: a stream that ends in an error event, holds an event
// that is not a chunk, or one larger than any chunk fails the review with
// a short line and none of the server's text; a connection dropped
// before the end is retried once.
func TestBadStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		events   string
		want     string
		requests int
	}{
		{name: "error event", events: chunkEvent(map[string]any{"role": "assistant"}, nil) + `data: {"error": {"message": "upstream /srv/app.py failed: sk-live-0123456789abcdef", "type": "server_error"}}` + "\n\n",
			want: "the LLM engine's answer was not usable: not the JSON asked for", requests: 1},
		{name: "not a chunk", events: "data: {not json\n\n", want: "the LLM engine's answer was not usable", requests: 1},
		{name: "huge event", events: "data: " + strings.Repeat("x", maxEventSize+10) + "\n\n", want: "the LLM engine's answer was not usable", requests: 1},
		{name: "dropped", events: chunkEvent(map[string]any{"role": "assistant", "content": `{"findings": [`}, nil),
			want: "the LLM engine was unavailable: the server ended its answer early", requests: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.handle = func(w http.ResponseWriter, _ *http.Request, _ map[string]any) { writeStream(w, tc.events) }
			e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
			_, _, err := reviewWithNotes(t, e)
			if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "sk-live") || strings.Contains(err.Error(), "/srv/") {
				t.Errorf("the summary line carries the server's text: %v", err)
			}
			if n := len(f.seen()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}
