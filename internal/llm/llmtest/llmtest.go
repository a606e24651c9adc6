// Package llmtest runs a real OpenAI-compatible model server for tests:
// llama-cpp-python's server (python -m llama_cpp.server) with the small
// instruct model scripts/llm/install takes from PyPI, on a free loopback
// port, one per test, stopped when the test ends.
//
// The server is installed by scripts/llm/install, not by the tests: it
// compiles llama.cpp, which takes minutes. A test that needs the server
// and finds it not installed fails, naming the script; when an install is
// running (CI starts one in the background), it waits for it.
package llmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/installtest"
)

// Model is the name the server serves the model under (its --model_alias),
// the name a request's "model" field gives.
const Model = "smollm2-135m-instruct"

// Options say how the server runs; the zero value is a small context.
type Options struct {
	// ContextTokens is the server's context window (--n_ctx); 2048 when 0.
	ContextTokens int
}

// Server is a running model server.
type Server struct {
	// BaseURL is the OpenAI-compatible API's base, ending in /v1.
	BaseURL string
	// Model is the model name to ask for.
	Model string

	cmd    *exec.Cmd
	exited chan struct{}
	log    *syncBuffer
	stop   sync.Once
}

// Start starts a server for the test and stops it when the test ends. It
// fails the test when the server is not installed or does not start.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.ContextTokens == 0 {
		opts.ContextTokens = 2048
	}
	python, model, err := installed()
	if err != nil {
		t.Fatalf("llmtest: %v", err)
	}
	port, err := installtest.FreePort()
	if err != nil {
		t.Fatalf("llmtest: %v", err)
	}
	s := &Server{
		BaseURL: fmt.Sprintf("http://127.0.0.1:%d/v1", port),
		Model:   Model,
		exited:  make(chan struct{}),
		log:     &syncBuffer{},
	}
	s.cmd = exec.Command(python, "-m", "llama_cpp.server",
		"--model", model, "--model_alias", Model,
		"--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--n_ctx", strconv.Itoa(opts.ContextTokens),
		// One thread: tests run side by side on a machine of two cores.
		"--n_threads", "1", "--n_threads_batch", "1")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// The kernel kills the server when the test binary dies without
	// reaching Stop (a panic, a -timeout), so no server outlives its tests.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	begin := time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("llmtest: start %s -m llama_cpp.server: %v", python, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(s.Stop)
	if err := s.waitReady(time.Minute); err != nil {
		t.Fatalf("llmtest: %v\n%s", err, s.Log())
	}
	t.Logf("llmtest: %s serving %s (n_ctx %d), ready in %s", s.BaseURL, Model, opts.ContextTokens, time.Since(begin).Round(time.Millisecond))
	return s
}

// Stop stops the server and waits for it to exit. Tests may call it to
// take the server away in the middle of a review; it is also called when
// the test ends.
func (s *Server) Stop() {
	s.stop.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// Log is what the server printed so far.
func (s *Server) Log() string { return s.log.String() }

// waitReady polls GET /v1/models until the server answers 200.
func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("the server exited before it answered %s/models", s.BaseURL)
		default:
		}
		resp, err := client.Get(s.BaseURL + "/models")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not answer %s/models within %s", s.BaseURL, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Models is what GET /v1/models answers, decoded loosely, for tests that
// look at what the server says of its model.
func (s *Server) Models(t testing.TB) map[string]any {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, s.BaseURL+"/models", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("llmtest: GET /v1/models: %v", err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("llmtest: GET /v1/models: %v", err)
	}
	return out
}

// installed asks scripts/llm/install --installed for the server's python
// and the model file. It waits for an install that is running.
func installed() (python, model string, err error) {
	root, err := installtest.Root("scripts/llm/install")
	if err != nil {
		return "", "", err
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "llm", "install"), "--installed")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("the model server is not installed: run scripts/llm/install (it builds llama-cpp-python from source, once per machine): %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "python":
			python = v
		case "model":
			model = v
		}
	}
	for _, p := range []string{python, model} {
		if _, err := os.Stat(p); p == "" || err != nil {
			return "", "", fmt.Errorf("scripts/llm/install --installed printed %q, which does not name the python and the model; run scripts/llm/install again", out)
		}
	}
	return python, model, nil
}

// syncBuffer is a bytes.Buffer the server's output and a test may use at
// once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
