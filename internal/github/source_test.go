package github

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/github/githubtest"
	"github.com/quorum-review/quorum/internal/storetest"
)

// fixture is a GitHub double serving one real repository with a pull
// request, and an App talking to it.
type fixture struct {
	gh   *githubtest.Server
	app  *App
	repo *changetest.Repo
	base string
	head string
	inst int64
}

func setup(t testing.TB, files int) *fixture {
	t.Helper()
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"main.go": "package main\n\nfunc main() {\n}\n", "README.md": "# demo\n"})
	base := r.Commit("base")
	changed := map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"}
	for i := range files {
		changed["pkg/f"+strconv.Itoa(i)+".go"] = "package pkg\n\n// F" + strconv.Itoa(i) + " is new.\nvar F" + strconv.Itoa(i) + " = 1\n"
	}
	r.Write(changed)
	head := r.Commit("head")
	srv := githubtest.New(t)
	srv.AddRepo("octo", "demo", r.Dir)
	srv.AddPull("octo", "demo", githubtest.Pull{Number: 7, Base: base, Head: head})
	app, err := New(Config{AppID: githubtest.AppID, PrivateKeyPEM: srv.PrivateKeyPEM(), APIURL: srv.APIURL(), CacheDir: t.TempDir()},
		storetest.SQLite(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{gh: srv, app: app, repo: r, base: base, head: head, inst: 99}
}

func (f *fixture) change(t *testing.T) *change.Change {
	t.Helper()
	c, err := f.app.Source(strconv.FormatInt(f.inst, 10)).Change(context.Background(), change.Ref{Owner: "octo", Repo: "demo", PRNumber: 7, Head: f.head})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func paths(c *change.Change) []string {
	var out []string
	for _, f := range c.Files {
		out = append(out, f.Path())
	}
	return out
}

func TestSourcePaginatesFilesAndFetchesTheTree(t *testing.T) {
	t.Parallel()
	f := setup(t, 5)
	f.gh.FilesPageSize(2)
	c := f.change(t)
	if c.HeadSHA != f.head || c.BaseSHA != f.base {
		t.Fatalf("change of %s..%s, want %s..%s", c.BaseSHA, c.HeadSHA, f.base, f.head)
	}
	if got := paths(c); len(got) != 6 {
		t.Fatalf("files %v, want main.go and 5 under pkg/", got)
	}
	pages := 0
	for _, r := range f.gh.Requests() {
		if strings.HasSuffix(r.Path, "/pulls/7/files") {
			pages++
		}
		if strings.HasSuffix(r.Path, "/pulls/7") && strings.Contains(r.Accept, "diff") {
			t.Error("asked for the whole diff although every patch was listed")
		}
	}
	if pages != 3 {
		t.Errorf("%d pages of files asked for, want 3 (6 files, 2 a page)", pages)
	}
	var main *change.File
	for _, file := range c.Files {
		if file.Path() == "main.go" {
			main = file
		}
	}
	if main == nil || !main.Changed(6) || main.Changed(1) {
		t.Fatalf("main.go's changed lines are wrong: %+v", main)
	}
	// The head tree was fetched: files read at head.
	data, err := c.ReadFile(context.Background(), "pkg/f3.go")
	if err != nil || !strings.Contains(string(data), "F3") {
		t.Fatalf("read pkg/f3.go at head: %q, %v", data, err)
	}
	if _, err := c.ReadFileAt(context.Background(), c.BaseSHA, "README.md"); err != nil {
		t.Fatalf("read README.md at base: %v", err)
	}
	// Reviewed again: the commits are there, nothing is fetched.
	fetches := len(f.gh.GitAuthorizations())
	f.change(t)
	if n := len(f.gh.GitAuthorizations()); n != fetches {
		t.Fatalf("%d more git requests for commits already fetched", n-fetches)
	}
}

func TestSourceFetchSendsTheTokenOnlyInAHeader(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	f.change(t)
	tokens := f.gh.Tokens()
	if len(tokens) != 1 {
		t.Fatalf("%d installation tokens issued, want 1", len(tokens))
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tokens[0]))
	auths := f.gh.GitAuthorizations()
	if len(auths) == 0 {
		t.Fatal("no git request reached the double")
	}
	for _, a := range auths {
		if a != want {
			t.Fatalf("git request with Authorization %q, want the installation token", a)
		}
	}
	// Nothing under the cache directory holds the token: not the remote's
	// URL in .git/config, not FETCH_HEAD, not a credential store.
	err := filepath.WalkDir(f.app.Config().CacheDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), tokens[0]) || strings.Contains(string(data), want[len("Basic "):]) {
			t.Errorf("%s holds the token", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(f.app.cacheDir(99, "octo", "demo"), "config"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "extraheader") || strings.Contains(string(cfg), "url =") {
		t.Errorf("the fetch directory's config names a remote or a header:\n%s", cfg)
	}
}

func TestSourceDiffsLocallyWhenGitHubRefusesTheDiff(t *testing.T) {
	t.Parallel()
	f := setup(t, 2)
	f.gh.AddPull("octo", "demo", githubtest.Pull{Number: 7, Base: f.base, Head: f.head, TooLarge: true})
	c := f.change(t)
	if got := paths(c); len(got) != 3 {
		t.Fatalf("files %v, want main.go and 2 under pkg/", got)
	}
	refused := false
	for _, r := range f.gh.Requests() {
		if strings.HasSuffix(r.Path, "/pulls/7") && strings.Contains(r.Accept, "diff") {
			refused = true
		}
	}
	if !refused {
		t.Fatal("the whole diff was never asked for, although patches were missing")
	}
	for _, file := range c.Files {
		if file.Path() == "main.go" && !file.Changed(6) {
			t.Fatalf("main.go line 6 should be changed: %+v", file.Hunks)
		}
	}
}

func TestSourceOfAnOlderHeadDiffsItsCommits(t *testing.T) {
	t.Parallel()
	f := setup(t, 1)
	f.repo.Write(map[string]string{"later.go": "package main\n"})
	newer := f.repo.Commit("newer")
	f.gh.SetHead("octo", "demo", 7, newer)
	c := f.change(t)
	for _, p := range paths(c) {
		if p == "later.go" {
			t.Fatal("the change of the older head holds a file of the newer one")
		}
	}
	if c.HeadSHA != f.head {
		t.Fatalf("head %s, want %s", c.HeadSHA, f.head)
	}
}

func TestSourceRemovesRepositoriesUnusedForAWeek(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	f.change(t)
	dir := f.app.cacheDir(99, "octo", "demo")
	other := filepath.Join(f.app.Config().CacheDir, "octo", "gone.git")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(8 * 24 * time.Hour)
	f.app.now = func() time.Time { return later }
	f.change(t) // uses demo.git again: only gone.git has been idle
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Fatalf("a repository unused for 8 days is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		t.Fatalf("the repository in use was removed: %v", err)
	}
}

func TestSourceDiffsLocallyFromTheMergeBase(t *testing.T) {
	t.Parallel()
	f := setup(t, 1)
	// The base branch moves on after the pull request forked: GitHub's
	// base is its new tip, the diff is still from the fork point.
	f.repo.Git("checkout", "-q", "-b", "main-later", f.base)
	f.repo.Write(map[string]string{"README.md": "# demo, later\n"})
	tip := f.repo.Commit("base moves on")
	f.gh.AddPull("octo", "demo", githubtest.Pull{Number: 7, Base: tip, Head: f.head, TooLarge: true})
	c, err := f.app.Source("99").Change(context.Background(), change.Ref{Owner: "octo", Repo: "demo", PRNumber: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths(c) {
		if p == "README.md" {
			t.Fatal("the local diff holds the base branch's own change: it was not taken from the merge base")
		}
	}
	if got := paths(c); len(got) != 2 || c.BaseSHA != f.base {
		t.Fatalf("files %v from %s, want main.go and pkg/f0.go from the fork point %s", got, c.BaseSHA, f.base)
	}
	// GitHub's own diff (not too large) is from the fork point too, and
	// so are the base files read.
	f.gh.AddPull("octo", "demo", githubtest.Pull{Number: 7, Base: tip, Head: f.head})
	c = f.change(t)
	if data, err := c.ReadFileAt(context.Background(), c.BaseSHA, "README.md"); err != nil || string(data) != "# demo\n" {
		t.Fatalf("README.md at base: %q, %v; want the fork point's", data, err)
	}
}

// TestSourceCachesPerInstallation: commits fetched with one installation's
// token are kept apart from another installation's fetches of the same
// repository.
func TestSourceCachesPerInstallation(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	f.change(t)
	if _, err := os.Stat(filepath.Join(f.app.cacheDir(99, "octo", "demo"), "HEAD")); err != nil {
		t.Fatalf("installation 99's fetch is not in its own directory: %v", err)
	}
	if a, b := f.app.cacheDir(99, "Octo", "Demo"), f.app.cacheDir(100, "octo", "demo"); a == b {
		t.Fatalf("installations 99 and 100 share %s", a)
	}
}
