package change

import (
	"context"
	"slices"
	"testing"
)

// TestGitGetsTheProxySettings: git runs with a clean environment, but a
// fetch behind an egress proxy must use it, as the API client does; the
// rest of the environment stays out.
func TestGitGetsTheProxySettings(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://proxy.internal:3128")
	t.Setenv("NO_PROXY", "localhost")
	t.Setenv("GIT_DIR", "/somewhere/else")
	env := NewLocal(t.TempDir()).command(context.Background(), "version").Env
	for _, want := range []string{"HTTPS_PROXY=http://proxy.internal:3128", "NO_PROXY=localhost"} {
		if !slices.Contains(env, want) {
			t.Errorf("git's environment lacks %s: %q", want, env)
		}
	}
	if slices.Contains(env, "GIT_DIR=/somewhere/else") {
		t.Errorf("git's environment has our GIT_DIR: %q", env)
	}
}
