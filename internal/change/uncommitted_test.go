package change

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quorum-review/quorum/internal/sandbox"
)

// TestUncommitted: the change from HEAD to the work tree holds staged and
// unstaged edits, deletions and untracked files that are not ignored, and
// leaves the repository (index, objects, HEAD) as it was.
func TestUncommitted(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("staged.go", "package a\n")
	r.write("unstaged.go", "package a\n")
	r.write("deleted.go", "package a\n")
	r.write("same.go", "package a\n")
	r.write(".gitignore", "ignored.go\n")
	head := r.commit("base")
	r.write("staged.go", "package a\n\nvar Staged = 1\n")
	r.git("add", "staged.go")
	r.write("unstaged.go", "package a\n\nvar Unstaged = 2\n")
	r.remove("deleted.go")
	r.write("untracked.go", "package a\n\nvar Untracked = 3\n")
	r.write("ignored.go", "package a\n\nvar Ignored = 4\n")
	if err := os.Symlink("/etc/passwd", filepath.Join(r.dir, "link")); err != nil {
		t.Fatal(err)
	}
	status := r.git("status", "--porcelain")
	objects := countObjects(t, r.dir)

	c, cleanup, err := NewLocal(r.dir).Uncommitted(t.Context(), Ref{Owner: "o", Repo: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if c.BaseSHA != head || c.HeadSHA == head || len(c.HeadSHA) != 40 {
		t.Errorf("base, head = %s, %s; want HEAD %s and a commit of the work tree", c.BaseSHA, c.HeadSHA, head)
	}
	var paths []string
	for _, f := range c.Files {
		paths = append(paths, f.Path())
	}
	for _, s := range c.Skipped {
		paths = append(paths, s.File.Path())
	}
	slices.Sort(paths)
	want := []string{"deleted.go", "link", "staged.go", "unstaged.go", "untracked.go"}
	if !slices.Equal(paths, want) {
		t.Errorf("changed files %v, want %v", paths, want)
	}
	if data, err := c.ReadFile(t.Context(), "unstaged.go"); err != nil || string(data) != "package a\n\nvar Unstaged = 2\n" {
		t.Errorf("ReadFile(unstaged.go) = %q, %v", data, err)
	}
	if data, err := c.ReadFile(t.Context(), "link"); err != nil || string(data) != "/etc/passwd" {
		t.Errorf("the link reads %q (%v), want its target's name, not the file", data, err)
	}
	if got := r.git("status", "--porcelain"); got != status {
		t.Errorf("status changed:\n%s\nwant\n%s", got, status)
	}
	if got := countObjects(t, r.dir); got != objects {
		t.Errorf("the repository has %d objects, had %d", got, objects)
	}
	if got := r.git("rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
}

// TestUncommittedRunsNoFilter: a clean filter the repository configures
// for its files (which git add, git diff and git status run on the work
// tree) does not run.
func TestUncommittedRunsNoFilter(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	marker := filepath.Join(t.TempDir(), "sprung")
	script := filepath.Join(t.TempDir(), "trap.sh")
	if err := sandbox.WriteExecutable(script, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write(".gitattributes", "*.txt filter=evil\n")
	r.write("a.txt", "a\n")
	r.commit("base")
	r.git("config", "filter.evil.clean", script)
	r.git("config", "filter.evil.smudge", script)
	r.git("config", "core.hooksPath", filepath.Dir(script))
	r.write("a.txt", "b\n")
	r.git("diff", "--stat")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the filter did not fire for plain git diff: %v", err)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	c, cleanup, err := NewLocal(r.dir).Uncommitted(t.Context(), Ref{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if _, err := c.ReadFile(t.Context(), "a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the repository's filter ran (%v)", err)
	}
	if f := fileByPath(t, c, "a.txt"); f.Hunks[0].Lines[1].Text != "b" {
		t.Errorf("diff of a.txt: %+v", f.Hunks)
	}
}

// countObjects counts the repository's loose and packed objects.
func countObjects(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, ".git", "objects"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
