package change

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testRepo is a real git repository in a temp dir, driven by the git CLI
// with a fixed identity and date so commits are reproducible.
type testRepo struct {
	t   *testing.T
	dir string
	env []string
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git not found: %v", err)
	}
	dir := t.TempDir()
	r := &testRepo{t: t, dir: dir, env: []string{
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
	r.git("init", "-q", "-b", "main")
	return r
}

// git runs git in the repository and returns its trimmed output.
func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *testRepo) write(path, content string) {
	r.t.Helper()
	full := filepath.Join(r.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) remove(path string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.dir, filepath.FromSlash(path))); err != nil {
		r.t.Fatal(err)
	}
}

// commit stages everything and commits it, returning the commit's name.
func (r *testRepo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// numbered returns n lines "prefix 1" … "prefix n", newline-terminated.
func numbered(prefix string, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = prefix + " " + strconv.Itoa(i+1)
	}
	return lines
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// fileByPath returns the reviewed file at path (head path, or base path
// for a deleted file), failing the test when there is none.
func fileByPath(t *testing.T, c *Change, path string) *File {
	t.Helper()
	for _, f := range c.Files {
		if f.Path() == path {
			return f
		}
	}
	var paths []string
	for _, f := range c.Files {
		paths = append(paths, f.Path())
	}
	t.Fatalf("no reviewed file %s; have %v", path, paths)
	return nil
}
