// Package changetest builds real git repositories in temp dirs for tests
// that need a change: the git CLI with a fixed identity and date, no user
// or system configuration.
package changetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
)

// Repo is a real git repository in a temp dir, driven by the git CLI with
// a fixed identity and date.
type Repo struct {
	t   testing.TB
	Dir string
	env []string
}

// NewRepo returns an empty repository on branch main.
func NewRepo(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	r := &Repo{t: t, Dir: dir, env: []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_AUTHOR_NAME=Quorum Test",
		"GIT_AUTHOR_EMAIL=test@quorum.invalid",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z",
		"GIT_COMMITTER_NAME=Quorum Test",
		"GIT_COMMITTER_EMAIL=test@quorum.invalid",
		"GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
	}}
	r.Git("init", "-q", "-b", "main")
	return r
}

// Git runs git in the repository and returns its trimmed output.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// GitInput runs git with stdin and returns its combined output and error.
func (r *Repo) GitInput(stdin string, args ...string) (string, error) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = r.env
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Write writes files (path → content) into the work tree.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for path, content := range files {
		full := filepath.Join(r.Dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Commit stages everything and commits it, returning the commit's name.
func (r *Repo) Commit(msg string) string {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}

// Change returns the change from base to head, as the local source builds
// it.
func (r *Repo) Change(base, head string) *change.Change {
	r.t.Helper()
	c, err := change.NewLocal(r.Dir).Change(context.Background(), change.Ref{Base: base, Head: head})
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// Apply writes files (path → content; an empty content deletes the file),
// commits, and returns the commit's name.
func (r *Repo) Apply(files map[string]string) string {
	r.t.Helper()
	write := map[string]string{}
	for path, content := range files {
		if content != "" {
			write[path] = content
			continue
		}
		if err := os.Remove(filepath.Join(r.Dir, filepath.FromSlash(path))); err != nil {
			r.t.Fatal(err)
		}
	}
	r.Write(write)
	return r.Commit("c")
}
