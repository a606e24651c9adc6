package gitea

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/gitea/giteatest"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/specialisttest"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// publishing is a repository on the test Gitea whose pull request changes
// main.go at lines 10-12 and 30 (hunks 7-15 and 27-33) and adds new.go,
// opened by its author and reviewed by a bot account with write access,
// with quorum's store and the publisher acting as the bot.
type publishing struct {
	srv    *giteatest.Server
	author giteatest.User
	bot    giteatest.User
	repo   giteatest.Repo
	git    *changetest.Repo
	pr     int
	base   string
	head   string
	db     *store.DB
	stored account.Repository
	pub    *Publisher
}

func setupPublishing(t *testing.T, name string, cfg PublisherConfig) *publishing {
	t.Helper()
	name = UniqueName(name)
	srv := giteatest.Start(t)
	author := srv.CreateUser(t, name)
	bot := srv.CreateUser(t, name+"-bot")
	repo := srv.CreateRepo(t, author, "widgets")
	srv.API(t, author.Token, http.MethodPut, "/repos/"+author.Name+"/widgets/collaborators/"+bot.Name, map[string]any{"permission": "write"}, nil)

	g := changetest.NewRepo(t)
	g.Write(map[string]string{"main.go": changetest.Lines(40), "other.go": changetest.Lines(5)})
	base := g.Commit("base")
	g.Git("checkout", "-q", "-b", "feature")
	g.Write(map[string]string{"main.go": changetest.Lines(40, 10, 11, 12, 30), "new.go": changetest.Lines(5)})
	head := g.Commit("head")
	srv.Push(t, g.Dir, repo, author, "main", "feature")
	var pr struct {
		Number int `json:"number"`
	}
	srv.API(t, author.Token, http.MethodPost, "/repos/"+author.Name+"/widgets/pulls", map[string]any{
		"head": "feature", "base": "main", "title": "Changes",
	}, &pr)

	ctx := context.Background()
	db := storetest.SQLite(t)
	acct, err := account.Ensure(ctx, db.Writer(), account.PlatformGitea, author.Name, "User")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := account.EnsureRepository(ctx, db.Writer(), acct.ID, author.Name, "widgets")
	if err != nil {
		t.Fatal(err)
	}
	api, err := NewClient(srv.URL, bot.Token, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher(api, db, cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	pub.Register(workers)
	if _, err := db.ConfigureJobs(store.JobsConfig{Workers: workers}); err != nil {
		t.Fatal(err)
	}
	return &publishing{srv: srv, author: author, bot: bot, repo: repo, git: g, pr: pr.Number, base: base, head: head,
		db: db, stored: stored, pub: pub}
}

func (p *publishing) args() pipeline.ReviewArgs {
	return pipeline.ReviewArgs{AccountID: p.stored.AccountID, RepositoryID: p.stored.ID, Owner: p.author.Name, Repo: "widgets",
		PR: p.pr, Head: p.head, Base: p.base, Source: "gitea", Location: "1"}
}

func finding(path string, line, end int, fp string) review.Finding {
	return review.Finding{Specialist: "logic", Category: "logic", Severity: "medium", Path: path, Line: line, EndLine: end,
		Headline: "Problem at " + path + fmt.Sprint(":", line), Body: "Why it matters.", Fingerprint: fp, Engine: review.EngineBuiltin,
		Rule: "test:rule", DetectedAt: time.Now().UTC().Truncate(time.Microsecond)}
}

// save stores a review of the current head with findings.
func (p *publishing) save(t *testing.T, verdict string, findings ...review.Finding) review.Full {
	t.Helper()
	full := review.Full{Review: review.Review{Owner: p.author.Name, Repo: "widgets", PRNumber: p.pr, HeadSHA: p.head, BaseSHA: p.base,
		RepositoryID: p.stored.ID, Verdict: verdict, SynthesizedAt: time.Now().UTC().Truncate(time.Microsecond),
		SpecialistsSucceeded: []string{"logic"}, FindingsCount: len(findings), Summary: "Summary of the review."}, Findings: findings}
	if err := review.NewStore(p.db).Create(context.Background(), p.db.Writer(), &full); err != nil {
		t.Fatal(err)
	}
	return full
}

func postJob(a PostArgs) *river.Job[PostArgs] {
	return &river.Job[PostArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: postAttempts}, Args: a}
}

// post runs the post job of a saved review.
func (p *publishing) post(t *testing.T, full review.Full) {
	t.Helper()
	w := &postWorker{p: p.pub}
	if err := w.Work(context.Background(), postJob(PostArgs{Review: p.args(), ReviewID: full.ID})); err != nil {
		t.Fatal(err)
	}
}

// seenReview is a review as the pull request's author reads it through
// Gitea's API, with its comments.
type seenReview struct {
	ID   int64 `json:"id"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	State    string `json:"state"`
	Body     string `json:"body"`
	CommitID string `json:"commit_id"`
	Comments []seenComment
}

type seenComment struct {
	Path     string `json:"path"`
	Position int    `json:"position"`
	Body     string `json:"body"`
	User     struct {
		Login string `json:"login"`
	} `json:"user"`
}

// botReviews returns the bot's submitted reviews of the pull request, as
// its author sees them.
func (p *publishing) botReviews(t *testing.T) []seenReview {
	t.Helper()
	base := fmt.Sprintf("/repos/%s/widgets/pulls/%d/reviews", p.author.Name, p.pr)
	var all []seenReview
	p.srv.API(t, p.author.Token, http.MethodGet, base+"?limit=50", nil, &all)
	var out []seenReview
	for _, rv := range all {
		if rv.User.Login != p.bot.Name {
			continue
		}
		p.srv.API(t, p.author.Token, http.MethodGet, base+"/"+strconv.FormatInt(rv.ID, 10)+"/comments", nil, &rv.Comments)
		out = append(out, rv)
	}
	return out
}

// push pushes a new head of the pull request's branch, with main.go
// changed as content, and waits until Gitea's pull request shows it.
func (p *publishing) push(t *testing.T, files map[string]string) string {
	t.Helper()
	p.git.Write(files)
	head := p.git.Commit("push")
	p.srv.Push(t, p.git.Dir, p.repo, p.author, "feature")
	// Gitea updates the pull request from a queue after the push.
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := p.pub.Head(context.Background(), p.args())
		if err != nil {
			t.Fatal(err)
		}
		if got == head {
			return head
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pull request's head is %s, not the pushed %s", got, head)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func eventsNamed(t *testing.T, p *publishing, name string) []event.Event {
	t.Helper()
	evs, err := event.List(context.Background(), p.db.Reader(), p.stored.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Event
	for _, e := range evs {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// Findings on lines of the diff are inline comments on those lines of the
// new file; the rest (outside a hunk, a file not in the pull request, a
// whole file) are in the body with links to Gitea's view of the file; a
// patch is a diff block, not a suggestion Gitea would not render.
func TestPublishPlacesCommentsOnGitea(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-place", PublisherConfig{})
	patch := "diff --git a/new.go b/new.go\n--- a/new.go\n+++ b/new.go\n@@ -2,1 +2,1 @@\n-line 2\n+line two\n"
	sugg := finding("new.go", 2, 2, "fp-sugg")
	sugg.SuggestedPatch = &patch
	full := p.save(t, review.VerdictRequestChanges,
		finding("main.go", 10, 10, "fp-one"),
		finding("main.go", 11, 12, "fp-range"),
		finding("main.go", 20, 20, "fp-outside-hunk"),
		sugg,
		finding("other.go", 3, 3, "fp-not-in-diff"),
		finding("new.go", 0, 0, "fp-whole-file"),
	)
	p.post(t, full)
	rs := p.botReviews(t)
	if len(rs) != 1 {
		t.Fatalf("%d reviews by the bot, want 1", len(rs))
	}
	rv := rs[0]
	if rv.State != "REQUEST_CHANGES" || rv.CommitID != p.head {
		t.Fatalf("review %s on %s, want REQUEST_CHANGES on %s", rv.State, rv.CommitID, p.head)
	}
	got := map[string]string{}
	for _, c := range rv.Comments {
		fp := c.Body[strings.LastIndex(c.Body, "fp=")+3:]
		got[fmt.Sprintf("%s:%d", c.Path, c.Position)] = strings.TrimSuffix(strings.TrimSpace(fp), " -->")
	}
	want := map[string]string{"main.go:10": "fp-one", "main.go:12": "fp-range", "new.go:2": "fp-sugg"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("inline comments %v, want %v", got, want)
	}
	for _, c := range rv.Comments {
		if c.Path == "new.go" && (!strings.Contains(c.Body, "```diff\n") || !strings.Contains(c.Body, "+line two") || strings.Contains(c.Body, "```suggestion")) {
			t.Errorf("the patch is not in a diff block:\n%s", c.Body)
		}
	}
	if !strings.Contains(rv.Body, "Summary of the review.") || !strings.Contains(rv.Body, "3 more finding(s)") {
		t.Errorf("body lacks the summary or the 3 findings outside the diff:\n%s", rv.Body)
	}
	for _, l := range []string{"main.go#L20-L20", "other.go#L3-L3", "new.go)"} {
		if !strings.Contains(rv.Body, p.srv.URL+"/"+p.author.Name+"/widgets/src/commit/"+p.head+"/"+l) {
			t.Errorf("body lacks the link to %s at the head:\n%s", l, rv.Body)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(rv.Body), "<!-- quorum:review="+full.ID+" -->") {
		t.Errorf("body does not end with the review's marker:\n%s", rv.Body)
	}
	if n := len(eventsNamed(t, p, event.ReviewCompleted)); n != 1 {
		t.Errorf("%d review.completed once posted, want 1", n)
	}
}

// The verdict maps to Gitea's review states: approve only when configured.
func TestPublishVerdicts(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-verdict", PublisherConfig{Approve: true})
	p.post(t, p.save(t, review.VerdictApprove))
	p.post(t, p.save(t, review.VerdictComment))
	p.post(t, p.save(t, review.VerdictRequestChanges, finding("main.go", 10, 10, "fp")))
	noApprove, err := NewPublisher(p.pub.api, p.db, PublisherConfig{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := p.save(t, review.VerdictApprove)
	if err := (&postWorker{p: noApprove}).Work(context.Background(), postJob(PostArgs{Review: p.args(), ReviewID: full.ID})); err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, rv := range p.botReviews(t) {
		states = append(states, rv.State)
	}
	if fmt.Sprint(states) != "[APPROVED COMMENT REQUEST_CHANGES COMMENT]" {
		t.Fatalf("review states %v, want APPROVED, COMMENT, REQUEST_CHANGES, then COMMENT for an approval not configured", states)
	}
}

// A push after a review: the findings already commented on are not
// repeated, even on other lines.
func TestPublishDoesNotRepeatFindingsAcrossPushes(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-repeat", PublisherConfig{})
	p.post(t, p.save(t, review.VerdictComment, finding("main.go", 10, 10, "same"), finding("main.go", 30, 30, "fixed-later")))
	p.head = p.push(t, map[string]string{"main.go": changetest.Lines(41, 10, 11, 12, 13, 30)})
	p.post(t, p.save(t, review.VerdictComment, finding("main.go", 11, 11, "same"), finding("main.go", 13, 13, "new")))
	rs := p.botReviews(t)
	if len(rs) != 2 {
		t.Fatalf("%d reviews, want 2", len(rs))
	}
	second := rs[1]
	if len(second.Comments) != 1 || !strings.Contains(second.Comments[0].Body, "quorum:fp=new") || second.Comments[0].Position != 13 {
		t.Fatalf("second review's comments %+v, want only the new finding on line 13", second.Comments)
	}
	if !strings.Contains(second.Body, "1 finding(s) already commented on an earlier push") {
		t.Errorf("body does not say a finding was not repeated:\n%s", second.Body)
	}
}

// A head that moved on between saving and posting: nothing is posted and
// review.failed stale_head is recorded.
func TestPublishStaleHeadPostsNothing(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-stale", PublisherConfig{})
	full := p.save(t, review.VerdictRequestChanges, finding("main.go", 10, 10, "a"))
	p.push(t, map[string]string{"late.go": "package late\n"}) // p.head stays the reviewed one
	p.post(t, full)
	if rs := p.botReviews(t); len(rs) != 0 {
		t.Fatalf("%d reviews posted on a moved head", len(rs))
	}
	failed := eventsNamed(t, p, event.ReviewFailed)
	if len(failed) != 1 {
		t.Fatalf("%d review.failed, want 1", len(failed))
	}
	var data event.ReviewFailedData
	if err := json.Unmarshal(failed[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Reason != event.ReasonStaleHead || data.HeadSHA != p.head {
		t.Fatalf("review.failed %+v, want stale_head for %s", data, p.head)
	}
	if n := len(eventsNamed(t, p, event.ReviewCompleted)); n != 0 {
		t.Fatalf("%d review.completed for a review not posted", n)
	}
}

// A post job retried after Gitea took the review (an attempt that stopped
// before recording it) finds it by its marker and posts nothing twice.
func TestPublishRetriedPostsOnce(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-retry", PublisherConfig{})
	full := p.save(t, review.VerdictRequestChanges, finding("main.go", 10, 10, "a"))
	p.post(t, full)
	// As if the first attempt had stopped before settling (whose
	// transaction also records the events).
	for _, q := range []string{`DELETE FROM settled_reviews WHERE review_id = $1`, `DELETE FROM events WHERE account_id = $2`} {
		if _, err := p.db.Writer().Exec(context.Background(), q, full.ID, p.stored.AccountID); err != nil {
			t.Fatal(err)
		}
	}
	p.post(t, full)
	if rs := p.botReviews(t); len(rs) != 1 {
		t.Fatalf("%d reviews posted, want 1", len(rs))
	}
	if n := len(eventsNamed(t, p, event.ReviewCompleted)); n != 1 {
		t.Fatalf("%d review.completed, want 1", n)
	}
}

// A pending review the bot left (a post that failed between Gitea
// creating its comments and submitting them) is deleted, not submitted
// with the next review's comments.
func TestPublishDropsAPendingReviewLeftBehind(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-pending", PublisherConfig{})
	p.srv.API(t, p.bot.Token, http.MethodPost, fmt.Sprintf("/repos/%s/widgets/pulls/%d/reviews", p.author.Name, p.pr), map[string]any{
		"body": "half-way", "commit_id": p.head,
		"comments": []map[string]any{{"path": "main.go", "body": "left behind", "new_position": 11}},
	}, nil)
	p.post(t, p.save(t, review.VerdictComment, finding("main.go", 10, 10, "a")))
	rs := p.botReviews(t)
	if len(rs) != 1 || len(rs[0].Comments) != 1 || rs[0].Comments[0].Position != 10 {
		t.Fatalf("reviews %+v, want one with its own comment on line 10 alone", rs)
	}
}

// A pull request closed before its review is posted: Gitea refuses
// REQUEST_CHANGES there, so the review is posted as a comment.
func TestPublishOnAClosedPullRequest(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-closed", PublisherConfig{})
	full := p.save(t, review.VerdictRequestChanges, finding("main.go", 10, 10, "a"))
	p.srv.API(t, p.author.Token, http.MethodPatch, fmt.Sprintf("/repos/%s/widgets/pulls/%d", p.author.Name, p.pr), map[string]any{"state": "closed"}, nil)
	p.post(t, full)
	if rs := p.botReviews(t); len(rs) != 1 || rs[0].State != "COMMENT" || len(rs[0].Comments) != 1 {
		t.Fatalf("reviews %+v, want one COMMENT with its comment", rs)
	}
}

// A pull request that is gone: the job gives up at once, and the review
// is still announced (it is in quorum's API).
func TestPublishOnAPullRequestGoneGivesUp(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-gone", PublisherConfig{})
	full := p.save(t, review.VerdictComment, finding("main.go", 10, 10, "a"))
	args := p.args()
	args.PR = 999
	err := (&postWorker{p: p.pub}).Work(context.Background(), postJob(PostArgs{Review: args, ReviewID: full.ID}))
	if _, ok := errors.AsType[*river.JobCancelError](err); !ok {
		t.Fatalf("Work: %v, want the job cancelled", err)
	}
	if n := len(eventsNamed(t, p, event.ReviewCompleted)); n != 1 {
		t.Fatalf("%d review.completed after giving up, want 1", n)
	}
}

// The pull request's author cannot silence a finding by writing its
// marker in a comment of their own.
func TestPublishIgnoresMarkersWrittenByOthers(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-attack", PublisherConfig{})
	p.srv.API(t, p.author.Token, http.MethodPost, fmt.Sprintf("/repos/%s/widgets/pulls/%d/reviews", p.author.Name, p.pr), map[string]any{
		"event": "COMMENT", "body": "", "commit_id": p.head,
		"comments": []map[string]any{{"path": "main.go", "body": "nothing to see <!-- quorum:fp=secret -->", "new_position": 10}},
	}, nil)
	p.post(t, p.save(t, review.VerdictRequestChanges, finding("main.go", 10, 10, "secret")))
	rs := p.botReviews(t)
	if len(rs) != 1 || len(rs[0].Comments) != 1 || !strings.Contains(rs[0].Comments[0].Body, "quorum:fp=secret") {
		t.Fatalf("reviews %+v, want the finding posted despite the author's marker", rs)
	}
	if strings.Contains(rs[0].Body, "already commented") {
		t.Errorf("body counts the author's marker as posted:\n%s", rs[0].Body)
	}
}

// A pull request the bot opened: Gitea refuses its REQUEST_CHANGES, so the
// review is posted as a comment.
func TestPublishOnTheBotsOwnPullRequest(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-own", PublisherConfig{})
	var pr struct {
		Number int `json:"number"`
	}
	p.git.Git("checkout", "-q", "-b", "bots")
	p.git.Write(map[string]string{"main.go": changetest.Lines(40, 10, 11, 12, 30, 35)})
	p.head = p.git.Commit("the bot's change")
	p.srv.Push(t, p.git.Dir, p.repo, p.author, "bots")
	p.srv.API(t, p.bot.Token, http.MethodPost, "/repos/"+p.author.Name+"/widgets/pulls", map[string]any{
		"head": "bots", "base": "main", "title": "The bot's own",
	}, &pr)
	p.pr = pr.Number
	p.post(t, p.save(t, review.VerdictRequestChanges, finding("main.go", 35, 35, "a")))
	rs := p.botReviews(t)
	if len(rs) != 1 || rs[0].State != "COMMENT" || len(rs[0].Comments) != 1 {
		t.Fatalf("reviews %+v, want one COMMENT with its comment", rs)
	}
}

// postJobs returns the post jobs queued.
func postJobs(t *testing.T, db *store.DB) []PostArgs {
	t.Helper()
	rows, err := db.Reader().Query(context.Background(), `SELECT json(args) FROM river_job WHERE kind = $1 ORDER BY id`, PostArgs{}.Kind())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []PostArgs
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var a PostArgs
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// A rate_limit or quorum_failure notice is one comment per pull request,
// reason and window.
func TestPublishNoticeOncePerWindow(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-notice", PublisherConfig{})
	ctx := context.Background()
	publish := func(reason string, resets time.Time) {
		t.Helper()
		err := p.db.InTx(ctx, func(tx store.Tx) error {
			return p.pub.Publish(ctx, tx, p.args(), pipeline.Saved{Reason: reason, RateLimit: event.RateLimit{ResetsAt: resets}, SpecialistsFailed: []string{"logic"}})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	resets := time.Date(2030, 1, 2, 15, 0, 0, 0, time.UTC)
	publish(event.ReasonRateLimit, resets)
	publish(event.ReasonRateLimit, resets)
	publish(event.ReasonQuorumFailure, time.Time{})
	publish(event.ReasonQuorumFailure, time.Time{})
	publish(event.ReasonInternalError, time.Time{})
	jobs := postJobs(t, p.db)
	if len(jobs) != 2 {
		t.Fatalf("jobs %+v, want one rate_limit and one quorum_failure notice", jobs)
	}
	w := &postWorker{p: p.pub}
	for _, j := range jobs {
		if err := w.Work(ctx, postJob(j)); err != nil {
			t.Fatal(err)
		}
	}
	var comments []struct {
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
	}
	p.srv.API(t, p.author.Token, http.MethodGet, fmt.Sprintf("/repos/%s/widgets/issues/%d/comments", p.author.Name, p.pr), nil, &comments)
	if len(comments) != 2 || comments[0].User.Login != p.bot.Name ||
		!strings.Contains(comments[0].Body, "2030-01-02 15:00 UTC") || !strings.Contains(comments[0].Body, "@"+p.bot.Name+" review") ||
		!strings.Contains(comments[1].Body, "Did not finish: logic") {
		t.Fatalf("comments %+v, want the bot's rate_limit notice then its quorum_failure notice", comments)
	}
}

// A 429 (or a 503 naming a time) from a proxy in front of Gitea snoozes
// the job rather than failing it.
func TestPublishSnoozesOnRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		header string
		want   time.Duration
	}{
		{http.StatusTooManyRequests, "90", 90 * time.Second},
		{http.StatusTooManyRequests, "", time.Minute},
		{http.StatusServiceUnavailable, "30", 30 * time.Second},
		{http.StatusServiceUnavailable, "", 0},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.header != "" {
				w.Header().Set("Retry-After", tc.header)
			}
			w.WriteHeader(tc.status)
		}))
		api, err := NewClient(srv.URL, "tok", nil, "test")
		if err != nil {
			t.Fatal(err)
		}
		pub, err := NewPublisher(api, storetest.SQLite(t), PublisherConfig{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := &postWorker{p: pub}
		err = w.Work(context.Background(), postJob(PostArgs{Review: pipeline.ReviewArgs{Owner: "o", Repo: "r", PR: 1}, Reason: event.ReasonQuorumFailure, Notice: true}))
		snooze, ok := err.(*river.JobSnoozeError)
		switch {
		case tc.want == 0 && ok:
			t.Errorf("%d without Retry-After: snoozed %s, want an error", tc.status, snooze.Duration)
		case tc.want != 0 && (!ok || snooze.Duration != tc.want):
			t.Errorf("%d Retry-After %q: %v, want a %s snooze", tc.status, tc.header, err, tc.want)
		}
		srv.Close()
	}
}

// The review job of a Gitea pull request, through pipeline.Worker with the
// Gitea source and publisher, then the post job it queued: the review is
// on the pull request, with a comment on each changed line.
func TestWorkerReviewsAndPostsOnGitea(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-worker", PublisherConfig{})
	ctx := context.Background()
	src, err := NewSource(p.pub.api, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &pipeline.Worker{
		DB:         p.db,
		Sources:    map[string]func(string) change.Source{"gitea": func(string) change.Source { return src }},
		Publishers: map[string]pipeline.Publisher{"gitea": p.pub.Publisher()},
		Specialists: func(repoconfig.Config, pipeline.ReviewArgs) []specialist.Specialist {
			return []specialist.Specialist{specialisttest.ChangedLines{}}
		},
	}
	job := &river.Job[pipeline.ReviewArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}, Args: p.args()}
	if err := w.Work(ctx, job); err != nil {
		t.Fatal(err)
	}
	jobs := postJobs(t, p.db)
	if len(jobs) != 1 || jobs[0].ReviewID == "" {
		t.Fatalf("post jobs %+v, want one of the saved review", jobs)
	}
	if err := (&postWorker{p: p.pub}).Work(ctx, postJob(jobs[0])); err != nil {
		t.Fatal(err)
	}
	rs := p.botReviews(t)
	if len(rs) != 1 {
		t.Fatalf("%d reviews, want 1", len(rs))
	}
	var lines []int
	for _, c := range rs[0].Comments {
		lines = append(lines, c.Position)
	}
	slices.Sort(lines) // Gitea lists a review's comments from a map: in no order
	if fmt.Sprint(lines) != "[10 11 12 30]" || rs[0].CommitID != p.head {
		t.Fatalf("comments on lines %v of %s, want 10, 11, 12, 30 of %s", lines, rs[0].CommitID, p.head)
	}
}

// A pull request's author names its files, and a finding's file name goes
// into the review's body: a name that opens an HTML comment must not hide
// the findings listed after it (nor pass for a marker).
func TestPublishFileNameCannotHideTheBody(t *testing.T) {
	t.Parallel()
	p := setupPublishing(t, "pub-hide", PublisherConfig{})
	full := p.save(t, review.VerdictRequestChanges,
		finding("odd`<!--name.go", 3, 3, "fp-odd"),
		finding("other.go", 3, 3, "fp-after"),
	)
	p.post(t, full)
	rs := p.botReviews(t)
	if len(rs) != 1 {
		t.Fatalf("%d reviews by the bot, want 1", len(rs))
	}
	body := rs[0].Body
	for rest := body; ; {
		i := strings.Index(rest, "<!--")
		if i < 0 {
			break
		}
		if !strings.HasPrefix(rest[i:], "<!-- quorum:") {
			t.Fatalf("the body opens an HTML comment that is not quorum's marker, hiding what follows:\n%s", body)
		}
		rest = rest[i+4:]
	}
}
