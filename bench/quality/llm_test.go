package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// chatServer speaks the chat-completions protocol: the security
// specialist's request gets one finding on token.go line 4 (the
// expectation the built-in engines miss), the others none. It counts the
// requests.
func chatServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	answer := `{"findings": [{"path": "token.go", "line": 4, "end_line": 4, "severity": "high", "category": "security",
	  "headline": "math/rand makes guessable tokens", "body": "Use crypto/rand.", "quote": "\"math/rand\"", "suggested_replacement": null}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		req, _ := io.ReadAll(r.Body)
		n.Add(1)
		content := `{"findings": []}`
		if bytes.Contains(req, []byte("You are the security reviewer")) {
			content = answer
		}
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-bench", "object": "chat.completion", "created": 1763865000, "model": "bench-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestRunWithLLM runs a case with --llm-base-url: each case's review asks
// the LLM engine beside the built-in ones, and the report gives each
// engine's recall and the two together's, and tells which engine made
// each finding.
func TestRunWithLLM(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("BENCH_LLM_KEY", "")
	tmp := t.TempDir()
	mirrors, work, corpus := acmeCorpus(t, tmp)
	ctx := context.Background()
	var stderr bytes.Buffer
	if err := run(ctx, []string{"prepare", "--corpus", corpus, "--mirrors", mirrors, "--work", work}, &stderr, &stderr); err != nil {
		t.Fatalf("prepare: %v\n%s", err, stderr.String())
	}
	srv, requests := chatServer(t)
	args := []string{"run", "--corpus", corpus, "--work", work, "--labels", filepath.Join(tmp, "labels.json"),
		"--llm-base-url", srv.URL + "/v1", "--llm-model", "bench-model", "--llm-api-key-env", "BENCH_LLM_KEY",
		"--llm-context-tokens", "8000"}

	var stdout bytes.Buffer
	if err := run(ctx, append(args, "--json"), &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode the report: %v\n%s", err, stdout.String())
	}
	if requests.Load() == 0 {
		t.Fatalf("the LLM engine asked nothing\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "BENCH_LLM_KEY is empty") {
		t.Errorf("no word of the empty key variable:\n%s", stderr.String())
	}
	if rep.LLMModel != "bench-model" || rep.Recall != (Count{3, 3}) ||
		rep.ByEngine[engineBuiltin].Recall != (Count{2, 3}) || rep.ByEngine[engineLLM].Recall != (Count{1, 3}) {
		t.Errorf("model %q, recall %+v, by engine %+v; findings %+v", rep.LLMModel, rep.Recall, rep.ByEngine, rep.Cases[0].Findings)
	}
	var llmFindings int
	for _, f := range rep.Cases[0].Findings {
		if f.Engine == engineLLM {
			llmFindings++
			if f.Model != "bench-model" || f.Rule != "llm:security" || !f.Expected {
				t.Errorf("LLM finding %+v", f)
			}
		}
	}
	if llmFindings != 1 || rep.ByEngine[engineLLM].BugOther.All() != 0 {
		t.Errorf("%d LLM findings, LLM engine's other findings %+v", llmFindings, rep.ByEngine[engineLLM].BugOther)
	}

	stdout.Reset()
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{
		"By engine (the LLM engine asked bench-model",
		"  builtin  recall 2/3 = 67 %",
		"  llm      recall 1/3 = 33 %",
		"  both     recall 3/3 = 100 %",
		"EXPECTED   llm security",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestLLMFlagsChecked: a bad LLM flag is a usage error before any case is
// reviewed.
func TestLLMFlagsChecked(t *testing.T) {
	for _, args := range [][]string{
		{"--llm-base-url", "ftp://x"},
		{"--llm-base-url", "http://127.0.0.1:1/v1"},
		{"--llm-base-url", "http://127.0.0.1:1/v1", "--llm-model", "m", "--llm-api-key-env", "sk-secret"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"run", "--corpus", filepath.Join("testdata", "none.json")}, args...), &out, &out)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
		if strings.Contains(fmt.Sprint(out.String(), err), "sk-secret") {
			t.Errorf("%q: the key-like value is printed: %v", args, err)
		}
	}
}
