package intake_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/gitea"
	"github.com/quorum-review/quorum/internal/gitea/giteatest"
	"github.com/quorum-review/quorum/internal/gitea/intake"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// waitReviews waits until n review jobs are queued (Gitea delivers from a
// queue of its own, a moment after the API call that causes it).
func waitReviews(t *testing.T, db *store.DB, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		jobs := reviewJobs(t, db)
		if len(jobs) >= n {
			return jobs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d review jobs after 60s, want %d: %v", len(jobs), n, jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// End to end with the real Gitea: a repository connected to the intake
// (its webhook created by gitea.Connect, pointing at this test's server),
// a pull request opened through Gitea's API → Gitea's signed delivery →
// a review of the head queued; a push to the branch → a review of the
// new head; "@bot review" from the owner → the head reviewed again; the
// same from a user who can only read → nothing.
func TestRealGiteaDeliveries(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	owner, bot, reader := srv.CreateUser(t, "ivy"), srv.CreateUser(t, "ivy-bot"), srv.CreateUser(t, "ivy-reader")
	repo := srv.CreateRepo(t, owner, "widgets")
	srv.API(t, owner.Token, http.MethodPut, "/repos/ivy/widgets/collaborators/ivy-bot", map[string]any{"permission": "admin"}, nil)
	srv.API(t, owner.Token, http.MethodPut, "/repos/ivy/widgets/collaborators/ivy-reader", map[string]any{"permission": "read"}, nil)
	api, err := gitea.NewClient(srv.URL, bot.Token, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.SQLite(t)
	f := setup(t, db, intake.Config{BotName: bot.Name}, api)
	conn, err := gitea.Connect(t.Context(), api, db, "ivy", "widgets", f.srv.URL+intake.Path, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	local := changetest.NewRepo(t)
	local.Write(map[string]string{"widget.go": "package widgets\n\nconst Size = 1\n"})
	baseSHA := local.Commit("base")
	local.Git("checkout", "-q", "-b", "feature")
	local.Write(map[string]string{"widget.go": "package widgets\n\nconst Size = 2\n"})
	first := local.Commit("bigger")
	srv.Push(t, local.Dir, repo, owner, "main", "feature")
	var pr struct {
		Number int `json:"number"`
	}
	srv.API(t, owner.Token, http.MethodPost, "/repos/ivy/widgets/pulls", map[string]any{"head": "feature", "base": "main", "title": "Bigger widgets"}, &pr)

	jobs := waitReviews(t, db, 1)
	j := jobs[0]
	if j["head"] != first || j["base"] != baseSHA || j["source"] != "gitea" || j["location"] != strconv.FormatInt(conn.Repository.ID, 10) ||
		j["owner"] != "ivy" || j["repo"] != "widgets" || j["pr"] != float64(pr.Number) {
		t.Fatalf("review job %v, want head %s from %s of ivy/widgets#%d, source gitea at repository %d", j, first, baseSHA, pr.Number, conn.Repository.ID)
	}
	if last, err := gitea.LastDelivery(t.Context(), db, conn.Repository.ID); err != nil || last.IsZero() {
		t.Errorf("last delivery %v (%v), want set", last, err)
	}

	// A push to the pull request's branch: Gitea's "synchronized".
	local.Write(map[string]string{"widget.go": "package widgets\n\nconst Size = 3\n"})
	second := local.Commit("bigger still")
	srv.Push(t, local.Dir, repo, owner, "feature")
	if jobs := waitReviews(t, db, 2); jobs[1]["head"] != second {
		t.Fatalf("after a push, review jobs %v, want the second of %s", jobs, second)
	}

	// The bot and a reader ask first, then the owner: only the owner's
	// request runs.
	comment := func(u giteatest.User, body string) {
		srv.API(t, u.Token, http.MethodPost, "/repos/ivy/widgets/issues/"+strconv.Itoa(pr.Number)+"/comments", map[string]any{"body": body}, nil)
	}
	comment(bot, "@"+bot.Name+" review")
	comment(reader, "@"+bot.Name+" review")
	comment(owner, "Looks close. @"+bot.Name+" review")
	waitReviews(t, db, 3)
	// Deliveries are handled in order, so the bot's and the reader's came
	// first.
	waitHandled(t, db, 5)
	jobs = reviewJobs(t, db)
	if len(jobs) != 3 || jobs[2]["head"] != second || !strings.HasPrefix(jobs[2]["rerun"].(string), "comment:") {
		t.Fatalf("after the comments, review jobs %v, want one rerun of %s, the owner's", jobs, second)
	}

	// The first push's delivery replayed, signed, under a new id (Gitea's
	// "Replay", or a captured body sent again): the pull request's newest
	// head stays the one Gitea has, so the current review is not dropped.
	var secret string
	if err := db.Reader().QueryRow(t.Context(), `SELECT secret FROM gitea_hooks WHERE repository_id = $1`, conn.Repository.ID).Scan(&secret); err != nil {
		t.Fatal(err)
	}
	old := pullRequest(conn.Repository.ID, "ivy", "widgets", "synchronized", pr.Number, first, baseSHA, false)
	if res, got := f.send(t, giteaDelivery{repository: strconv.FormatInt(conn.Repository.ID, 10), event: "pull_request", id: "replayed-1", body: old}, secret); res.StatusCode != http.StatusAccepted || got != "queued" {
		t.Fatalf("replayed delivery: %d %q, want 202 queued", res.StatusCode, got)
	}
	waitHandled(t, db, 6)
	var newest string
	if err := db.Reader().QueryRow(t.Context(), `SELECT head_sha FROM pull_requests WHERE pr_number = $1`, pr.Number).Scan(&newest); err != nil {
		t.Fatal(err)
	}
	if newest != second {
		t.Errorf("after a replayed delivery of %s, the newest head is %s, want %s (Gitea's)", first, newest, second)
	}
}

// waitHandled waits until n deliveries are handled.
func waitHandled(t *testing.T, db *store.DB, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for count(t, db, `SELECT COUNT(*) FROM gitea_deliveries WHERE handled_at IS NOT NULL`) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d deliveries handled after 60s", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The administrator of one connected repository can read its hook's
// secret and sign any payload with it. A signed pull_request delivery of
// their repository whose payload names another repository the bot can
// read (owner and name; the id is their own) must not make quorum review
// that repository: the review is of the hook's repository, as Gitea names
// it, and the other repository is recorded nowhere.
func TestSignedPayloadNamingAnotherRepository(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	mallory, victim, bot := srv.CreateUser(t, "mallory"), srv.CreateUser(t, "vic"), srv.CreateUser(t, "vic-bot")
	srv.CreateRepo(t, mallory, "mine")
	srv.CreateRepo(t, victim, "vault")
	srv.API(t, mallory.Token, http.MethodPut, "/repos/mallory/mine/collaborators/vic-bot", map[string]any{"permission": "admin"}, nil)
	srv.API(t, victim.Token, http.MethodPut, "/repos/vic/vault/collaborators/vic-bot", map[string]any{"permission": "read"}, nil)
	api, err := gitea.NewClient(srv.URL, bot.Token, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.SQLite(t)
	f := setup(t, db, intake.Config{BotName: bot.Name}, api)
	conn, err := gitea.Connect(t.Context(), api, db, "mallory", "mine", f.srv.URL+intake.Path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var secret string
	if err := db.Reader().QueryRow(t.Context(), `SELECT secret FROM gitea_hooks WHERE repository_id = $1`, conn.Repository.ID).Scan(&secret); err != nil {
		t.Fatal(err)
	}

	forged := pullRequest(conn.Repository.ID, "vic", "vault", "opened", 1, head1, base, false)
	res, got := f.send(t, giteaDelivery{repository: strconv.FormatInt(conn.Repository.ID, 10), event: "pull_request", body: forged}, secret)
	if res.StatusCode != http.StatusAccepted || got != "queued" {
		t.Fatalf("signed delivery: %d %q, want 202 queued", res.StatusCode, got)
	}
	f.waitIntake(t)
	for _, j := range reviewJobs(t, db) {
		if j["owner"] != "mallory" || j["repo"] != "mine" {
			t.Errorf("review job %v: a delivery of mallory/mine had quorum review another repository", j)
		}
	}
	if n := count(t, db, `SELECT COUNT(*) FROM repositories WHERE lower(owner) = 'vic'`); n != 0 {
		t.Errorf("%d repositories of vic recorded under mallory's installation, want none", n)
	}
}
