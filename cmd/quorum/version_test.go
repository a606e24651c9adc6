package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestBuildString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		b    build
		want string
	}{
		{build{Version: "dev"}, "dev"},
		{build{Version: "dev", Commit: "2d1ce9b4982e49488a9b3f81312dbf167af12b16", Modified: "false"}, "dev+2d1ce9b4982e"},
		{build{Version: "v1.4.0", Commit: "2d1ce9b4982e49488a9b3f81312dbf167af12b16", Modified: "true"}, "v1.4.0+2d1ce9b4982e.dirty"},
		// A pseudo-version names the commit already.
		{build{Version: "v0.0.0-20261124020112-2d1ce9b4982e+dirty", Commit: "2d1ce9b4982e49488a9b3f81312dbf167af12b16", Modified: "true"}, "v0.0.0-20261124020112-2d1ce9b4982e+dirty"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.b, got, tc.want)
		}
	}
}

// A binary built in a git work tree says which commit, when and whether
// the tree was modified, with no flag needed.
func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD (the test runs in the repository's work tree): %v", err)
	}
	bin := buildQuorum(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	commit := strings.TrimSpace(string(head))
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "quorum ") || !strings.Contains(lines[0], commit[:12]) {
		t.Fatalf("quorum version printed %q, want the version naming commit %s first", out, commit[:12])
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`^commit:   ` + commit + `$`),
		regexp.MustCompile(`^time:     \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`),
		regexp.MustCompile(`^modified: (true|false)$`),
		regexp.MustCompile(`^go:       go\d`),
	} {
		found := false
		for _, l := range lines[1:] {
			found = found || want.MatchString(l)
		}
		if !found {
			t.Errorf("quorum version printed %q, no line matches %s", out, want)
		}
	}
}
