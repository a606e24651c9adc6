package github

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/specialisttest"
	"github.com/quorum-review/quorum/internal/storetest"
)

// runReview works the review job of the pull request's head through
// pipeline.Worker with the App as its source and publisher, then the post
// jobs it queued.
func runReview(t *testing.T, p *posting, s specialist.Specialist, limits pipeline.RateLimit) {
	t.Helper()
	ctx := context.Background()
	w := &pipeline.Worker{
		DB:         p.db,
		Sources:    map[string]func(string) change.Source{"github": p.app.Source},
		Publishers: map[string]pipeline.Publisher{"github": p.app.Publisher()},
		Specialists: func(repoconfig.Config, pipeline.ReviewArgs) []specialist.Specialist {
			return []specialist.Specialist{s}
		},
		Limits: limits,
	}
	job := &river.Job[pipeline.ReviewArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}, Args: p.args()}
	if err := w.Work(ctx, job); err != nil {
		t.Fatal(err)
	}
	pw := &postWorker{app: p.app}
	for _, a := range postJobs(t, p.db) {
		if err := pw.Work(ctx, postJob(a)); err != nil {
			t.Fatal(err)
		}
	}
}

func failures(t *testing.T, p *posting) []event.ReviewFailedData {
	t.Helper()
	var out []event.ReviewFailedData
	for _, e := range eventsNamed(t, p, event.ReviewFailed) {
		var d event.ReviewFailedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func TestWorkerReviewsAndPosts(t *testing.T) {
	t.Parallel()
	p := setupPosting(t, storetest.SQLite(t), Config{CheckRuns: true})
	runReview(t, p, specialisttest.ChangedLines{}, pipeline.RateLimit{})
	rs := p.gh.Reviews("octo", "demo", 7)
	if len(rs) != 1 {
		t.Fatalf("%d reviews posted, want 1", len(rs))
	}
	var got []int
	for _, c := range rs[0].Comments {
		got = append(got, c.Line)
	}
	if len(got) != 4 || got[0] != 10 || got[3] != 30 || rs[0].CommitID != p.head {
		t.Fatalf("inline comments on lines %v of %s, want 10, 11, 12, 30 of %s", got, rs[0].CommitID, p.head)
	}
	runs := p.gh.CheckRuns("octo", "demo")
	if len(runs) != 1 || runs[0].Conclusion != "neutral" || len(runs[0].Annotations) != 4 {
		t.Fatalf("check runs %+v, want one concluded neutral with 4 annotations", runs)
	}
	// Announced once posted, with the usage counted when it was saved.
	completed := eventsNamed(t, p, event.ReviewCompleted)
	if len(completed) != 1 {
		t.Fatalf("%d review.completed, want 1", len(completed))
	}
	var data event.ReviewCompletedData
	if err := json.Unmarshal(completed[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.RateLimit.Used != 1 || data.RateLimit.MaxReviews != pipeline.DefaultMaxReviews {
		t.Fatalf("review.completed rate_limit %+v, want 1 used of %d", data.RateLimit, pipeline.DefaultMaxReviews)
	}
}

func TestWorkerPushDuringTheReviewPostsNothing(t *testing.T) {
	t.Parallel()
	p := setupPosting(t, storetest.SQLite(t), Config{CheckRuns: true})
	p.git.Write(map[string]string{"late.go": "package late\n"})
	newer := p.git.Commit("pushed during the review")
	// The push lands on GitHub while the specialists run; its webhook
	// has not arrived yet.
	runReview(t, p, specialisttest.ChangedLines{During: func() { p.gh.SetHead("octo", "demo", 7, newer) }}, pipeline.RateLimit{})
	if rs := p.gh.Reviews("octo", "demo", 7); len(rs) != 0 {
		t.Fatalf("%d reviews posted on a stale head", len(rs))
	}
	if f := failures(t, p); len(f) != 1 || f[0].Reason != event.ReasonStaleHead {
		t.Fatalf("review.failed %+v, want one stale_head", f)
	}
	// The worker asked before saving: no review of the stale head exists.
	var n int
	if err := p.db.Reader().QueryRow(context.Background(), `SELECT COUNT(*) FROM reviews WHERE repository_id = $1`, p.repo.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d reviews saved (%v), want none", n, err)
	}
	if runs := p.gh.CheckRuns("octo", "demo"); len(runs) != 1 || runs[0].Conclusion != "cancelled" {
		t.Fatalf("check runs %+v, want the started one cancelled", runs)
	}
}

func TestWorkerRateLimitedSaysWhenItResets(t *testing.T) {
	t.Parallel()
	p := setupPosting(t, storetest.SQLite(t), Config{})
	storetest.Review(t, p.db, p.repo, 1, 0, time.Now()) // the one review of the window
	runReview(t, p, specialisttest.ChangedLines{}, pipeline.RateLimit{MaxReviews: 1, Window: time.Hour})
	if f := failures(t, p); len(f) != 1 || f[0].Reason != event.ReasonRateLimit {
		t.Fatalf("review.failed %+v, want one rate_limit", f)
	}
	cs := p.gh.IssueComments("octo", "demo", 7)
	resets := time.Now().UTC().Truncate(time.Hour).Add(time.Hour).Format("2006-01-02 15:04")
	if len(cs) != 1 || !strings.Contains(cs[0].Body, resets) {
		t.Fatalf("issue comments %+v, want one saying the limit resets at %s", cs, resets)
	}
	if rs := p.gh.Reviews("octo", "demo", 7); len(rs) != 0 {
		t.Fatal("a review was posted over the rate limit")
	}
}

func TestWorkerSnoozesOnGitHubsRateLimit(t *testing.T) {
	t.Parallel()
	p := setupPosting(t, storetest.SQLite(t), Config{})
	p.gh.SecondaryRateLimit(1, 30*time.Second)
	w := &pipeline.Worker{
		DB:         p.db,
		Sources:    map[string]func(string) change.Source{"github": p.app.Source},
		Publishers: map[string]pipeline.Publisher{"github": p.app.Publisher()},
		Specialists: func(repoconfig.Config, pipeline.ReviewArgs) []specialist.Specialist {
			return []specialist.Specialist{specialisttest.ChangedLines{}}
		},
	}
	// The last attempt: a failure would be recorded as internal_error.
	job := &river.Job[pipeline.ReviewArgs]{JobRow: &rivertype.JobRow{Attempt: 3, MaxAttempts: 3}, Args: p.args()}
	var snooze *river.JobSnoozeError
	if err := w.Work(context.Background(), job); !errors.As(err, &snooze) || snooze.Duration != 30*time.Second {
		t.Fatalf("Work: %v, want a 30 s snooze", err)
	}
	if f := failures(t, p); len(f) != 0 {
		t.Fatalf("review.failed %+v recorded for a rate limit of GitHub's", f)
	}
}
