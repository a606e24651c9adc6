package llmtest

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestStartStop: the server answers /v1/models under the alias, and Stop
// leaves no process behind.
func TestStartStop(t *testing.T) {
	s := Start(t, Options{})
	models := s.Models(t)
	data, _ := models["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("/v1/models = %v, want one model", models)
	}
	if id, _ := data[0].(map[string]any)["id"].(string); id != Model {
		t.Errorf("model id %q, want %q", id, Model)
	}
	pid := s.cmd.Process.Pid
	s.Stop()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server (pid %d) is still there after Stop: %v", pid, err)
	}
	s.Stop() // a second Stop, as the cleanup makes, does nothing
}

// TestNotInstalled: without the install, the error names the script. (Not
// parallel: it points the cache elsewhere.)
func TestNotInstalled(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, _, err := installed()
	if err == nil || !strings.Contains(err.Error(), "run scripts/llm/install") {
		t.Fatalf("error %v, want one that names scripts/llm/install", err)
	}
}
