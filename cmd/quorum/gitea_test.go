package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/gitea/giteatest"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// delivery is one webhook delivery Gitea sent, as the relay took it.
type delivery struct {
	uri    string
	header http.Header
	body   []byte
	action string
}

// relay stands between Gitea and quorum: it takes each delivery at once
// (Gitea gives up on a hook after a few seconds) and passes it on to
// quorum, unchanged, unless the test holds its event; held deliveries go on
// when released. This is how a test makes a webhook arrive late, as a
// busy network or a queued Gitea would, without touching either side.
type relay struct {
	*httptest.Server
	target string

	mu   sync.Mutex
	hold map[string]bool // X-Gitea-Event values held
	all  []delivery
	held []delivery
}

func newRelay(t *testing.T, target string) *relay {
	rl := &relay{target: target, hold: map[string]bool{}}
	rl.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var p struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(body, &p)
		d := delivery{uri: r.URL.RequestURI(), header: r.Header.Clone(), body: body, action: p.Action}
		rl.mu.Lock()
		rl.all = append(rl.all, d)
		held := rl.hold[r.Header.Get("X-Gitea-Event")]
		if held {
			rl.held = append(rl.held, d)
		}
		rl.mu.Unlock()
		if !held {
			go rl.forward(t, d)
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rl.Close)
	return rl
}

// forward sends d to quorum as Gitea sent it, and returns quorum's answer.
func (rl *relay) forward(t *testing.T, d delivery) (int, string) {
	req, err := http.NewRequest(http.MethodPost, rl.target+d.uri, bytes.NewReader(d.body))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	req.Header = d.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("relay to quorum: %v", err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// holding holds deliveries of the event from now on, or lets them through.
func (rl *relay) holding(event string, on bool) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.hold[event] = on
}

// waitHeld waits until n deliveries are held, and returns them.
func (rl *relay) waitHeld(t *testing.T, n int) []delivery {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rl.mu.Lock()
		got := append([]delivery(nil), rl.held...)
		rl.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries held within 60 s, want %d", len(got), n)
		}
		time.Sleep(50 * time.Millisecond) // polling Gitea's deliveries
	}
}

// release passes on the held delivery d.
func (rl *relay) release(t *testing.T, d delivery) {
	t.Helper()
	rl.mu.Lock()
	for i, h := range rl.held {
		if h.header.Get("X-Gitea-Delivery") == d.header.Get("X-Gitea-Delivery") {
			rl.held = append(rl.held[:i], rl.held[i+1:]...)
			break
		}
	}
	rl.mu.Unlock()
	if status, body := rl.forward(t, d); status != http.StatusAccepted {
		t.Fatalf("quorum answered the %s delivery %d %s, want 202", d.action, status, body)
	}
}

// giteaGate stands between quorum and Gitea (quorum's --gitea-url): it
// passes every request on, but while holding it keeps quorum's git fetches
// waiting, so that a test can push while a review fetches its head.
type giteaGate struct {
	*httptest.Server
	mu      sync.Mutex
	hold    bool
	fetches int           // fetches that reached the gate while holding
	open    chan struct{} // closed when the hold ends
}

func newGiteaGate(t *testing.T, target string) *giteaGate {
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	g := &giteaGate{open: make(chan struct{})}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/git-upload-pack") || strings.HasSuffix(r.URL.Path, "/info/refs") {
			g.mu.Lock()
			held, open := g.hold, g.open
			if held {
				g.fetches++
			}
			g.mu.Unlock()
			if held {
				select {
				case <-open:
				case <-r.Context().Done():
					return
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	// Before Close (cleanups run last first): a test that failed while
	// holding must not leave a fetch waiting.
	t.Cleanup(func() { g.holdFetches(false) })
	return g
}

// holdFetches starts or ends holding quorum's git fetches.
func (g *giteaGate) holdFetches(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case on && !g.hold:
		g.hold, g.fetches, g.open = true, 0, make(chan struct{})
	case !on && g.hold:
		g.hold = false
		close(g.open)
	}
}

// waitFetch waits until a fetch is held.
func (g *giteaGate) waitFetch(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		g.mu.Lock()
		n := g.fetches
		g.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("quorum did not fetch the pull request within 60 s")
		}
		time.Sleep(50 * time.Millisecond) // polling quorum's progress
	}
}

// giteaReview is a review as Gitea's API gives it.
type giteaReview struct {
	ID       int64  `json:"id"`
	State    string `json:"state"`
	Body     string `json:"body"`
	CommitID string `json:"commit_id"`
	User     struct {
		Login string `json:"login"`
	} `json:"user"`
	CommentsCount int `json:"comments_count"`
}

// giteaComment is a review comment as Gitea's API gives it.
type giteaComment struct {
	Path     string `json:"path"`
	Body     string `json:"body"`
	Position int    `json:"position"`
	CommitID string `json:"commit_id"`
}

// TestGiteaEndToEnd runs the whole loop against a real Gitea: a repository
// connected with quorum gitea connect, a pull request opened through
// Gitea's API, Gitea's own webhook, the review posted on the right lines
// and read back through Gitea's API, listed by quorum's API and announced
// to a registered endpoint; a push while a review runs (its webhook held
// back) gets stale_head and nothing posted; a later push does not repeat
// what was posted; a replayed delivery is a no-op and a forged one stores
// nothing.
func TestGiteaEndToEnd(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		dir := storetest.SQLiteDir(t)
		giteaEndToEnd(t, "sq", store.Config{DataDir: dir}, "--data-dir", dir)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := storetest.PostgresURL(t)
		giteaEndToEnd(t, "pg", store.Config{URL: url}, "--database-url", url)
	})
}

func giteaEndToEnd(t *testing.T, prefix string, dbCfg store.Config, dbArgs ...string) {
	ctx := context.Background()
	srv := giteatest.Start(t)
	owner := srv.CreateUser(t, prefix+"-dev")
	bot := srv.CreateUser(t, prefix+"-quorum")
	repo := srv.CreateRepo(t, owner, "app")
	repoPath := "/repos/" + owner.Name + "/app"
	srv.API(t, owner.Token, http.MethodPut, repoPath+"/collaborators/"+bot.Name, map[string]any{"permission": "admin"}, nil)

	// main, and a branch whose head adds two printf mistakes: app.go:8 and
	// util.go:6.
	local := goanalysistest.NewRepo(t)
	local.Write(map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n", "app.go": "package app\n\nfunc Hello() string { return \"hi\" }\n"})
	local.Commit("base")
	local.Git("branch", "-M", "main")
	local.Git("checkout", "-q", "-b", "feature")
	local.Write(map[string]string{
		"app.go":  "package app\n\nimport \"fmt\"\n\nfunc Hello() string { return \"hi\" }\n\nfunc Greet(name string) string {\n\treturn fmt.Sprintf(\"hello %d\", name)\n}\n",
		"util.go": "package app\n\nimport \"fmt\"\n\nfunc Count(name string) string {\n\treturn fmt.Sprintf(\"%d items\", name)\n}\n",
	})
	head1 := local.Commit("greet and count")
	srv.Push(t, local.Dir, repo, owner, "main", "feature")

	// The bot's token has the scopes docs/gitea.md asks for, no more.
	botToken := srv.CreateToken(t, bot, "write:repository", "write:issue", "read:user", "read:organization")
	giteaEnv := env("QUORUM_GITEA_TOKEN", botToken)
	gw := newGiteaGate(t, srv.URL)
	url := serve(t, giteaEnv, append(dbArgs, "--gitea-url", gw.URL, "--gitea-cache-dir", t.TempDir(), "--webhook-allow-private")...)
	rl := newRelay(t, url)

	// Connect: the hook is created, and Gitea's test delivery reaches quorum.
	out, _, err := quorum(t, giteaEnv, append([]string{"gitea", "connect", "--repo", owner.Name + "/app", "--gitea-url", srv.URL,
		"--webhook-url", rl.URL + "/gitea/webhook"}, dbArgs...)...)
	if err != nil {
		t.Fatalf("gitea connect: %v\n%s", err, out)
	}
	if !strings.Contains(out, "connected "+owner.Name+"/app") || !strings.Contains(out, "the test delivery reached quorum") {
		rl.mu.Lock()
		t.Logf("the relay took %d deliveries", len(rl.all))
		rl.mu.Unlock()
		t.Fatalf("gitea connect said:\n%s\nwant connected, and the test delivery arrived", out)
	}

	// The customer's token and endpoint, on the gitea account; a GitHub
	// account of the same login sees nothing of it.
	tok, _, err := quorum(t, env(), append([]string{"token", "create", "--platform", "gitea", "--account", owner.Name, "--scope", "reviews:read,webhooks:write"}, dbArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	tok = strings.TrimSpace(tok)
	ghTok, _, err := quorum(t, env(), append([]string{"token", "create", "--account", owner.Name, "--scope", "reviews:read"}, dbArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	ghTok = strings.TrimSpace(ghTok)
	customer := newReceiver(t)
	customer.register(t, url, tok)

	// The pull request is opened, and pushed to before quorum hears of
	// it: its review, of the first head, must post nothing.
	// The pull request is opened, and quorum starts its review; while
	// quorum fetches the head, the branch is pushed to (its webhook held
	// back): the review of the first head must post nothing.
	rl.holding("pull_request", true)
	var pr struct {
		Number int `json:"number"`
	}
	gw.holdFetches(true)
	srv.API(t, owner.Token, http.MethodPost, repoPath+"/pulls", map[string]any{"head": "feature", "base": "main", "title": "Greet and count"}, &pr)
	opened := rl.waitHeld(t, 1)[0]
	rl.release(t, opened)
	gw.waitFetch(t)
	local.Write(map[string]string{"README": "app\n"})
	head2 := local.Commit("a readme")
	srv.Push(t, local.Dir, repo, owner, "feature")
	synced := rl.waitHeld(t, 1)[0] // the opened one was released
	gw.holdFetches(false)
	failed := customer.wait(t, "review.failed of the first head", eventOf("review.failed", pr.Number))
	if data := failed["data"].(map[string]any); data["reason"] != "stale_head" || data["head_sha"] != head1 {
		t.Errorf("review.failed %v, want stale_head of %s", data, head1)
	}
	if rs := botReviews(t, srv, owner, repoPath, pr.Number, bot.Name); len(rs) != 0 {
		t.Fatalf("posted on a stale head: %+v", rs)
	}

	// The push's delivery comes: the second head is reviewed and posted.
	rl.release(t, synced)
	rl.holding("pull_request", false)
	completed := customer.wait(t, "review.completed", func(env map[string]any) bool {
		data, _ := env["data"].(map[string]any)
		return env["event"] == "review.completed" && data["head_sha"] == head2
	})
	if data := completed["data"].(map[string]any); data["owner"] != owner.Name || data["repo"] != "app" {
		t.Errorf("review.completed %v", data)
	}
	customer.wait(t, "finding.created", eventOf("finding.created", 0))
	rs := waitBotReviews(t, srv, owner, repoPath, pr.Number, bot.Name, 1)
	if rs[0].CommitID != head2 || (rs[0].State != "REQUEST_CHANGES" && rs[0].State != "COMMENT") {
		t.Errorf("review %+v; want on %s, REQUEST_CHANGES or COMMENT", rs[0], head2)
	}
	cs := reviewComments(t, srv, owner, repoPath, pr.Number, rs[0].ID)
	where := map[string]bool{}
	for _, c := range cs {
		where[c.Path+":"+strconv.Itoa(c.Position)] = true
	}
	if !where["app.go:8"] || !where["util.go:6"] {
		t.Errorf("review comments at %v; want app.go:8 and util.go:6", where)
	}
	status, list := get(t, url+"/v1/reviews?owner="+owner.Name+"&repo=app&pr="+strconv.Itoa(pr.Number), tok)
	if reviews, _ := list["reviews"].([]any); status != http.StatusOK || len(reviews) != 1 || reviews[0].(map[string]any)["head_sha"] != head2 {
		t.Errorf("GET /v1/reviews: %d %v; want the posted review of %s (the stale head's is review.failed only)", status, list, head2)
	}
	// Another account's repository is a 404, as for any tenant.
	if status, list := get(t, url+"/v1/reviews?owner="+owner.Name+"&repo=app", ghTok); status != http.StatusNotFound {
		t.Errorf("GET /v1/reviews as the GitHub account of the same login: %d %v, want 404", status, list)
	}

	// A fix of util.go: app.go:8 is still wrong, but already commented.
	local.Write(map[string]string{"util.go": "package app\n\nimport \"fmt\"\n\nfunc Count(name string) string {\n\treturn fmt.Sprintf(\"%s items\", name)\n}\n"})
	head3 := local.Commit("fix the count")
	srv.Push(t, local.Dir, repo, owner, "feature")
	customer.wait(t, "review.completed of the fix", func(env map[string]any) bool {
		data, _ := env["data"].(map[string]any)
		return env["event"] == "review.completed" && data["head_sha"] == head3
	})
	rs = waitBotReviews(t, srv, owner, repoPath, pr.Number, bot.Name, 2)
	last := rs[len(rs)-1]
	if last.CommitID != head3 {
		t.Fatalf("last review on %s, want %s", last.CommitID, head3)
	}
	if cs := reviewComments(t, srv, owner, repoPath, pr.Number, last.ID); len(cs) != 0 {
		t.Errorf("the review of the fix repeats %d comment(s): %+v", len(cs), cs)
	}
	if !strings.Contains(last.Body, "already commented") {
		t.Errorf("the review of the fix does not say what it did not repeat:\n%s", last.Body)
	}

	// A replayed delivery does nothing; a forged one is refused and stores
	// nothing.
	db, err := store.Open(ctx, dbCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deliveries := func() int {
		var n int
		if err := db.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM gitea_deliveries`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := deliveries()
	if status, body := rl.forward(t, opened); status != http.StatusAccepted || !strings.Contains(body, "duplicate") {
		t.Errorf("replayed delivery: %d %s, want 202 duplicate", status, body)
	}
	forged := opened
	forged.body = bytes.Replace(opened.body, []byte(head1), []byte(head3), 1)
	forged.header = opened.header.Clone()
	forged.header.Set("X-Gitea-Delivery", "forged-1")
	if status, body := rl.forward(t, forged); status != http.StatusUnauthorized {
		t.Errorf("forged delivery: %d %s, want 401", status, body)
	}
	if n := deliveries(); n != before {
		t.Errorf("%d deliveries stored after a replay and a forgery, want %d", n, before)
	}
}

func botReviews(t *testing.T, srv *giteatest.Server, owner giteatest.User, repoPath string, pr int, bot string) []giteaReview {
	t.Helper()
	var all, mine []giteaReview
	srv.API(t, owner.Token, http.MethodGet, repoPath+"/pulls/"+strconv.Itoa(pr)+"/reviews", nil, &all)
	for _, r := range all {
		if r.User.Login == bot {
			mine = append(mine, r)
		}
	}
	return mine
}

// waitBotReviews waits until the bot has n reviews on the pull request.
func waitBotReviews(t *testing.T, srv *giteatest.Server, owner giteatest.User, repoPath string, pr int, bot string, n int) []giteaReview {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rs := botReviews(t, srv, owner, repoPath, pr, bot)
		if len(rs) >= n {
			return rs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d reviews by %s within 60 s, want %d", len(rs), bot, n)
		}
		time.Sleep(100 * time.Millisecond) // polling the posting job
	}
}

func reviewComments(t *testing.T, srv *giteatest.Server, owner giteatest.User, repoPath string, pr int, id int64) []giteaComment {
	t.Helper()
	var cs []giteaComment
	srv.API(t, owner.Token, http.MethodGet, repoPath+"/pulls/"+strconv.Itoa(pr)+"/reviews/"+strconv.FormatInt(id, 10)+"/comments", nil, &cs)
	return cs
}
