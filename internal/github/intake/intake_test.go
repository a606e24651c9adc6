package intake_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/github"
	"github.com/quorum-review/quorum/internal/github/githubtest"
	"github.com/quorum-review/quorum/internal/github/intake"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/webhook"
)

const secret = "It's a Secret to Everybody"

// fixture is a real intake on a real database with River working its
// queue, behind a real HTTP server.
type fixture struct {
	db   *store.DB
	srv  *httptest.Server
	gh   *githubtest.Server
	jobs <-chan *river.Event
	seq  atomic.Int64
}

func setup(t *testing.T, b storetest.Backend, cfg intake.Config) *fixture {
	t.Helper()
	db := b.Open(t)
	// GitHub: the double, checking each request against GitHub's REST
	// description, through the App's real client.
	gh := githubtest.New(t)
	gh.AddRepo("Codertocat", "Hello-World", t.TempDir())
	app, err := github.New(github.Config{AppID: githubtest.AppID, PrivateKeyPEM: gh.PrivateKeyPEM(), APIURL: gh.APIURL()}, db, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.WebhookSecret = secret
	cfg.DocsURL = "https://docs.example/quorum"
	in, err := intake.New(cfg, db, app, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rw := river.NewWorkers()
	in.Register(rw)
	// Kinds the intake inserts; their queues are not worked here, except
	// webhook deliveries, which go out to the test's receivers.
	river.AddWorker(rw, &pipeline.Worker{})
	river.AddWorker(rw, &webhook.Worker{DB: db, AllowPrivate: true})
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
	return &fixture{db: db, srv: srv, gh: gh, jobs: events}
}

// example reads a payload of @octokit/webhooks-examples, changed by edit
// when given.
func example(t *testing.T, file string, edit func(m map[string]any)) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return raw
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sign(body []byte, key string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// post sends a delivery signed with the App's secret.
func (f *fixture) post(t *testing.T, name, delivery string, body []byte) *http.Response {
	t.Helper()
	return f.postSigned(t, name, delivery, body, sign(body, secret))
}

func (f *fixture) postSigned(t *testing.T, name, delivery string, body []byte, sig string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+intake.Path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", name)
	if delivery == "" {
		delivery = fmt.Sprintf("72d3162e-cc78-11e3-81ab-%012d", f.seq.Add(1))
	}
	req.Header.Set("X-GitHub-Delivery", delivery)
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// deliver posts a delivery, expects it queued, and waits until its job is
// done.
func (f *fixture) deliver(t *testing.T, name string, body []byte) {
	t.Helper()
	res := f.post(t, name, "", body)
	if got := status(t, res); res.StatusCode != http.StatusAccepted || got != "queued" {
		t.Fatalf("%s: %d %q, want 202 queued", name, res.StatusCode, got)
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

func status(t *testing.T, res *http.Response) string {
	t.Helper()
	var body struct{ Status string }
	raw, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(raw, &body)
	return body.Status
}

func count(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// reviewJobs lists the queued review jobs' arguments, oldest first, with
// the rerun key when there is one.
func reviewJobs(t *testing.T, db *store.DB) []map[string]any {
	t.Helper()
	return storetest.JobArgs(t, db, (pipeline.ReviewArgs{}).Kind())
}

func newestHead(t *testing.T, db *store.DB, owner, repo string, pr int) string {
	t.Helper()
	var head string
	err := db.Reader().QueryRow(context.Background(), `SELECT p.head_sha FROM pull_requests p JOIN repositories r ON r.id = p.repository_id
WHERE r.owner = $1 AND r.name = $2 AND p.pr_number = $3`, owner, repo, pr).Scan(&head)
	if err != nil {
		t.Fatalf("newest head of %s/%s#%d: %v", owner, repo, pr, err)
	}
	return head
}

func installationEvents(t *testing.T, db *store.DB, login string) []intake.InstallationData {
	t.Helper()
	ctx := context.Background()
	acct, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, login)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := event.List(ctx, db.Reader(), acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []intake.InstallationData
	for _, e := range evs {
		var d intake.InstallationData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if e.Name == event.InstallationDeleted {
			d.Platform = "deleted:" + d.Platform // tells the two apart in comparisons
		}
		out = append(out, d)
	}
	return out
}

func repos(rs ...string) []intake.RepoData {
	out := []intake.RepoData{}
	for _, r := range rs {
		owner, name, _ := strings.Cut(r, "/")
		out = append(out, intake.RepoData{Owner: owner, Repo: name})
	}
	return out
}

func TestInstallationLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		ctx := context.Background()

		// installation.created (integer timestamps): account, installation
		// and its repository appear, and installation.created is recorded.
		f.deliver(t, "installation", example(t, "installation.created.json", nil))
		inst, err := account.FindInstallation(ctx, f.db.Reader(), account.PlatformGitHub, 957387)
		if err != nil {
			t.Fatal(err)
		}
		if inst.Suspended || inst.Deleted {
			t.Errorf("new installation %+v is suspended or deleted", inst)
		}
		held, err := account.InstallationRepositories(ctx, f.db.Reader(), inst)
		if err != nil {
			t.Fatal(err)
		}
		if len(held) != 1 || held[0].Owner != "Codertocat" || held[0].Name != "Hello-World" {
			t.Errorf("installation holds %+v, want Codertocat/Hello-World", held)
		}
		created := intake.InstallationData{InstallationID: 957387, Platform: "github",
			Account: intake.AccountData{Login: "Codertocat", Type: "User"}, Repositories: repos("Codertocat/Hello-World")}
		if got := installationEvents(t, f.db, "Codertocat"); len(got) != 1 || !equal(got[0], created) {
			t.Fatalf("events after installation created: %+v, want %+v", got, created)
		}

		// A customer endpoint: the next events go out to it.
		received := make(chan map[string]any, 10)
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var env map[string]any
			_ = json.NewDecoder(r.Body).Decode(&env)
			received <- env
		}))
		t.Cleanup(receiver.Close)
		acct, err := account.Find(ctx, f.db.Reader(), account.PlatformGitHub, "Codertocat")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := webhook.Create(ctx, f.db.Writer(), acct.ID, receiver.URL, nil, "", "", time.Now()); err != nil {
			t.Fatal(err)
		}

		// installation_repositories added: the new repository is an install.
		f.deliver(t, "installation_repositories", example(t, "installation_repositories.added.json", nil))
		added := created
		added.Repositories = repos("Codertocat/Space")
		if got := installationEvents(t, f.db, "Codertocat"); len(got) != 2 || !equal(got[1], added) {
			t.Fatalf("events after repositories added: %+v, want last %+v", got, added)
		}
		select {
		case env := <-received:
			data, _ := json.Marshal(env["data"])
			if env["event"] != event.InstallationCreated || !strings.Contains(string(data), `"repositories":[{"owner":"Codertocat","repo":"Space"}]`) {
				t.Errorf("endpoint received %v", env)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("installation.created not delivered to the endpoint within 30s")
		}

		// installation_repositories removed (the example's installation
		// made ours): an uninstall from that repository.
		f.deliver(t, "installation_repositories", example(t, "installation_repositories.removed.json", func(m map[string]any) {
			m["installation"] = installationOf(t, "installation.created.json")
			m["repositories_removed"] = []any{map[string]any{"id": 186853007, "name": "Space", "full_name": "Codertocat/Space"}}
		}))
		removed := created
		removed.Platform = "deleted:github"
		removed.Repositories = repos("Codertocat/Space")
		if got := installationEvents(t, f.db, "Codertocat"); len(got) != 3 || !equal(got[2], removed) {
			t.Fatalf("events after repositories removed: %+v, want last %+v", got, removed)
		}

		// installation deleted: the installation and its repositories go,
		// and installation.deleted lists what it held.
		f.deliver(t, "installation", example(t, "installation.deleted.json", func(m map[string]any) {
			m["installation"] = installationOf(t, "installation.created.json")
		}))
		deleted := created
		deleted.Platform = "deleted:github"
		if got := installationEvents(t, f.db, "Codertocat"); len(got) != 4 || !equal(got[3], deleted) {
			t.Fatalf("events after installation deleted: %+v, want last %+v", got, deleted)
		}
		inst, err = account.FindInstallation(ctx, f.db.Reader(), account.PlatformGitHub, 957387)
		if err != nil || !inst.Deleted {
			t.Errorf("after deleted: %+v, %v; want deleted", inst, err)
		}
		if n := count(t, f.db, `SELECT COUNT(*) FROM repositories WHERE removed_at IS NULL`); n != 0 {
			t.Errorf("%d repositories still held after the installation was deleted", n)
		}
		if n := count(t, f.db, `SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1`, acct.ID); n != 3 {
			t.Errorf("%d webhook deliveries, want 3 (one per event after the endpoint was registered)", n)
		}
		// Every handled delivery's payload is dropped.
		if n := count(t, f.db, `SELECT COUNT(*) FROM github_deliveries WHERE payload IS NOT NULL OR handled_at IS NULL`); n != 0 {
			t.Errorf("%d deliveries still hold their payload", n)
		}
	})
}

// An installation stays with the account it was recorded on, whatever
// login its events give: a rename of that GitHub account renames the
// account, and another account's name moves nothing.
func TestInstallationKeepsItsAccount(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		ctx := context.Background()
		withAccount := func(file string, id int, login string) []byte {
			return example(t, file, func(m map[string]any) {
				inst := installationOf(t, "installation.created.json").(map[string]any)
				acct := inst["account"].(map[string]any)
				acct["id"], acct["login"] = id, login
				m["installation"] = inst
			})
		}
		f.deliver(t, "installation", example(t, "installation.created.json", nil))
		octo, err := account.Find(ctx, f.db.Reader(), account.PlatformGitHub, "Codertocat")
		if err != nil {
			t.Fatal(err)
		}

		// installation.created again, naming another GitHub account: the
		// installation, its repositories and the event stay Codertocat's.
		f.deliver(t, "installation", withAccount("installation.created.json", 4242, "mallory"))
		if _, err := account.Find(ctx, f.db.Reader(), account.PlatformGitHub, "mallory"); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("account mallory: %v, want none", err)
		}
		inst, err := account.FindInstallation(ctx, f.db.Reader(), account.PlatformGitHub, 957387)
		if err != nil || inst.AccountID != octo.ID {
			t.Fatalf("installation %+v, %v; want it on %s", inst, err, octo.ID)
		}
		if n := count(t, f.db, `SELECT COUNT(*) FROM repositories WHERE account_id <> $1`, octo.ID); n != 0 {
			t.Errorf("%d repositories on another account", n)
		}

		// Codertocat renamed (same GitHub account id): installation.deleted
		// is Codertocat's account's, now named renamed-octocat.
		f.deliver(t, "installation", withAccount("installation.deleted.json", 21031067, "renamed-octocat"))
		if n := count(t, f.db, `SELECT COUNT(*) FROM accounts`); n != 1 {
			t.Errorf("%d accounts, want 1", n)
		}
		renamed, err := account.Get(ctx, f.db.Reader(), octo.ID)
		if err != nil || renamed.Login != "renamed-octocat" {
			t.Errorf("account after the rename: %+v, %v; want login renamed-octocat", renamed, err)
		}
		got := installationEvents(t, f.db, "renamed-octocat")
		deleted := intake.InstallationData{InstallationID: 957387, Platform: "deleted:github",
			Account: intake.AccountData{Login: "renamed-octocat", Type: "User"}, Repositories: repos("Codertocat/Hello-World")}
		if len(got) != 3 || !equal(got[2], deleted) {
			t.Fatalf("events %+v, want 3, the last %+v", got, deleted)
		}
	})
}

func installationOf(t *testing.T, file string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(example(t, file, nil), &m); err != nil {
		t.Fatal(err)
	}
	return m["installation"]
}

func equal(a, b intake.InstallationData) bool {
	return a.InstallationID == b.InstallationID && a.Platform == b.Platform && a.Account == b.Account && slices.Equal(a.Repositories, b.Repositories)
}

func TestSuspendUnsuspend(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		ctx := context.Background()
		// RFC 3339 timestamps with an offset and fractions of a second.
		f.deliver(t, "installation", example(t, "installation.suspend.json", nil))
		inst, err := account.FindInstallation(ctx, f.db.Reader(), account.PlatformGitHub, 16598467)
		if err != nil || !inst.Suspended {
			t.Fatalf("after suspend: %+v, %v; want suspended", inst, err)
		}
		// A pull request of a suspended installation is not reviewed.
		f.deliver(t, "pull_request", example(t, "pull_request.opened.json", func(m map[string]any) {
			m["installation"] = map[string]any{"id": 16598467}
		}))
		if jobs := reviewJobs(t, f.db); len(jobs) != 0 {
			t.Errorf("review queued for a suspended installation: %v", jobs)
		}
		f.deliver(t, "installation", example(t, "installation.unsuspend.json", nil))
		inst, err = account.FindInstallation(ctx, f.db.Reader(), account.PlatformGitHub, 16598467)
		if err != nil || inst.Suspended {
			t.Fatalf("after unsuspend: %+v, %v; want current", inst, err)
		}
		// Suspending announces nothing.
		if n := count(t, f.db, `SELECT COUNT(*) FROM events`); n != 0 {
			t.Errorf("%d events after suspend and unsuspend, want 0", n)
		}
	})
}

const (
	head1 = "ec26c3e57ca3a959ca5aad62de7213c562f8c821" // the examples' head
	base1 = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
	head2 = "2d3a8ba4f2f1c5a0e2f6a6f1b9bd6b0c8f7e1a22"
)

func withHead(sha string) func(m map[string]any) {
	return func(m map[string]any) {
		m["pull_request"].(map[string]any)["head"].(map[string]any)["sha"] = sha
	}
}

func TestPullRequestQueuesReviews(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})

		// opened: a review of its head, for the installation it came from.
		f.deliver(t, "pull_request", example(t, "pull_request.opened.json", nil))
		jobs := reviewJobs(t, f.db)
		if len(jobs) != 1 {
			t.Fatalf("%d review jobs after opened, want 1", len(jobs))
		}
		j := jobs[0]
		if j["owner"] != "Codertocat" || j["repo"] != "Hello-World" || j["pr"] != 2.0 || j["head"] != head1 ||
			j["base"] != base1 || j["source"] != "github" || j["location"] != "1" || j["account_id"] == "" || j["repository_id"] == "" {
			t.Errorf("review job %v", j)
		}
		if got := newestHead(t, f.db, "Codertocat", "Hello-World", 2); got != head1 {
			t.Errorf("newest head %q, want %q", got, head1)
		}

		// Events the intake does not act on: 202, nothing stored.
		res := f.post(t, "pull_request", "", example(t, "pull_request.labeled.json", nil))
		if got := status(t, res); res.StatusCode != http.StatusAccepted || got != "ignored" {
			t.Errorf("labeled: %d %q, want 202 ignored", res.StatusCode, got)
		}
		res = f.post(t, "star", "", []byte(`{"action":"created"}`))
		if got := status(t, res); res.StatusCode != http.StatusAccepted || got != "ignored" {
			t.Errorf("star: %d %q, want 202 ignored", res.StatusCode, got)
		}
		if n := count(t, f.db, `SELECT COUNT(*) FROM github_deliveries`); n != 1 {
			t.Errorf("%d deliveries stored, want only the opened one", n)
		}

		// synchronize: a newer head replaces the older as the one to review.
		f.deliver(t, "pull_request", example(t, "pull_request.synchronize.json", withHead(head2)))
		if jobs := reviewJobs(t, f.db); len(jobs) != 2 || jobs[1]["head"] != head2 {
			t.Fatalf("review jobs after synchronize: %v", jobs)
		}
		if got := newestHead(t, f.db, "Codertocat", "Hello-World", 2); got != head2 {
			t.Errorf("newest head %q after synchronize, want %q", got, head2)
		}

		// closed: no head is current any more, so every queued review is
		// superseded.
		f.deliver(t, "pull_request", example(t, "pull_request.closed.json", withHead(head2)))
		if got := newestHead(t, f.db, "Codertocat", "Hello-World", 2); got != "" {
			t.Errorf("newest head %q after closed, want none", got)
		}
		// reopened: its head is current again.
		f.deliver(t, "pull_request", example(t, "pull_request.reopened.json", withHead(head2)))
		if got := newestHead(t, f.db, "Codertocat", "Hello-World", 2); got != head2 {
			t.Errorf("newest head %q after reopened, want %q", got, head2)
		}
	})
}

func TestDrafts(t *testing.T) {
	t.Parallel()
	asDraft := func(m map[string]any) {
		m["action"] = "opened"
		m["pull_request"].(map[string]any)["draft"] = true
	}
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		f.deliver(t, "pull_request", example(t, "pull_request.converted_to_draft.json", asDraft))
		if jobs := reviewJobs(t, f.db); len(jobs) != 0 {
			t.Fatalf("draft reviewed: %v", jobs)
		}
		f.deliver(t, "pull_request", example(t, "pull_request.ready_for_review.json", nil))
		if jobs := reviewJobs(t, f.db); len(jobs) != 1 || jobs[0]["head"] != head1 {
			t.Fatalf("review jobs after ready_for_review: %v", jobs)
		}

		drafts := setup(t, b, intake.Config{ReviewDrafts: true})
		drafts.deliver(t, "pull_request", example(t, "pull_request.converted_to_draft.json", asDraft))
		if jobs := reviewJobs(t, drafts.db); len(jobs) != 1 {
			t.Fatalf("with ReviewDrafts a draft gets %d reviews, want 1", len(jobs))
		}
	})
}

func TestRedeliveryIsANoOp(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		const id = "d3b07384-d9a0-4c9b-8f7e-2b1f6c3a9e10"
		body := example(t, "installation.created.json", nil)
		res := f.post(t, "installation", id, body)
		if got := status(t, res); res.StatusCode != http.StatusAccepted || got != "queued" {
			t.Fatalf("first delivery: %d %q", res.StatusCode, got)
		}
		f.waitIntake(t)
		res = f.post(t, "installation", id, body)
		if got := status(t, res); res.StatusCode != http.StatusAccepted || got != "duplicate" {
			t.Fatalf("redelivery: %d %q, want 202 duplicate", res.StatusCode, got)
		}
		if n := count(t, f.db, `SELECT COUNT(*) FROM river_job WHERE kind = 'github.delivery'`); n != 1 {
			t.Errorf("%d intake jobs, want 1", n)
		}
		if n := count(t, f.db, `SELECT COUNT(*) FROM events`); n != 1 {
			t.Errorf("%d events, want 1", n)
		}

		// A pull request redelivered (same delivery id, GitHub's
		// "Redeliver") queues one review.
		const pr = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
		body = example(t, "pull_request.opened.json", nil)
		f.post(t, "pull_request", pr, body)
		f.waitIntake(t)
		if got := status(t, f.post(t, "pull_request", pr, body)); got != "duplicate" {
			t.Errorf("pull request redelivery: %q, want duplicate", got)
		}
		if jobs := reviewJobs(t, f.db); len(jobs) != 1 {
			t.Errorf("%d review jobs after a redelivery, want 1", len(jobs))
		}
	})
}

func TestSignature(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		body := example(t, "pull_request.opened.json", nil)
		sha1 := hmac.New(sha256.New, []byte(secret)) // right key, wrong header form
		sha1.Write(body)
		for name, sig := range map[string]string{
			"missing":     "",
			"wrong key":   sign(body, "not the secret"),
			"other body":  sign(append(bytes.Clone(body), ' '), secret),
			"no prefix":   hex.EncodeToString(sha1.Sum(nil)),
			"sha1 prefix": "sha1=" + hex.EncodeToString(sha1.Sum(nil)),
			"not hex":     "sha256=zz",
		} {
			res := f.postSigned(t, "pull_request", "", body, sig)
			raw, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Content-Type") != "application/problem+json" ||
				!strings.Contains(string(raw), `"type":"https://docs.example/quorum/api/errors#unauthorized"`) {
				t.Errorf("%s signature: %d %s %s, want 401 problem+json", name, res.StatusCode, res.Header.Get("Content-Type"), raw)
			}
		}
		for _, table := range []string{"github_deliveries", "river_job", "accounts", "repositories", "pull_requests", "events"} {
			if n := count(t, f.db, `SELECT COUNT(*) FROM `+table); n != 0 {
				t.Errorf("%d rows in %s after badly signed deliveries, want 0", n, table)
			}
		}
		// The same body, signed right, is taken.
		f.deliver(t, "pull_request", body)
	})
}

func TestPingAndLimits(t *testing.T) {
	t.Parallel()
	f := setup(t, storetest.Backends()[0], intake.Config{})
	res := f.post(t, "ping", "", example(t, "ping.json", nil))
	if res.StatusCode != http.StatusOK {
		t.Errorf("ping: %d, want 200", res.StatusCode)
	}
	// A ping must be signed too.
	if res := f.postSigned(t, "ping", "", example(t, "ping.json", nil), sign([]byte("x"), secret)); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("badly signed ping: %d, want 401", res.StatusCode)
	}

	// Over 25 MiB: 413, with a length given or streamed without one.
	big := make([]byte, intake.MaxBody+1)
	if res := f.post(t, "pull_request", "", big); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("%d-byte body: %d, want 413", len(big), res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+intake.Path, io.MultiReader(bytes.NewReader(big)))
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", "streamed")
	req.Header.Set("X-Hub-Signature-256", sign(big, secret))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge || res.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("streamed %d-byte body: %d %s, want 413 problem+json", len(big), res.StatusCode, res.Header.Get("Content-Type"))
	}

	// Only POST.
	res, err = http.Get(f.srv.URL + intake.Path)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d Allow %q, want 405 Allow POST", res.StatusCode, res.Header.Get("Allow"))
	}
	if n := count(t, f.db, `SELECT COUNT(*) FROM github_deliveries`); n != 0 {
		t.Errorf("%d deliveries stored", n)
	}
}

// A delivery with no installation, or about repositories it does not name,
// is ignored rather than filed under a made-up installation 0.
func TestIncompleteDeliveriesIgnored(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		without := func(key string) func(m map[string]any) {
			return func(m map[string]any) { delete(m, key) }
		}
		set := func(key string, v any) func(m map[string]any) {
			return func(m map[string]any) { m[key] = v }
		}
		for _, c := range []struct {
			name, event, file string
			edit              func(m map[string]any)
		}{
			{"pull request without installation", "pull_request", "pull_request.opened.json", without("installation")},
			{"pull request of installation 0", "pull_request", "pull_request.opened.json", set("installation", map[string]any{"id": 0})},
			{"pull request of installation null", "pull_request", "pull_request.opened.json", set("installation", nil)},
			{"pull request without repository", "pull_request", "pull_request.opened.json", without("repository")},
			{"pull request of a repository without owner", "pull_request", "pull_request.opened.json", set("repository", map[string]any{"name": "Hello-World"})},
			{"comment without repository", "issue_comment", "issue_comment.created.json", without("repository")},
			{"comment without installation", "issue_comment", "issue_comment.created.json", without("installation")},
			{"installation without installation", "installation", "installation.created.json", without("installation")},
			{"repositories added without them", "installation_repositories", "installation_repositories.added.json", without("repositories_added")},
			{"repositories removed, none", "installation_repositories", "installation_repositories.removed.json", set("repositories_removed", []any{})},
		} {
			res := f.post(t, c.event, "", example(t, c.file, c.edit))
			if got := status(t, res); res.StatusCode != http.StatusAccepted || got != "ignored" {
				t.Errorf("%s: %d %q, want 202 ignored", c.name, res.StatusCode, got)
			}
		}
		for _, table := range []string{"github_deliveries", "river_job", "accounts", "installations"} {
			if n := count(t, f.db, `SELECT COUNT(*) FROM `+table); n != 0 {
				t.Errorf("%d rows in %s after incomplete deliveries, want 0", n, table)
			}
		}
	})
}

// rawDelivery sends, by hand, the headers of a delivery announcing size
// bytes, then body, and returns the connection; the response, if one
// comes, arrives on the channel.
func rawDelivery(t *testing.T, addr string, size int, body []byte) (net.Conn, <-chan *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: quorum\r\nContent-Type: application/json\r\nX-GitHub-Event: star\r\n"+
		"X-GitHub-Delivery: raw\r\nX-Hub-Signature-256: sha256=00\r\nContent-Length: %d\r\n\r\n", intake.Path, size)
	_, _ = conn.Write(body)
	resc := make(chan *http.Response, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return // closed
		}
		_, _ = io.ReadAll(res.Body)
		resc <- res
	}()
	return conn, resc
}

// TestSlowSendersCannotStarve: three connections announcing 25, 25 and 14
// MiB and dripping a byte at a time neither take the body budget from
// signed deliveries, which keep getting 202, nor hold on: after the grace
// they are answered 400 (issue 10 item 9: every delivery got 503 until
// the server's 30 s read timeout).
func TestSlowSendersCannotStarve(t *testing.T) {
	t.Parallel()
	in, err := intake.New(intake.Config{WebhookSecret: secret, BodyGrace: time.Second}, storetest.SQLite(t), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	t.Cleanup(srv.Close)
	start := time.Now()
	var answers []<-chan *http.Response
	for _, mib := range []int{25, 25, 14} {
		conn, resc := rawDelivery(t, srv.Listener.Addr().String(), mib<<20, []byte("{"))
		answers = append(answers, resc)
		go func() { // a byte every 200 ms, until refused or 10 s
			for range 50 {
				time.Sleep(200 * time.Millisecond)
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}()
	}
	f := &fixture{srv: srv}
	for i := range 10 {
		res := f.post(t, "star", "", []byte(`{"action":"created"}`))
		if got := status(t, res); res.StatusCode != http.StatusAccepted || got != "ignored" {
			t.Errorf("signed delivery %d beside the slow senders: %d %q, want 202 ignored", i, res.StatusCode, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, resc := range answers {
		select {
		case res := <-resc:
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("slow sender %d: %d, want 400", i, res.StatusCode)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("slow sender %d still connected %s after it started", i, time.Since(start).Round(time.Second))
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("slow senders were cut off after %s, want about the 1 s grace", took.Round(time.Millisecond))
	}
}

// TestBodyBudget: bodies held at once are bounded, counted as their bytes
// arrive: while one sender holds most of the budget, another body that
// would go over it is answered 503 with Retry-After 1; once the first
// ends, its share is free again.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	const budget = 1 << 20
	in, err := intake.New(intake.Config{WebhookSecret: secret, BodyBudget: budget, BodyGrace: 20 * time.Second},
		storetest.SQLite(t), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	// The holder sends 700 KiB of a 900 KiB body and waits.
	holder, answered := rawDelivery(t, addr, 900<<10, bytes.Repeat([]byte(" "), 700<<10))
	big := append([]byte(`{"action":"created"}`), bytes.Repeat([]byte(" "), 600<<10)...)
	f := &fixture{srv: srv}
	deadline := time.Now().Add(15 * time.Second)
	for {
		// The budget is first come, first served chunk by chunk: on a
		// loaded machine the holder's last chunks may arrive while a big
		// body holds its share, and then the holder is the one refused.
		// Then it starts again.
		select {
		case <-answered:
			holder, answered = rawDelivery(t, addr, 900<<10, bytes.Repeat([]byte(" "), 700<<10))
		default:
		}
		res := f.post(t, "star", "", big)
		if res.StatusCode == http.StatusServiceUnavailable {
			if res.Header.Get("Retry-After") != "1" || res.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("over the budget: Retry-After %q, %s; want 1, problem+json", res.Header.Get("Retry-After"), res.Header.Get("Content-Type"))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a body over what the holder left was not refused (last %d)", res.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	holder.Close()
	for {
		res := f.post(t, "star", "", big)
		if res.StatusCode == http.StatusAccepted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the budget was not freed after the holder left (last %d)", res.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// comment makes the example issue comment a comment on pull request 2 by
// login, with body.
func comment(t *testing.T, id int, login, body string) []byte {
	return example(t, "issue_comment.created.json", func(m map[string]any) {
		issue := m["issue"].(map[string]any)
		issue["number"] = 2
		issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"}
		c := m["comment"].(map[string]any)
		c["id"] = id
		c["body"] = body
		c["user"].(map[string]any)["login"] = login
	})
}

func TestCommentAsksForAReview(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{BotName: "reviewbot"})
		f.gh.SetPermission("Codertocat", "Hello-World", "Codertocat", "write")
		f.gh.SetPermission("Codertocat", "Hello-World", "drive-by", "read")
		f.gh.AddPull("Codertocat", "Hello-World", githubtest.Pull{Number: 2, Head: head2, Base: base1})

		// Reviewed once already when opened.
		f.deliver(t, "pull_request", example(t, "pull_request.synchronize.json", withHead(head2)))

		// Not a request, or not from someone who may write: nothing.
		f.deliver(t, "issue_comment", comment(t, 10, "Codertocat", "@quorum review")) // not our name
		f.deliver(t, "issue_comment", comment(t, 11, "Codertocat", "email me at x@reviewbot review"))
		f.deliver(t, "issue_comment", comment(t, 12, "drive-by", "@reviewbot review"))
		f.deliver(t, "issue_comment", example(t, "issue_comment.created.json", func(m map[string]any) {
			m["comment"].(map[string]any)["body"] = "@reviewbot review" // on an issue, not a pull request
		}))
		f.deliver(t, "issue_comment", example(t, "issue_comment.created.json", func(m map[string]any) {
			m["comment"].(map[string]any)["body"] = "@reviewbot review"
			delete(m, "issue") // on nothing said
		}))
		if jobs := reviewJobs(t, f.db); len(jobs) != 1 {
			t.Fatalf("%d review jobs, want just the first", len(jobs))
		}
		asked := false
		for _, r := range f.gh.Requests() {
			asked = asked || r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/repos/Codertocat/Hello-World/collaborators/drive-by/permission")
		}
		if !asked {
			t.Errorf("GitHub was not asked for the drive-by commenter's permission: %v", f.gh.Requests())
		}

		// A writer asks: the current head is reviewed again.
		f.deliver(t, "issue_comment", comment(t, 13, "Codertocat", "Pushed a fix.\n\n@ReviewBot review please"))
		jobs := reviewJobs(t, f.db)
		if len(jobs) != 2 || jobs[1]["head"] != head2 || jobs[1]["base"] != base1 || jobs[1]["pr"] != 2.0 || jobs[1]["location"] != "1" {
			t.Fatalf("review jobs after the request: %v", jobs)
		}
		// Each request is one more run, even of the same head.
		f.deliver(t, "issue_comment", comment(t, 14, "Codertocat", "@reviewbot[bot] review"))
		if jobs := reviewJobs(t, f.db); len(jobs) != 3 {
			t.Fatalf("%d review jobs after a second request, want 3", len(jobs))
		}
		if got := newestHead(t, f.db, "Codertocat", "Hello-World", 2); got != head2 {
			t.Errorf("newest head %q, want %q", got, head2)
		}
	})
}

// BenchmarkWebhook measures the answer GitHub waits for: a pull_request
// delivery verified, stored with its job and answered 202 ("queued"),
// against the same delivery verified and dropped ("ignored", no database)
// as the baseline of the same run.
func BenchmarkWebhook(b *testing.B) {
	for _, backend := range storetest.Backends() {
		b.Run(backend.Name, func(b *testing.B) {
			db := backend.Open(b)
			in, err := intake.New(intake.Config{WebhookSecret: secret}, db, nil, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			rw := river.NewWorkers()
			in.Register(rw)
			if _, err := db.ConfigureJobs(store.JobsConfig{Workers: rw}); err != nil { // insert-only
				b.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join("testdata", "pull_request.opened.json"))
			if err != nil {
				b.Fatal(err)
			}
			n := 0 // delivery ids stay new across -count runs
			for _, action := range []string{"ignored", "queued"} {
				body := raw
				if action == "ignored" {
					body = bytes.Replace(raw, []byte(`"action": "opened"`), []byte(`"action": "labeled"`), 1)
				}
				sig := sign(body, secret)
				b.Run(action, func(b *testing.B) {
					for b.Loop() {
						n++
						req := httptest.NewRequest(http.MethodPost, intake.Path, bytes.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("X-GitHub-Event", "pull_request")
						req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%s-%d", action, n))
						req.Header.Set("X-Hub-Signature-256", sig)
						w := httptest.NewRecorder()
						in.ServeHTTP(w, req)
						if w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), action) {
							b.Fatalf("%d %s", w.Code, w.Body)
						}
					}
				})
			}
		})
	}
}

func TestPruneForgetsOldDeliveries(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		clock := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		in, err := intake.New(intake.Config{WebhookSecret: secret}, db, nil, nil, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		at := func(d time.Duration) int64 { return clock.Now().Add(-d).UnixMicro() }
		for _, row := range []struct {
			id       string
			received int64
			handled  any
		}{
			{"old", at(30 * 24 * time.Hour), at(intake.Retention + time.Hour)},
			{"recent", at(30 * 24 * time.Hour), at(intake.Retention - time.Hour)},
			{"given up", at(intake.Retention + time.Hour), nil}, // its job was discarded
			{"unhandled", at(time.Hour), nil},
		} {
			if _, err := db.Writer().Exec(ctx, `INSERT INTO github_deliveries (delivery_id, event, payload, received_at, handled_at) VALUES ($1, 'installation', '{}', $2, $3)`,
				row.id, row.received, row.handled); err != nil {
				t.Fatal(err)
			}
		}
		n, err := in.Prune(ctx)
		if err != nil || n != 2 {
			t.Fatalf("Prune = %d, %v; want 2", n, err)
		}
		if left := count(t, db, `SELECT COUNT(*) FROM github_deliveries WHERE delivery_id IN ('recent', 'unhandled')`); left != 2 {
			t.Errorf("%d of the recent and unhandled deliveries left, want 2", left)
		}
		if left := count(t, db, `SELECT COUNT(*) FROM github_deliveries`); left != 2 {
			t.Errorf("%d deliveries left, want 2", left)
		}
	})
}

func TestBaseChangeReviewsAgain(t *testing.T) {
	t.Parallel()
	const base2 = "7b2f6c1e9d3a4b5c6d7e8f90a1b2c3d4e5f60718"
	edited := func(changes map[string]any, base string) func(m map[string]any) {
		return func(m map[string]any) {
			m["action"] = "edited"
			m["changes"] = changes
			m["pull_request"].(map[string]any)["base"].(map[string]any)["sha"] = base
		}
	}
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		f.deliver(t, "pull_request", example(t, "pull_request.opened.json", nil))

		// A new title: nothing to review, nothing stored.
		res := f.post(t, "pull_request", "", example(t, "pull_request.opened.json",
			edited(map[string]any{"title": map[string]any{"from": "Update the README"}}, base1)))
		if got := status(t, res); got != "ignored" {
			t.Errorf("title edit: %q, want ignored", got)
		}
		// Another base branch: the same head reviewed against the new base.
		f.deliver(t, "pull_request", example(t, "pull_request.opened.json",
			edited(map[string]any{"base": map[string]any{"ref": map[string]any{"from": "master"}, "sha": map[string]any{"from": base1}}}, base2)))
		jobs := reviewJobs(t, f.db)
		if len(jobs) != 2 || jobs[1]["head"] != head1 || jobs[1]["base"] != base2 {
			t.Fatalf("review jobs after the base changed: %v", jobs)
		}
		if n := count(t, f.db, `SELECT COUNT(*) FROM github_deliveries`); n != 2 {
			t.Errorf("%d deliveries stored, want 2 (the title edit is not)", n)
		}
	})
}

// TestPullRequestOnlyForItsInstallation: a signed pull_request naming
// another account's repository under an installation that lacks it is
// ignored (issue 10 item 12: it filed beta/secret-repo under acme and
// queued a review); a repository the installation was given, recorded or
// as GitHub says, is reviewed.
func TestPullRequestOnlyForItsInstallation(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		f.deliver(t, "installation", example(t, "installation.created.json", nil)) // Codertocat, 957387: Hello-World
		f.gh.AddRepo("beta", "secret-repo", t.TempDir())
		f.gh.Grant("beta", "secret-repo", 31337) // beta's installation, not Codertocat's
		f.gh.AddRepo("Codertocat", "Given-Later", t.TempDir())
		f.gh.Grant("Codertocat", "Given-Later", 957387)
		pr := func(owner, name string) []byte {
			return example(t, "pull_request.opened.json", func(m map[string]any) {
				m["installation"] = map[string]any{"id": 957387}
				r := m["repository"].(map[string]any)
				r["name"], r["full_name"] = name, owner+"/"+name
				r["owner"].(map[string]any)["login"] = owner
			})
		}
		f.deliver(t, "pull_request", pr("beta", "secret-repo"))
		if n := count(t, f.db, `SELECT COUNT(*) FROM repositories WHERE lower(owner) = 'beta'`); n != 0 {
			t.Errorf("beta/secret-repo was recorded (%d rows) from Codertocat's installation", n)
		}
		if jobs := reviewJobs(t, f.db); len(jobs) != 0 {
			t.Fatalf("reviews queued for a repository the installation lacks: %v", jobs)
		}
		f.deliver(t, "pull_request", pr("Codertocat", "Hello-World"))
		f.deliver(t, "pull_request", pr("Codertocat", "Given-Later"))
		jobs := reviewJobs(t, f.db)
		if len(jobs) != 2 || jobs[0]["repo"] != "Hello-World" || jobs[1]["repo"] != "Given-Later" {
			t.Errorf("review jobs %v, want Hello-World's and Given-Later's", jobs)
		}
	})
}

// TestHostileTextInDeliveries: a signed body with a raw \xff is a 400 on
// both databases (issue 10 item 11: a 500 on PostgreSQL), and an
// installation whose login holds a NUL is refused without stopping the
// deliveries after it (item 10: its error jammed River's completer).
func TestHostileTextInDeliveries(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		raw := bytes.Replace(example(t, "installation.created.json", nil), []byte(`"Codertocat"`), []byte("\"Coder\xfftocat\""), 1)
		if res := f.post(t, "installation", "", raw); res.StatusCode != http.StatusBadRequest {
			t.Errorf("raw \\xff: %d, want 400", res.StatusCode)
		}

		evil := example(t, "installation.created.json", func(m map[string]any) {
			m["installation"].(map[string]any)["account"].(map[string]any)["login"] = "ev\u0000il"
		})
		if res := f.post(t, "installation", "", evil); res.StatusCode != http.StatusAccepted {
			t.Fatalf("NUL login: %d, want 202", res.StatusCode)
		}
		f.deliver(t, "installation", example(t, "installation.created.json", nil))
		if _, err := account.Find(context.Background(), f.db.Reader(), account.PlatformGitHub, "Codertocat"); err != nil {
			t.Errorf("the delivery after the hostile one: %v", err)
		}
		var state string
		if err := f.db.Reader().QueryRow(context.Background(), `SELECT state FROM river_job WHERE kind = $1 ORDER BY id LIMIT 1`,
			(intake.DeliveryArgs{}).Kind()).Scan(&state); err != nil || state != "cancelled" {
			t.Errorf("the hostile delivery's job is %q (%v), want cancelled", state, err)
		}
	})
}

// TestInstallationTypeFromGitHub: an account made by "quorum token create"
// before the App was installed (typed Organization, as nothing said
// otherwise) is announced with the type GitHub gives (issue 10 item 3).
func TestInstallationTypeFromGitHub(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b, intake.Config{})
		if _, err := account.Ensure(context.Background(), f.db.Writer(), account.PlatformGitHub, "Codertocat", ""); err != nil {
			t.Fatal(err)
		}
		f.deliver(t, "installation", example(t, "installation.created.json", nil)) // account type User
		got := installationEvents(t, f.db, "Codertocat")
		if len(got) != 1 || got[0].Account.Type != "User" {
			t.Errorf("installation.created = %+v, want the account typed User", got)
		}
	})
}
