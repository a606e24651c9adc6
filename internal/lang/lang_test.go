package lang_test

import (
	"testing"

	"github.com/quorum-review/quorum/internal/lang"
)

func TestOf(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		"a/b.go": "Go", "x/testdata/t.go": "", "_old/x.go": "", "tool.py": "Python", "web/app.tsx": "TypeScript",
		"Dockerfile": "Dockerfile", "deploy/Dockerfile.prod": "Dockerfile", "ci/run.sh": "shell",
		"README.md": "", "go.mod": "", "config.yaml": "", "data.json": "",
	} {
		if got := lang.Of(p); got != want {
			t.Errorf("Of(%q) = %q, want %q", p, got, want)
		}
	}
}
