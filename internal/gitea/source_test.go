package gitea_test

import (
	"context"
	"encoding/base64"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/gitea"
	"github.com/quorum-review/quorum/internal/gitea/giteatest"
)

func TestMain(m *testing.M) { os.Exit(giteatest.Run(m)) }

// pullFixture is a repository on the test Gitea with one pull request.
type pullFixture struct {
	srv   *giteatest.Server
	user  giteatest.User
	repo  giteatest.Repo
	pr    int
	base  string // the commit the feature branch forked from
	first string // the feature branch's first commit: gauge.go only
	head  string // the feature branch's head
	later string // main's head, moved on after the fork
}

// setupPull pushes to a new private repository of a new user a main
// branch and a feature branch forked from it that adds gauge.go, then
// modifies widget.go and deletes legacy.go; main then moves on (adds
// later.go), so the merge base is not main's head. It opens the pull
// request through Gitea's API. The repository is private so that git's
// fetch needs the token too.
func setupPull(t *testing.T, user string) pullFixture {
	t.Helper()
	srv := giteatest.Start(t)
	u := srv.CreateUser(t, gitea.UniqueName(user))
	repo := srv.CreateRepo(t, u, "widgets")
	srv.API(t, u.Token, http.MethodPatch, "/repos/"+u.Name+"/widgets", map[string]any{"private": true}, nil)

	local := changetest.NewRepo(t)
	local.Write(map[string]string{
		"widget.go": "package widgets\n\n// Size is a widget's size.\nconst Size = 1\n\nfunc Area() int { return Size * Size }\n",
		"legacy.go": "package widgets\n\nconst Legacy = true\n",
	})
	base := local.Commit("base")
	local.Git("checkout", "-q", "-b", "feature")
	local.Write(map[string]string{"gauge.go": "package widgets\n\n// Gauge measures widgets.\ntype Gauge struct{}\n"})
	first := local.Commit("a gauge")
	local.Write(map[string]string{
		"widget.go": "package widgets\n\n// Size is a widget's size.\nconst Size = 2\n\nfunc Area() int { return Size * Size }\n\nfunc Volume() int { return Size * Area() }\n",
	})
	local.Git("rm", "-q", "legacy.go")
	head := local.Commit("bigger widgets, a gauge, no legacy")
	local.Git("checkout", "-q", "main")
	local.Write(map[string]string{"later.go": "package widgets\n\nconst Later = 1\n"})
	later := local.Commit("main moves on")
	srv.Push(t, local.Dir, repo, u, "main", "feature")

	var pr struct {
		Number int `json:"number"`
	}
	srv.API(t, u.Token, http.MethodPost, "/repos/"+u.Name+"/widgets/pulls", map[string]any{
		"head": "feature", "base": "main", "title": "Bigger widgets",
	}, &pr)
	if pr.Number == 0 {
		t.Fatal("Gitea opened the pull request without a number")
	}
	return pullFixture{srv: srv, user: u, repo: repo, pr: pr.Number, base: base, first: first, head: head, later: later}
}

// The change is the pull request's, from the merge base to the head: the
// modified, added and deleted files with their statuses and added lines,
// nothing of what main did after the fork, and files readable at head.
// The token is in no file the source wrote.
func TestChangeOfAPullRequest(t *testing.T) {
	t.Parallel()
	f := setupPull(t, "alice")
	dir := t.TempDir()
	src, err := newSource(t, f.srv.URL, f.user.Token, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := src.Change(ctx, change.Ref{Owner: f.user.Name, Repo: "widgets", PRNumber: f.pr})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseSHA != f.base || c.HeadSHA != f.head {
		t.Errorf("change from %s to %s, want from the merge base %s to the head %s (main is at %s)", c.BaseSHA, c.HeadSHA, f.base, f.head, f.later)
	}
	if c.Owner != f.user.Name || c.Repo != "widgets" || c.PRNumber != f.pr {
		t.Errorf("change of %s/%s#%d, want %s/widgets#%d", c.Owner, c.Repo, c.PRNumber, f.user.Name, f.pr)
	}
	type got struct {
		status change.Status
		added  []int
	}
	files := map[string]got{}
	for _, file := range c.Files {
		files[file.Path()] = got{file.Status, file.AddedLines()}
	}
	want := map[string]got{
		"widget.go": {change.StatusModified, []int{4, 7, 8}},
		"gauge.go":  {change.StatusAdded, []int{1, 2, 3, 4}},
		"legacy.go": {change.StatusDeleted, nil},
	}
	if len(files) != len(want) || len(c.Skipped) != 0 {
		t.Errorf("files %v, skipped %v; want exactly %v", files, c.Skipped, want)
	}
	for path, w := range want {
		g, ok := files[path]
		if !ok {
			t.Errorf("%s is not in the change", path)
			continue
		}
		if g.status != w.status || !slices.Equal(g.added, w.added) {
			t.Errorf("%s: %s with added lines %v, want %s with %v", path, g.status, g.added, w.status, w.added)
		}
	}
	content, err := c.ReadFile(ctx, "gauge.go")
	if err != nil || !strings.Contains(string(content), "type Gauge struct{}") {
		t.Errorf("gauge.go at head = %q, %v; want the pushed file", content, err)
	}

	assertNoToken(t, dir, f.user.Token)
}

// assertNoToken fails when a file under dir holds token (the source sends
// it as is, in an Authorization: token header).
func assertNoToken(t *testing.T, dir, token string) {
	t.Helper()
	forms := []string{token, base64.StdEncoding.EncodeToString([]byte(token))}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, form := range forms {
			if strings.Contains(string(b), form) {
				t.Errorf("%s holds the token", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("nothing under %s: the source fetched elsewhere", dir)
	}
}

// A head the pull request has moved on from is still the one reviewed,
// from the pull request's merge base.
func TestChangeOfAnEarlierHead(t *testing.T) {
	t.Parallel()
	f := setupPull(t, "carol")
	src, err := newSource(t, f.srv.URL, f.user.Token, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := src.Change(context.Background(), change.Ref{Owner: f.user.Name, Repo: "widgets", PRNumber: f.pr, Head: f.first})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, file := range c.Files {
		paths = append(paths, string(file.Status)+" "+file.Path())
	}
	if c.BaseSHA != f.base || c.HeadSHA != f.first || !slices.Equal(paths, []string{"added gauge.go"}) {
		t.Errorf("change from %s to %s of %v, want from %s to the asked-for head %s of [added gauge.go]", c.BaseSHA, c.HeadSHA, paths, f.base, f.first)
	}
}

// A token Gitea does not know gets the access error, which names neither
// the token nor leaves it on disk; a pull request that does not exist gets
// the not-found error.
func TestChangeErrors(t *testing.T) {
	t.Parallel()
	f := setupPull(t, "bob")
	ctx := context.Background()

	t.Run("wrong token", func(t *testing.T) {
		wrong := "0123456789abcdef0123456789abcdef01234567"
		dir := t.TempDir()
		src, err := newSource(t, f.srv.URL, wrong, dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.Change(ctx, change.Ref{Owner: f.user.Name, Repo: "widgets", PRNumber: f.pr})
		if err == nil || !strings.Contains(err.Error(), "the token lacks access to the repository") {
			t.Fatalf("error %v, want the access error", err)
		}
		if strings.Contains(err.Error(), wrong) {
			t.Errorf("the error names the token: %v", err)
		}
	})

	t.Run("another user's token", func(t *testing.T) {
		// Gitea hides a private repository from those who cannot read it.
		other := f.srv.CreateUser(t, gitea.UniqueName("mallory"))
		src, err := newSource(t, f.srv.URL, other.Token, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.Change(ctx, change.Ref{Owner: f.user.Name, Repo: "widgets", PRNumber: f.pr})
		if err == nil || !strings.Contains(err.Error(), "cannot see it") || strings.Contains(err.Error(), other.Token) {
			t.Fatalf("error %v, want the not-found error naming a private repository, without the token", err)
		}
	})

	t.Run("no such pull request", func(t *testing.T) {
		src, err := newSource(t, f.srv.URL, f.user.Token, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.Change(ctx, change.Ref{Owner: f.user.Name, Repo: "widgets", PRNumber: f.pr + 100})
		if err == nil || !strings.Contains(err.Error(), "no such pull request") {
			t.Fatalf("error %v, want the not-found error", err)
		}
		if strings.Contains(err.Error(), f.user.Token) {
			t.Errorf("the error names the token: %v", err)
		}
	})
}

// Owner and repository names that are not Gitea's are refused before any
// request is made.
func TestInvalidNamesAreRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	src, err := newSource(t, srv.URL, "secret-token", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []change.Ref{
		{Owner: "../alice", Repo: "widgets", PRNumber: 1},
		{Owner: "alice", Repo: "wid/gets", PRNumber: 1},
		{Owner: "..", Repo: "widgets", PRNumber: 1},
		{Owner: "alice", Repo: "widgets?x=1", PRNumber: 1},
	} {
		_, err := src.Change(context.Background(), ref)
		if err == nil || !strings.Contains(err.Error(), "invalid repository") {
			t.Errorf("%s/%s: error %v, want invalid repository", ref.Owner, ref.Repo, err)
		}
	}
	// The double answers; a valid name reaches it, so the count above
	// means something.
	_, _ = src.Change(context.Background(), change.Ref{Owner: "alice", Repo: "widgets", PRNumber: 1})
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want only the valid name's", n)
	}
}

// A Gitea nobody answers at gets an error that says so.
func TestUnreachableGitea(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	src, err := newSource(t, "http://"+addr, "secret-token", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Change(context.Background(), change.Ref{Owner: "alice", Repo: "widgets", PRNumber: 1})
	if err == nil || !strings.Contains(err.Error(), "cannot reach Gitea") || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("error %v, want cannot reach Gitea, without the token", err)
	}
}

// A pull request from a fork is fetched from the base repository, where
// Gitea keeps its head (refs/pull/<n>/head), with a token that can read
// only the base repository.
func TestChangeOfAPullRequestFromAFork(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	owner := srv.CreateUser(t, gitea.UniqueName("erin"))
	repo := srv.CreateRepo(t, owner, "widgets")
	local := changetest.NewRepo(t)
	local.Write(map[string]string{"widget.go": "package widgets\n\nconst Size = 1\n"})
	base := local.Commit("base")
	srv.Push(t, local.Dir, repo, owner, "main")

	contributor := srv.CreateUser(t, gitea.UniqueName("frank"))
	var fork giteatest.Repo
	srv.API(t, contributor.Token, http.MethodPost, "/repos/"+owner.Name+"/widgets/forks", map[string]any{}, &fork)
	fork.Owner, fork.Name = contributor.Name, "widgets"
	local.Git("checkout", "-q", "-b", "feature")
	local.Write(map[string]string{"widget.go": "package widgets\n\nconst Size = 3\n"})
	head := local.Commit("bigger")
	srv.Push(t, local.Dir, fork, contributor, "feature")
	var pr struct {
		Number int `json:"number"`
	}
	srv.API(t, contributor.Token, http.MethodPost, "/repos/"+owner.Name+"/widgets/pulls", map[string]any{
		"head": contributor.Name + ":feature", "base": "main", "title": "Bigger",
	}, &pr)

	src, err := newSource(t, srv.URL, owner.Token, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := src.Change(context.Background(), change.Ref{Owner: owner.Name, Repo: "widgets", PRNumber: pr.Number})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseSHA != base || c.HeadSHA != head || len(c.Files) != 1 || c.Files[0].Path() != "widget.go" || !slices.Equal(c.Files[0].AddedLines(), []int{3}) {
		t.Errorf("change from %s to %s of %d files, want widget.go line 3 from %s to %s", c.BaseSHA, c.HeadSHA, len(c.Files), base, head)
	}
}

// newSource returns the source of the Gitea at baseURL with token.
func newSource(t *testing.T, baseURL, token, dir string) (*gitea.Source, error) {
	t.Helper()
	api, err := gitea.NewClient(baseURL, token, nil, "test")
	if err != nil {
		return nil, err
	}
	return gitea.NewSource(api, dir)
}
