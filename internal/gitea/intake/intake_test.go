package intake_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/delivery"
	"github.com/quorum-review/quorum/internal/gitea"
	"github.com/quorum-review/quorum/internal/gitea/giteatest"
	"github.com/quorum-review/quorum/internal/gitea/intake"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

func TestMain(m *testing.M) { os.Exit(giteatest.Run(m)) }

// Two connected repositories of different owners, as `quorum gitea
// connect` records them.
const (
	repoA, secretA = 101, "secret of alice/widgets"
	repoB, secretB = 202, "secret of bob/gadgets"
)

// fixture is a real intake on a real database with River working its
// queue, behind a real HTTP server.
type fixture struct {
	db   *store.DB
	srv  *httptest.Server
	jobs <-chan *river.Event
	seq  atomic.Int64
}

func setup(t *testing.T, db *store.DB, cfg intake.Config, api *gitea.Client) *fixture {
	t.Helper()
	cfg.BotName = cmpOr(cfg.BotName, "quorum-bot")
	cfg.DocsURL = "https://docs.example/quorum"
	in, err := intake.New(cfg, db, api, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rw := river.NewWorkers()
	in.Register(rw)
	river.AddWorker(rw, &pipeline.Worker{}) // inserted here, worked elsewhere
	jobs, err := db.ConfigureJobs(store.JobsConfig{
		Workers: rw, Work: true, Queues: map[string]int{intake.Queue: 1}, PollInterval: 100 * time.Millisecond, QueuePollInterval: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := jobs.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	ctx, stop := context.WithCancel(context.Background())
	if err := jobs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		cancel()
		_ = jobs.Stop(context.Background())
	})
	srv := httptest.NewServer(in)
	t.Cleanup(srv.Close)
	return &fixture{db: db, srv: srv, jobs: events}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// connect records a connected repository as `quorum gitea connect` does:
// the owner's account, the repository as its installation, the hook.
func connect(t *testing.T, db *store.DB, repoID int64, owner, name, secret string) account.Installation {
	t.Helper()
	ctx := context.Background()
	var inst account.Installation
	err := db.InTx(ctx, func(tx store.Tx) error {
		acct, err := account.EnsureOwner(ctx, tx, account.PlatformGitea, account.Owner{ExternalID: repoID * 10, Login: owner, Type: "User"})
		if err != nil {
			return err
		}
		inst, err = account.Install(ctx, tx, acct, repoID, []account.RepoRef{{Owner: owner, Name: name, ExternalID: repoID}}, time.Now())
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO gitea_hooks (installation_id, repository_id, hook_id, secret, webhook_url, created_at) VALUES ($1, $2, 1, $3, 'http://quorum/gitea/webhook', 0)`,
			inst.ID, repoID, secret)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func setupConnected(t *testing.T, db *store.DB, cfg intake.Config) *fixture {
	t.Helper()
	f := setup(t, db, cfg, nil)
	connect(t, db, repoA, "alice", "widgets", secretA)
	connect(t, db, repoB, "bob", "gadgets", secretB)
	return f
}

// pullRequest is a pull_request payload as Gitea v1.26.0 sends it
// (modules/structs/hook.go PullRequestPayload), with the fields quorum
// reads.
func pullRequest(repoID int64, owner, name, action string, number int, head, base string, draft bool) []byte {
	return mustJSON(map[string]any{
		"action": action,
		"number": number,
		"pull_request": map[string]any{
			"id": 9000 + number, "number": number, "title": "Bigger widgets", "state": "open", "draft": draft,
			"head": map[string]any{"ref": "feature", "sha": head, "repo_id": repoID},
			"base": map[string]any{"ref": "main", "sha": base, "repo_id": repoID},
		},
		"repository": repositoryJSON(repoID, owner, name),
		"sender":     map[string]any{"id": 1, "login": owner},
		"commit_id":  "",
	})
}

func repositoryJSON(repoID int64, owner, name string) map[string]any {
	return map[string]any{"id": repoID, "name": name, "full_name": owner + "/" + name,
		"owner": map[string]any{"id": repoID * 10, "login": owner}}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func sign(body []byte, key string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// delivery is one request as Gitea sends it.
type giteaDelivery struct {
	repository string // the URL's ?repository=
	event      string
	id         string
	body       []byte
	headers    map[string]string // set last; "" deletes
}

// send posts d, signed with secret unless d.headers sets the signature.
func (f *fixture) send(t *testing.T, d giteaDelivery, secret string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+intake.Path+"?repository="+d.repository, bytes.NewReader(d.body))
	if err != nil {
		t.Fatal(err)
	}
	if d.id == "" {
		d.id = fmt.Sprintf("6d5e1a4c-0000-4000-8000-%012d", f.seq.Add(1))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitea-Event", d.event)
	req.Header.Set("X-Gitea-Event-Type", d.event)
	req.Header.Set("X-Gitea-Delivery", d.id)
	req.Header.Set("X-Gitea-Signature", sign(d.body, secret))
	for k, v := range d.headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var body struct {
		Status string `json:"status"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	_ = json.Unmarshal(raw, &body)
	if body.Status == "" {
		body.Status = body.Title + ": " + body.Detail
	}
	return res, body.Status
}

// deliver sends a delivery of repository A, expects it queued, and waits
// until its job is done.
func (f *fixture) deliver(t *testing.T, event string, body []byte) {
	t.Helper()
	res, got := f.send(t, giteaDelivery{repository: strconv.Itoa(repoA), event: event, body: body}, secretA)
	if res.StatusCode != http.StatusAccepted || got != "queued" {
		t.Fatalf("%s: %d %q, want 202 queued", event, res.StatusCode, got)
	}
	f.waitIntake(t)
}

// waitIntake waits for the next intake job to finish and fails the test
// when it failed.
func (f *fixture) waitIntake(t *testing.T) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-f.jobs:
			if ev.Job.Kind != (intake.DeliveryArgs{}).Kind() {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("intake job %s: %v", ev.Kind, ev.Job.Errors)
			}
			return
		case <-deadline:
			t.Fatal("intake job not done within 30s")
		}
	}
}

// reviewJobs lists the queued review jobs' arguments, oldest first, with
// the rerun key when there is one.
func reviewJobs(t *testing.T, db *store.DB) []map[string]any {
	t.Helper()
	return storetest.JobArgs(t, db, (pipeline.ReviewArgs{}).Kind())
}

func count(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func newestHead(t *testing.T, db *store.DB, pr int) string {
	t.Helper()
	var head string
	err := db.Reader().QueryRow(context.Background(), `SELECT p.head_sha FROM pull_requests p JOIN repositories r ON r.id = p.repository_id
WHERE r.owner = 'alice' AND r.name = 'widgets' AND p.pr_number = $1`, pr).Scan(&head)
	if err != nil {
		t.Fatalf("newest head of #%d: %v", pr, err)
	}
	return head
}

const (
	base  = "1111111111111111111111111111111111111111"
	head1 = "2222222222222222222222222222222222222222"
	head2 = "3333333333333333333333333333333333333333"
)

// Opened and synchronized (a push to the branch) queue a review of the
// head, of source gitea at the repository's id, from the pull request's
// base; closed records that the pull request has no head any more; an
// edit of the title alone asks for nothing; a change of base reviews the
// head again.
func TestPullRequestQueuesReviews(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupConnected(t, b.Open(t), intake.Config{})
		f.deliver(t, "pull_request", pullRequest(repoA, "alice", "widgets", "opened", 3, head1, base, false))
		f.deliver(t, "pull_request", pullRequest(repoA, "alice", "widgets", "synchronized", 3, head2, base, false))
		jobs := reviewJobs(t, f.db)
		if len(jobs) != 2 {
			t.Fatalf("%d review jobs, want 2: %v", len(jobs), jobs)
		}
		for i, want := range []string{head1, head2} {
			j := jobs[i]
			if j["head"] != want || j["base"] != base || j["source"] != intake.Source || j["location"] != strconv.Itoa(repoA) ||
				j["owner"] != "alice" || j["repo"] != "widgets" || j["pr"] != float64(3) {
				t.Errorf("review job %d = %v, want head %s of alice/widgets#3 from %s, source gitea at %d", i, j, want, base, repoA)
			}
		}

		edited := mustJSON(withChanges(pullRequest(repoA, "alice", "widgets", "edited", 3, head2, base, false), map[string]any{"title": map[string]any{"from": "Big widgets"}}))
		f.deliver(t, "pull_request", edited)
		if n := len(reviewJobs(t, f.db)); n != 2 {
			t.Errorf("a new title of a head already asked for queued a review: %d jobs, want 2", n)
		}
		rebased := mustJSON(withChanges(pullRequest(repoA, "alice", "widgets", "edited", 3, head2, head1, false), map[string]any{"ref": map[string]any{"from": "main"}}))
		f.deliver(t, "pull_request", rebased)
		if jobs := reviewJobs(t, f.db); len(jobs) != 3 || jobs[2]["head"] != head2 || jobs[2]["base"] != head1 {
			t.Errorf("a change of base did not review the head again from the new base: %v", jobs)
		}

		f.deliver(t, "pull_request", pullRequest(repoA, "alice", "widgets", "closed", 3, head2, base, false))
		if got := newestHead(t, f.db, 3); got != "" {
			t.Errorf("after closed the newest head is %q, want none", got)
		}
	})
}

func withChanges(body []byte, changes map[string]any) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	m["changes"] = changes
	return m
}

// A work-in-progress pull request (Gitea's draft: a WIP title prefix) is
// not reviewed until its title loses the prefix, unless drafts are
// reviewed.
func TestDrafts(t *testing.T) {
	t.Parallel()
	f := setupConnected(t, storetest.SQLite(t), intake.Config{})
	f.deliver(t, "pull_request", pullRequest(repoA, "alice", "widgets", "opened", 4, head1, base, true))
	f.deliver(t, "pull_request", pullRequest(repoA, "alice", "widgets", "synchronized", 4, head2, base, true))
	if jobs := reviewJobs(t, f.db); len(jobs) != 0 {
		t.Fatalf("a WIP pull request was queued: %v", jobs)
	}
	ready := mustJSON(withChanges(pullRequest(repoA, "alice", "widgets", "edited", 4, head2, base, false), map[string]any{"title": map[string]any{"from": "WIP: Bigger widgets"}}))
	f.deliver(t, "pull_request", ready)
	if jobs := reviewJobs(t, f.db); len(jobs) != 1 || jobs[0]["head"] != head2 {
		t.Fatalf("the title lost its WIP prefix: jobs %v, want one of %s", jobs, head2)
	}

	g := setupConnected(t, storetest.SQLite(t), intake.Config{ReviewDrafts: true})
	g.deliver(t, "pull_request", pullRequest(repoA, "alice", "widgets", "opened", 4, head1, base, true))
	if jobs := reviewJobs(t, g.db); len(jobs) != 1 {
		t.Fatalf("with ReviewDrafts a WIP pull request was not queued: %v", jobs)
	}
}

// nothingStored fails the test when any delivery or job was stored.
func nothingStored(t *testing.T, db *store.DB, what string) {
	t.Helper()
	if n := count(t, db, `SELECT COUNT(*) FROM gitea_deliveries`); n != 0 {
		t.Errorf("%s: %d deliveries stored, want none", what, n)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM river_job`); n != 0 {
		t.Errorf("%s: %d jobs queued, want none", what, n)
	}
}

// The signature is checked against the secret of the repository the URL
// names, before anything else: a wrong or missing one, an unknown
// repository, and another repository's secret are all refused with the
// same 401, and store nothing.
func TestSignature(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupConnected(t, b.Open(t), intake.Config{})
		body := pullRequest(repoA, "alice", "widgets", "opened", 3, head1, base, false)
		a := strconv.Itoa(repoA)
		cases := []struct {
			name   string
			d      giteaDelivery
			secret string
		}{
			{"wrong secret", giteaDelivery{repository: a, body: body}, "not the secret"},
			{"no signature", giteaDelivery{repository: a, body: body, headers: map[string]string{"X-Gitea-Signature": ""}}, secretA},
			{"prefixed signature", giteaDelivery{repository: a, body: body, headers: map[string]string{"X-Gitea-Signature": "sha256=" + sign(body, secretA)}}, secretA},
			{"signature of other bytes", giteaDelivery{repository: a, body: body, headers: map[string]string{"X-Gitea-Signature": sign(append(body, ' '), secretA)}}, secretA},
			{"unknown repository", giteaDelivery{repository: "303", body: body}, secretA},
			{"no repository", giteaDelivery{repository: "", body: body}, secretA},
			{"A's secret, B named", giteaDelivery{repository: strconv.Itoa(repoB), body: body}, secretA},
			// Checked before parsing: not JSON, but refused for its signature.
			{"wrong secret, not JSON", giteaDelivery{repository: a, body: []byte("{")}, "not the secret"},
		}
		var first string
		for _, c := range cases {
			c.d.event = "pull_request"
			res, got := f.send(t, c.d, c.secret)
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: %d %q, want 401", c.name, res.StatusCode, got)
			}
			if first == "" {
				first = got
			} else if got != first {
				t.Errorf("%s answered %q, unlike a wrong signature (%q): the answer tells which repositories are connected", c.name, got, first)
			}
		}
		nothingStored(t, f.db, "refused deliveries")
		if n := count(t, f.db, `SELECT COUNT(*) FROM gitea_hooks WHERE last_delivery_at IS NOT NULL`); n != 0 {
			t.Errorf("refused deliveries set last_delivery_at on %d hooks", n)
		}

		// Forgejo's twin headers stand in for Gitea's.
		res, got := f.send(t, giteaDelivery{repository: a, body: body, headers: map[string]string{
			"X-Gitea-Signature": "", "X-Forgejo-Signature": sign(body, secretA),
			"X-Gitea-Event": "", "X-Forgejo-Event": "pull_request",
		}}, secretA)
		if res.StatusCode != http.StatusAccepted || got != "queued" {
			t.Errorf("Forgejo's headers: %d %q, want 202 queued", res.StatusCode, got)
		}
	})
}

// A delivery signed with repository A's secret, to A's address, whose
// payload names repository B, is refused and stores nothing: whoever can
// read A's hook secret must not file events for B.
func TestPayloadOfAnotherRepositoryRefused(t *testing.T) {
	t.Parallel()
	f := setupConnected(t, storetest.SQLite(t), intake.Config{})
	for _, body := range [][]byte{
		pullRequest(repoB, "bob", "gadgets", "opened", 3, head1, base, false),
		[]byte(`{"action":"opened","number":3,"pull_request":{"head":{"sha":"` + head1 + `"}}}`), // no repository at all
	} {
		res, got := f.send(t, giteaDelivery{repository: strconv.Itoa(repoA), event: "pull_request", body: body}, secretA)
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("payload of another repository: %d %q, want 401", res.StatusCode, got)
		}
	}
	nothingStored(t, f.db, "payload of another repository")
}

// A redelivery (the same X-Gitea-Delivery) is answered 202 duplicate and
// queues nothing more.
func TestRedeliveryIsANoOp(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setupConnected(t, b.Open(t), intake.Config{})
		d := giteaDelivery{repository: strconv.Itoa(repoA), event: "pull_request", id: "a1b2c3d4-0000-4000-8000-000000000001",
			body: pullRequest(repoA, "alice", "widgets", "opened", 3, head1, base, false)}
		res, got := f.send(t, d, secretA)
		if res.StatusCode != http.StatusAccepted || got != "queued" {
			t.Fatalf("first delivery: %d %q, want 202 queued", res.StatusCode, got)
		}
		f.waitIntake(t)
		// A replay with another head in the same delivery's name.
		d.body = pullRequest(repoA, "alice", "widgets", "synchronized", 3, head2, base, false)
		res, got = f.send(t, d, secretA)
		if res.StatusCode != http.StatusAccepted || got != "duplicate" {
			t.Fatalf("redelivery: %d %q, want 202 duplicate", res.StatusCode, got)
		}
		if n := count(t, f.db, `SELECT COUNT(*) FROM river_job WHERE kind = $1`, (intake.DeliveryArgs{}).Kind()); n != 1 {
			t.Errorf("%d intake jobs, want 1", n)
		}
		if jobs := reviewJobs(t, f.db); len(jobs) != 1 || jobs[0]["head"] != head1 {
			t.Errorf("review jobs %v, want only the first delivery's", jobs)
		}
	})
}

// What is wrong with a request is refused before it is stored: a method
// other than POST, a body over 25 MiB, missing headers, another content
// type, bytes that are not UTF-8. A signed delivery of an event quorum
// does not act on (Gitea's test delivery is a push) is answered 202
// ignored, and still tells connect that deliveries arrive.
func TestRefusals(t *testing.T) {
	t.Parallel()
	f := setupConnected(t, storetest.SQLite(t), intake.Config{})
	a := strconv.Itoa(repoA)

	res, err := http.Get(f.srv.URL + intake.Path + "?repository=" + a)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != http.MethodPost {
		t.Errorf("GET: %d Allow %q, want 405 Allow POST", res.StatusCode, res.Header.Get("Allow"))
	}

	big := bytes.Repeat([]byte(" "), delivery.MaxBody+1)
	res, got := f.send(t, giteaDelivery{repository: a, event: "pull_request", body: big}, secretA)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 25 MiB: %d %q, want 413", res.StatusCode, got)
	}

	body := pullRequest(repoA, "alice", "widgets", "opened", 3, head1, base, false)
	notUTF8 := append(bytes.Clone(body[:len(body)-1]), []byte(`,"x":"`+"\xff\xfe"+`"}`)...)
	for _, c := range []struct {
		name string
		d    giteaDelivery
		want int
	}{
		{"no event", giteaDelivery{body: body, headers: map[string]string{"X-Gitea-Event": ""}}, http.StatusBadRequest},
		{"no delivery id", giteaDelivery{event: "pull_request", body: body, headers: map[string]string{"X-Gitea-Delivery": ""}}, http.StatusBadRequest},
		{"form content", giteaDelivery{event: "pull_request", body: body, headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, http.StatusUnsupportedMediaType},
		{"not UTF-8", giteaDelivery{event: "pull_request", body: notUTF8}, http.StatusBadRequest},
		{"not JSON", giteaDelivery{event: "pull_request", body: []byte("[1,")}, http.StatusBadRequest},
	} {
		c.d.repository = a
		res, got := f.send(t, c.d, secretA)
		if res.StatusCode != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, res.StatusCode, got, c.want)
		}
	}
	nothingStored(t, f.db, "refused requests")

	push := mustJSON(map[string]any{"ref": "refs/heads/main", "repository": repositoryJSON(repoA, "alice", "widgets")})
	res, got = f.send(t, giteaDelivery{repository: a, event: "push", body: push}, secretA)
	if res.StatusCode != http.StatusAccepted || got != "ignored" {
		t.Errorf("push: %d %q, want 202 ignored", res.StatusCode, got)
	}
	nothingStored(t, f.db, "an ignored push")
	issue := mustJSON(map[string]any{"action": "created", "is_pull": false, "issue": map[string]any{"number": 5},
		"comment":    map[string]any{"id": 1, "body": "@quorum-bot review", "user": map[string]any{"login": "alice"}},
		"repository": repositoryJSON(repoA, "alice", "widgets")})
	res, got = f.send(t, giteaDelivery{repository: a, event: "issue_comment", body: issue}, secretA)
	if res.StatusCode != http.StatusAccepted || got != "ignored" {
		t.Errorf("a comment on an issue, not a pull request: %d %q, want 202 ignored", res.StatusCode, got)
	}
	nothingStored(t, f.db, "a comment on an issue")
	last, err := gitea.LastDelivery(context.Background(), f.db, repoA)
	if err != nil || last.IsZero() {
		t.Errorf("after a signed push, the last delivery of A is %v (%v), want set", last, err)
	}
	if last, _ := gitea.LastDelivery(context.Background(), f.db, repoB); !last.IsZero() {
		t.Errorf("the last delivery of B is %v, want none", last)
	}
}

// A sender that announces a body and drips it is cut off with a 400 once
// the grace has passed, and its bytes stored nothing.
func TestSlowBodyCutOff(t *testing.T) {
	t.Parallel()
	f := setupConnected(t, storetest.SQLite(t), intake.Config{Limits: delivery.Limits{BodyGrace: 200 * time.Millisecond, MinBodyRate: 1 << 20}})
	conn, err := net.Dial("tcp", f.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST %s?repository=%d HTTP/1.1\r\nHost: quorum\r\nContent-Type: application/json\r\nX-Gitea-Event: pull_request\r\n"+
		"X-Gitea-Delivery: slow\r\nX-Gitea-Signature: 00\r\nContent-Length: %d\r\n\r\n{", intake.Path, repoA, 1<<20)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || !res.Close {
		t.Errorf("slow body: %d, closing %v; want 400 and the connection closed", res.StatusCode, res.Close)
	}
	nothingStored(t, f.db, "a slow body")
}

// The events of a disconnected repository that were stored before the
// disconnect are dropped, not reviewed.
func TestDisconnectedRepositoryIgnored(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	f := setupConnected(t, db, intake.Config{})
	// Stop River from working the delivery until the repository is gone:
	// store it as the handler does, then disconnect, then work.
	res, got := f.send(t, giteaDelivery{repository: strconv.Itoa(repoA), event: "pull_request",
		body: pullRequest(repoA, "alice", "widgets", "opened", 3, head1, base, false)}, secretA)
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("%d %q", res.StatusCode, got)
	}
	f.waitIntake(t)
	if len(reviewJobs(t, db)) != 1 {
		t.Fatal("the connected repository's pull request was not queued")
	}
	ctx := context.Background()
	err := db.InTx(ctx, func(tx store.Tx) error {
		inst, err := account.FindInstallation(ctx, tx, account.PlatformGitea, repoA)
		if err != nil {
			return err
		}
		_, err = account.Uninstall(ctx, tx, inst, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The hook row is still there (a delivery racing the disconnect).
	f.deliver(t, "pull_request", pullRequest(repoA, "alice", "widgets", "synchronized", 3, head2, base, false))
	if jobs := reviewJobs(t, db); len(jobs) != 1 {
		t.Errorf("a disconnected repository's push was queued: %v", jobs)
	}
	// A review command, even one naming another repository, is not looked
	// into (this intake has no Gitea client: asking would fail the job).
	f.deliver(t, "issue_comment", mustJSON(map[string]any{
		"action": "created", "is_pull": true, "issue": map[string]any{"number": 3},
		"comment":    map[string]any{"id": 7, "body": "@quorum-bot review", "user": map[string]any{"login": "bob"}},
		"repository": repositoryJSON(repoA, "bob", "gadgets"),
	}))
	if jobs := reviewJobs(t, db); len(jobs) != 1 {
		t.Errorf("a disconnected repository's review command was queued: %v", jobs)
	}
}

// Prune forgets deliveries handled or received more than the retention
// ago, and keeps the others.
func TestPruneForgetsOldDeliveries(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	now := time.Now()
	in, err := intake.New(intake.Config{BotName: "quorum-bot"}, db, nil, nil, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	at := func(ago time.Duration) any { return store.Micros(now.Add(-ago)) }
	for _, d := range []struct {
		id                string
		received, handled any
	}{
		{"old", at(30 * 24 * time.Hour), at(delivery.Retention + time.Hour)},
		{"recent", at(30 * 24 * time.Hour), at(delivery.Retention - time.Hour)},
		{"given up", at(delivery.Retention + time.Hour), nil},
		{"new", at(time.Hour), nil},
	} {
		if _, err := db.Writer().Exec(context.Background(), `INSERT INTO gitea_deliveries (delivery_id, event, repository_id, received_at, handled_at) VALUES ($1, 'pull_request', 1, $2, $3)`,
			d.id, d.received, d.handled); err != nil {
			t.Fatal(err)
		}
	}
	n, err := in.Prune(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2", n, err)
	}
	if got := count(t, db, `SELECT COUNT(*) FROM gitea_deliveries WHERE delivery_id IN ('recent', 'new')`); got != 2 {
		t.Errorf("%d of the recent deliveries kept, want 2", got)
	}
}
