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
		"x.PY": "Python", "app.Dockerfile": "Dockerfile", "web/App.JSX": "JavaScript", ".envrc": "shell", "home/.bashrc": "shell",
		"notes.txt": "", "bin/tool": "", "x.GO": "",
		"docker/Dockerfile-dependencies": "Dockerfile", "Containerfile_arm64": "Dockerfile", "Containerfile.dev": "Dockerfile",
		"Dockerfile-notes.md": "", "Dockerfiles": "",
	} {
		if got := lang.Of(p); got != want {
			t.Errorf("Of(%q) = %q, want %q", p, got, want)
		}
	}
}

// A script without an extension is known by the interpreter its first
// line names, directly, through env (with its flags) or versioned.
func TestDetect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, head, want string }{
		{"bin/tool", "#!/usr/bin/env python3\nimport os\n", "Python"},
		{"bin/tool", "#!/usr/local/bin/bash\n", "shell"},
		{"bin/tool", "#!/usr/bin/env -S bash -e\n", "shell"},
		{"bin/tool", "#! /bin/sh\n", "shell"},
		{"bin/tool", "#!/usr/bin/python3.12 -u\n", "Python"},
		{"bin/tool", "#!/usr/bin/env node\n", "JavaScript"},
		{"bin/tool", "#!/usr/bin/env LANG=C ruby\n", "Ruby"},
		{"bin/tool", "just text\n", ""},
		{"bin/tool", "#!/usr/bin/env awk -f\n", ""},
		{"notes.txt", "#!/bin/sh\n", ""},
		{"x.PY", "", "Python"},
	} {
		if got := lang.Detect(tc.path, func() []byte { return []byte(tc.head) }); got != tc.want {
			t.Errorf("Detect(%q, %q) = %q, want %q", tc.path, tc.head, got, tc.want)
		}
	}
}
