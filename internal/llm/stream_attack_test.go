package llm

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/specialist"
)

// Attacks on the streamed answer: what a broken or hostile server or proxy
// can send, and what a pull request can steer the model to write. Each
// says what happens, and checks that it is bounded.

// endless is a body that repeats s without end, and counts what was read
// of it.
type endless struct {
	s    string
	i    int
	read int
}

func (r *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.i:])
		n += c
		r.i = (r.i + c) % len(r.s)
	}
	r.read += n
	return n, nil
}

// TestReadStreamEndlessBodies: a stream that never ends, with pings, with
// content, as tiny events or as one line without end, is read to at most
// maxResponseSize (and a buffer) and fails; none is read whole.
func TestReadStreamEndlessBodies(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]string{
		"pings":        ": ping - 2026-11-27 03:00:00\r\n\r\n",
		"content":      chunkEvent(map[string]any{"content": "{\"findings\": [  "}, nil),
		"tiny events":  "data:{}\n\n",
		"one line":     "data: " + strings.Repeat("x", 4096),
		"one comment":  ": " + strings.Repeat("x", 4096),
		"blank lines":  "\n",
		"CR only":      "data: {}\r\r",
		"empty fields": "data:\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := &endless{s: s}
			_, whole, err := readStream(body, func(s string) string { return s })
			if err == nil || whole {
				t.Fatalf("an endless stream read as whole: %v", err)
			}
			if body.read > maxResponseSize+1+(64<<10) {
				t.Errorf("read %d bytes, past the bound %d", body.read, maxResponseSize)
			}
		})
	}
}

// TestReadStreamFraming: the ways of writing an event that the
// server-sent events format allows, and those servers send.
func TestReadStreamFraming(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 200<<10)
	for _, tc := range []struct {
		name    string
		stream  string
		want    string
		finish  string
		wantErr error
	}{
		{name: "no space after data", stream: "data:" + strings.TrimPrefix(chunkEvent(map[string]any{"content": "hi"}, "stop"), "data: ") + "data:[DONE]\n\n",
			want: "hi", finish: "stop"},
		{name: "CRLF", stream: strings.ReplaceAll(streamOf("hello", 2, true), "\n", "\r\n"), want: "hello", finish: "stop"},
		{name: "data on several lines", stream: "data: {\"choices\": [{\"delta\":\ndata: {\"content\": \"hi\"}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n",
			want: "hi", finish: "stop"},
		{name: "event and id fields", stream: "event: message\nid: 7\nretry: 10\n" + streamOf("hi", 1, false), want: "hi", finish: "stop"},
		{name: "byte order mark", stream: "\ufeff" + chunkEvent(map[string]any{"content": "first"}, nil) + streamOf(" rest", 2, false),
			want: "first rest", finish: "stop"},
		{name: "an event after DONE is not read", stream: streamOf("hi", 1, false) + chunkEvent(map[string]any{"content": "injected"}, "stop"),
			want: "hi", finish: "stop"},
		{name: "length, then more content", stream: chunkEvent(map[string]any{"content": "cut"}, "length") + chunkEvent(map[string]any{"content": " more"}, nil) + "data: [DONE]\n\n",
			want: "cut more", finish: "length"},
		{name: "no DONE after the finish reason", stream: chunkEvent(map[string]any{"content": "hi"}, "stop"), want: "hi", finish: "stop"},
		{name: "an event larger than the read buffer", stream: streamOf(big, len(big), false), want: big, finish: "stop"},
		{name: "a long comment inside an event", stream: "data: {\"choices\": [{\"delta\": {\"content\": \"hi\"}, \n: " + strings.Repeat("p", 100<<10) + "\ndata: \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n",
			want: "hi", finish: "stop"},
		{name: "a long line whose piece starts with a space", stream: "data: {\"choices\": [{\"delta\": {\"content\": \"" + strings.Repeat("b", 64<<10-len("data: {\"choices\": [{\"delta\": {\"content\": \"")) + " c\"}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n",
			want: strings.Repeat("b", 64<<10-len("data: {\"choices\": [{\"delta\": {\"content\": \"")) + " c", finish: "stop"},
		{name: "interrupted", stream: chunkEvent(map[string]any{"content": "hi"}, nil) + "data: [DONE]\n\n", want: "hi", wantErr: errInterrupted},
		{name: "cut", stream: chunkEvent(map[string]any{"content": "hi"}, nil), want: "hi", wantErr: io.ErrUnexpectedEOF},
		{name: "an event past maxEventSize", stream: "data: \"" + strings.Repeat("x", maxEventSize) + "\"\n\n", wantErr: ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, _, err := readStream(strings.NewReader(tc.stream), func(s string) string { return s })
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			var got string
			if c := r.Choices[0].Message.Content; c != nil {
				got = *c
			}
			if got != tc.want || r.Choices[0].FinishReason != tc.finish {
				t.Errorf("content %.60q (%d bytes), finish %q; want %.60q (%d bytes), %q", got, len(got), r.Choices[0].FinishReason, tc.want, len(tc.want), tc.finish)
			}
		})
	}
}

// TestReadStreamRefusalAndRunes: a refusal delta is the answer's refusal;
// a rune split between two events' raw bytes is not valid JSON text in
// either, and Go's decoder makes each half U+FFFD (servers escape or hold
// back partial runes: llama-cpp-python does); a surrogate pair split
// between events is the same.
func TestReadStreamRefusalAndRunes(t *testing.T) {
	t.Parallel()
	r, whole, err := readStream(strings.NewReader(chunkEvent(map[string]any{"refusal": "I can't"}, nil)+chunkEvent(map[string]any{"refusal": " help"}, "stop")+"data: [DONE]\n\n"), func(s string) string { return s })
	if err != nil || !whole || r.Choices[0].Message.Refusal == nil || *r.Choices[0].Message.Refusal != "I can't help" {
		t.Fatalf("refusal: %v %v %+v", err, whole, r.Choices[0].Message)
	}
	e := &Engine{}
	if _, err := e.content(r, nil); !errors.Is(err, ErrRefused) {
		t.Errorf("a streamed refusal is %v, want ErrRefused", err)
	}
	split := "data: {\"choices\": [{\"delta\": {\"content\": \"\xc3\"}}]}\n\ndata: {\"choices\": [{\"delta\": {\"content\": \"\xa9\"}, \"finish_reason\": \"stop\"}]}\n\n"
	r, _, err = readStream(strings.NewReader(split), func(s string) string { return s })
	if err != nil || *r.Choices[0].Message.Content != "\ufffd\ufffd" {
		t.Errorf("a split rune: %v %q", err, *r.Choices[0].Message.Content)
	}
	surrogates := "data: {\"choices\": [{\"delta\": {\"content\": \"\\ud83d\"}}]}\n\ndata: {\"choices\": [{\"delta\": {\"content\": \"\\ude00\"}, \"finish_reason\": \"stop\"}]}\n\n"
	r, _, err = readStream(strings.NewReader(surrogates), func(s string) string { return s })
	if err != nil || *r.Choices[0].Message.Content != "\ufffd\ufffd" {
		t.Errorf("a split surrogate pair: %v %q", err, *r.Choices[0].Message.Content)
	}
}

// TestStreamWhenWholeAnswersAreAsked: a server (or proxy) that answers
// every request with a stream it interrupts, even once whole answers are
// asked for, is asked for a whole answer once, not again and again until
// the review's time runs out.
func TestStreamWhenWholeAnswersAreAsked(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		writeStream(w, chunkEvent(map[string]any{"role": "assistant", "content": ""}, nil)+"data: [DONE]\n\n")
	}
	e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, c := smallChange(t)
	_, err := e.Review(ctx, c)
	if err == nil {
		t.Fatal("a server that only interrupts its answers gave a review")
	}
	if n := len(f.seen()); n > 3 {
		t.Fatalf("%d requests to a server that interrupts every answer (%v)", n, err)
	}
	if strings.Contains(err.Error(), "timed out") || strings.Contains(err.Error(), "ran out") {
		t.Errorf("error %v: the loop ran until the time limit", err)
	}
}

// TestUpstreamErrorIsNotAStreamRejection: a proxy's 500 that names its
// "upstream" does not reject the stream parameter: it is retried as the
// failure it is, and the next request still streams.
func TestUpstreamErrorIsNotAStreamRejection(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	calls := 0
	f.handle = func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		calls++
		if calls == 1 {
			writeRawStatus(w, http.StatusInternalServerError, apiErrorJSON("upstream connect error or disconnect/reset before headers", "server_error", nil))
			return
		}
		writeStream(w, streamOf(`{"findings": []}`, 5, false))
	}
	e, ns, _ := newEngine(t, f, Config{}, specialist.Logic)
	if _, _, err := reviewWithNotes(t, e); err != nil {
		t.Fatal(err)
	}
	seen := f.seen()
	if len(seen) != 2 || seen[1].Body["stream"] != true {
		t.Errorf("after an upstream error, %d requests, the second streamed: %v", len(seen), len(seen) == 2 && seen[1].Body["stream"] == true)
	}
	if len(ns.recorded()) != 1 {
		t.Errorf("waits %v: the upstream error is a retry", ns.recorded())
	}
}

// TestHostileStreams: what a hostile server streams ends the review with
// one of the engine's own short lines, never its text nor the key, and no
// log line holds the key.
func TestHostileStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request)
		want    string
		timeout time.Duration
	}{
		{name: "event stream on an error status", handle: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "data: {\"error\": {\"message\": \"/srv/secret "+testKey+"\"}}\n\n")
		}, want: "the LLM engine was unavailable: HTTP 502"},
		{name: "error event echoing the key", handle: func(w http.ResponseWriter, r *http.Request) {
			writeStream(w, "data: {\"error\": {\"message\": \"bad header "+r.Header.Get("Authorization")+"\"}}\n\n")
		}, want: "the LLM engine's answer was not usable: not the JSON asked for"},
		{name: "refusal echoing the key", handle: func(w http.ResponseWriter, r *http.Request) {
			writeStream(w, chunkEvent(map[string]any{"refusal": "no: " + r.Header.Get("Authorization")}, "stop")+"data: [DONE]\n\n")
		}, want: "the LLM engine's model refused to answer"},
		{name: "malformed event echoing the key", handle: func(w http.ResponseWriter, r *http.Request) {
			writeStream(w, "data: {\"choices\": \""+r.Header.Get("Authorization")+"\"}\n\n")
		}, want: "the LLM engine's answer was not usable: not the JSON asked for"},
		{name: "pings until the time limit", handle: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(5 * time.Millisecond)
			}
		}, want: "the LLM engine timed out"},
		{name: "content larger than the bound", handle: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			ev := chunkEvent(map[string]any{"content": strings.Repeat("x", 1000)}, nil)
			for n := 0; n <= maxResponseSize; n += len(ev) {
				if _, err := io.WriteString(w, ev); err != nil {
					return
				}
			}
		}, want: "the LLM engine's answer was not usable", timeout: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) { tc.handle(w, r) }
			e, _, logs := newEngine(t, f, Config{Timeout: cmp.Or(tc.timeout, 300*time.Millisecond)}, specialist.Logic)
			_, _, err := reviewWithNotes(t, e)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "/srv/") {
				t.Errorf("the summary carries the server's text: %v", err)
			}
			if strings.Contains(logs.String(), testKey) {
				t.Errorf("the log holds the key:\n%s", logs)
			}
			if n := len(f.seen()); n > 2 {
				t.Errorf("%d requests", n)
			}
		})
	}
}

// TestGzipStream: a stream the server compresses is read as the transport
// decompresses it, and the decompressed size is what is bounded.
func TestGzipStream(t *testing.T) {
	t.Parallel()
	one := finding("store/store.go", 15, 15, "high", "security", "Query built by concatenation", nil)
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, streamOf(findingsJSON(one), 3, true))
		zw.Close()
	}
	e, _, _ := newEngine(t, f, Config{}, specialist.Security)
	got, _, err := reviewWithNotes(t, e)
	if err != nil || len(got) != 1 {
		t.Fatalf("%v, %d findings", err, len(got))
	}

	// A gzip bomb: 16 MB of pings, twice the 8 MB bound on an answer,
	// in a few kilobytes.
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	ping := []byte(strings.Repeat(": ping\n\n", 1<<13))
	for range 2 * maxResponseSize / len(ping) {
		zw.Write(ping)
	}
	zw.Close()
	g := newFakeAPI(t)
	g.handle = func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	}
	e, _, _ = newEngine(t, g, Config{}, specialist.Security)
	if _, _, err := reviewWithNotes(t, e); err == nil {
		t.Fatal("a gzip bomb of pings read as an answer")
	}
}

// TestStreamedUsageAndTheBudget: the usage chunk's counts are what the
// request took of the review's budget. A server that claims a huge count
// spends the budget, and the review's next requests are not sent; one
// that claims a negative count does not give tokens back.
func TestStreamedUsageAndTheBudget(t *testing.T) {
	t.Parallel()
	usageStream := func(prompt, completion int) string {
		return chunkEvent(map[string]any{"role": "assistant", "content": `{"findings": []}`}, "stop") +
			fmt.Sprintf("data: {\"choices\": [], \"usage\": {\"prompt_tokens\": %d, \"completion_tokens\": %d, \"total_tokens\": 0}}\n\ndata: [DONE]\n\n", prompt, completion)
	}
	for _, tc := range []struct {
		name             string
		prompt, complete int
		wantUsedAtLeast  int
	}{
		{"huge", 1 << 40, 1 << 40, 1 << 41},
		{"negative", -(1 << 40), 1<<40 + 1, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.handle = func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
				writeStream(w, usageStream(tc.prompt, tc.complete))
			}
			b := NewBudget(DefaultMaxTokensPerReview)
			e, _, _ := newEngine(t, f, Config{}, specialist.Logic, WithBudget(b))
			if _, _, err := reviewWithNotes(t, e); err != nil {
				t.Fatal(err)
			}
			if b.Used() < tc.wantUsedAtLeast {
				t.Errorf("the budget counts %d tokens for usage %d+%d", b.Used(), tc.prompt, tc.complete)
			}
			e2, _, _ := newEngine(t, f, Config{}, specialist.Logic, WithBudget(b))
			before := len(f.seen())
			_, _, err := reviewWithNotes(t, e2)
			if tc.name == "huge" && (len(f.seen()) != before || err == nil) {
				t.Errorf("after a huge count, %d more requests, %v", len(f.seen())-before, err)
			}
		})
	}
}

// TestSalvagedFindingsAreChecked: findings complete before the time limit
// cut the stream go through the same checks as a whole answer's: those on
// paths outside the change, or quoting what the file does not hold, are
// dropped.
func TestSalvagedFindingsAreChecked(t *testing.T) {
	t.Parallel()
	passwd := "root:x:0:0:root"
	sent := findingsJSON(
		quoted(finding("../../../../etc/passwd", 1, 1, "high", "security", "Traversal", nil), passwd),
		quoted(finding("/etc/passwd", 1, 1, "high", "security", "Absolute", nil), passwd),
		quoted(finding("store/store.go", 15, 15, "high", "security", "Quote from elsewhere", nil), passwd),
		finding("store/store.go", 15, 15, "high", "security", "Kept", nil),
	)
	sent = sent[:len(sent)-2] + `, {"path": "store/sto`
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunkEvent(map[string]any{"role": "assistant", "content": sent}, nil))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	e, _, _ := newEngine(t, f, Config{Timeout: 200 * time.Millisecond, MaxFindingsPerFile: 10}, specialist.Security)
	got, _, err := reviewWithNotes(t, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Headline != "Kept" {
		t.Errorf("findings %+v, want only the one on the change", got)
	}
}

// TestStreamEndedEarlyIsNotTheTimeLimit: a stream that ends before its end
// for another reason than the time limit (the connection dropped, a
// broken event) after a finding was complete is not said to have been
// cut at the time limit: the dropped one is retried, and the broken one
// is not usable.
func TestStreamEndedEarlyIsNotTheTimeLimit(t *testing.T) {
	t.Parallel()
	one := finding("store/store.go", 15, 15, "high", "security", "Query built by concatenation", nil)
	whole := findingsJSON(one, one)
	partial := chunkEvent(map[string]any{"role": "assistant", "content": whole[:len(whole)/2+40]}, nil)
	for _, tc := range []struct {
		name     string
		tail     string
		requests int
	}{
		{"dropped", "", 2},
		{"broken event", "data: {not json\n\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.handle = func(w http.ResponseWriter, _ *http.Request, _ map[string]any) { writeStream(w, partial+tc.tail) }
			e, _, _ := newEngine(t, f, Config{}, specialist.Security)
			_, notes, err := reviewWithNotes(t, e)
			if err == nil && len(notes) == 1 && strings.Contains(notes[0], "time limit") {
				t.Errorf("notes %q: the stream did not end at the time limit", notes)
			}
			if n := len(f.seen()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

// TestTruncatedEmptyAnswerTakesItsTokens: an answer cut at the token limit
// before any content (a reasoning model that spent its tokens thinking)
// took what the server counted, whole or streamed; so did one the server
// counted and refused.
func TestTruncatedEmptyAnswerTakesItsTokens(t *testing.T) {
	t.Parallel()
	const counted = 700 + 4000
	usage := `"usage": {"prompt_tokens": 700, "completion_tokens": 4000, "total_tokens": 4700}`
	for _, tc := range []struct {
		name   string
		stream bool
		body   string
	}{
		{"whole", false, `{"id": "chatcmpl-1", "object": "chat.completion", "created": 1763865000, "model": "test-model",
			"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null}, "logprobs": null, "finish_reason": "length"}], ` + usage + `}`},
		{"streamed", true, chunkEvent(map[string]any{"role": "assistant"}, nil) + chunkEvent(map[string]any{}, "length") +
			`data: {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], ` + usage + "}\n\ndata: [DONE]\n\n"},
		{"refused", false, `{"id": "chatcmpl-1", "object": "chat.completion", "created": 1763865000, "model": "test-model",
			"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": "No."}, "logprobs": null, "finish_reason": "stop"}], ` + usage + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.handle = func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
				if tc.stream {
					writeStream(w, tc.body)
					return
				}
				writeRaw(w, tc.body)
			}
			b := NewBudget(DefaultMaxTokensPerReview)
			e, _, _ := newEngine(t, f, Config{NoStream: !tc.stream}, specialist.Logic, WithBudget(b))
			if _, _, err := reviewWithNotes(t, e); err == nil {
				t.Fatal("an empty answer gave a review")
			}
			if b.Used() != counted {
				t.Errorf("the budget counts %d tokens, the server %d", b.Used(), counted)
			}
		})
	}
}

// TestStreamHeldOpenAfterTheFinishReason: a server that sends the
// answer's finish reason and then holds the stream open (no usage chunk,
// no [DONE]) until the time limit has answered whole: its answer is read
// as such, not as a timeout retried, nor as one cut at the time limit.
func TestStreamHeldOpenAfterTheFinishReason(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunkEvent(map[string]any{"role": "assistant", "content": `{"findings": []}`}, "stop"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	e, _, _ := newEngine(t, f, Config{Timeout: 200 * time.Millisecond}, specialist.Logic)
	got, notes, err := reviewWithNotes(t, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 || len(f.seen()) != 1 {
		t.Errorf("%d findings, %d requests", len(got), len(f.seen()))
	}
	if len(notes) != 1 || strings.Contains(notes[0], "time limit") {
		t.Errorf("notes %q", notes)
	}
}
