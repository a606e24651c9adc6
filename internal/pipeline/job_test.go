package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// jobBundle is a database with the review worker running on it, over a
// real repository with two successive heads of one pull request.
type jobBundle struct {
	db           *store.DB
	repo         account.Repository
	dir          string
	head1, head2 string
	done         <-chan *river.Event
	jobs         *store.Jobs
}

// specialists returns four specialists finding one problem each on app.go
// line 9; hang, when set, makes them block on head1 until cancelled, after
// closing started.
func fourSpecialists(hang *hangOn) func(repoconfig.Config, ReviewArgs) []specialist.Specialist {
	return func(repoconfig.Config, ReviewArgs) []specialist.Specialist {
		var out []specialist.Specialist
		for _, n := range []string{specialist.Logic, specialist.Security, specialist.Performance, specialist.Tests} {
			out = append(out, fake{name: n, find: func(ctx context.Context, c *change.Change) []specialist.Finding {
				if hang != nil && c.HeadSHA == hang.head {
					hang.once.Do(func() { close(hang.started) })
					<-ctx.Done()
					return nil
				}
				return []specialist.Finding{fnd("quorum:"+n, specialist.SeverityMedium, "app.go", 9, n+" problem")}
			}})
		}
		return out
	}
}

type hangOn struct {
	head    string
	started chan struct{}
	once    sync.Once
}

// setupJobs starts nothing yet; watch is how often running reviews look for
// a newer head (long, so a test sees only the checks before and after the
// specialists; short to test cancelling a running review).
func setupJobs(t *testing.T, b storetest.Backend, limits RateLimit, watch time.Duration, hang func(head1 string) *hangOn) *jobBundle {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"app.go": baseApp})
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(map[string]string{"app.go": headApp})
	head1 := r.Commit("first push")
	r.Write(map[string]string{"app.go": headApp + "\nfunc More() {}\n"})
	head2 := r.Commit("second push")

	db := b.Open(t)
	jb := &jobBundle{db: db, repo: storetest.Repo(t, db, "acme", "acme", "api"), dir: r.Dir, head1: head1, head2: head2}
	var h *hangOn
	if hang != nil {
		h = hang(head1)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &Worker{
		DB:          db,
		Sources:     map[string]func(string) change.Source{"local": func(dir string) change.Source { return change.NewLocal(dir) }},
		Specialists: fourSpecialists(h),
		Limits:      limits,
		Watch:       watch,
	})
	jobs, err := db.ConfigureJobs(store.JobsConfig{Workers: workers, Work: true, PollInterval: 100 * time.Millisecond, QueuePollInterval: 100 * time.Millisecond, Queues: map[string]int{Queue: 2}})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := jobs.Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	t.Cleanup(cancel)
	jb.done, jb.jobs = events, jobs
	return jb
}

func (jb *jobBundle) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := jb.jobs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		_ = jb.jobs.Stop(stopCtx)
		cancel()
	})
}

func (jb *jobBundle) enqueue(t *testing.T, pr int, head string) {
	t.Helper()
	err := jb.db.InTx(context.Background(), func(tx store.Tx) error {
		return Enqueue(context.Background(), tx, ReviewArgs{AccountID: jb.repo.AccountID, RepositoryID: jb.repo.ID,
			Owner: "acme", Repo: "api", PR: pr, Head: head, Base: "main", Source: "local", Location: jb.dir}, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wait returns the final state of the next n jobs, by head.
func (jb *jobBundle) wait(t *testing.T, n int) map[string]string {
	t.Helper()
	states := map[string]string{}
	timeout := time.After(60 * time.Second)
	for len(states) < n {
		select {
		case e := <-jb.done:
			var a ReviewArgs
			if err := json.Unmarshal(e.Job.EncodedArgs, &a); err != nil {
				t.Fatal(err)
			}
			states[a.Head] = string(e.Job.State)
		case <-timeout:
			t.Fatalf("only %d of %d jobs finished: %v", len(states), n, states)
		}
	}
	return states
}

func (jb *jobBundle) reviewedHeads(t *testing.T) []string {
	t.Helper()
	rows, err := jb.db.Reader().Query(context.Background(), `SELECT head_sha FROM reviews ORDER BY head_sha`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var heads []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		heads = append(heads, h)
	}
	return heads
}

// A newer head queued before the older one ran cancels it; asking twice
// for one head queues one job.
func TestReviewJobNewerHeadCancelsQueued(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		jb := setupJobs(t, b, RateLimit{}, time.Hour, nil)
		jb.enqueue(t, 7, jb.head1)
		jb.enqueue(t, 7, jb.head2)
		jb.enqueue(t, 7, jb.head2)
		if n := count(t, jb.db, `SELECT count(*) FROM river_job WHERE kind = 'review.run'`); n != 2 {
			t.Fatalf("%d review jobs queued, want 2 (one per head)", n)
		}
		jb.start(t)
		states := jb.wait(t, 2)
		if states[jb.head1] != "cancelled" || states[jb.head2] != "completed" {
			t.Fatalf("job states %v: want the first head cancelled, the second completed", states)
		}
		if heads := jb.reviewedHeads(t); len(heads) != 1 || heads[0] != jb.head2 {
			t.Fatalf("reviews of heads %v, want only %s", heads, jb.head2)
		}
		// The job stored how long it took: reading the change from git and
		// the database round trips before synthesis take milliseconds.
		if n := count(t, jb.db, `SELECT count(*) FROM reviews WHERE duration_ms > 0`); n != 1 {
			t.Errorf("%d reviews with a duration, want the one the job stored", n)
		}
		var names []string
		for _, e := range events(t, jb.db, jb.repo.AccountID) {
			names = append(names, e.Name)
		}
		if len(names) != 2 || names[0] != event.ReviewCompleted || names[1] != event.FindingCreated {
			t.Errorf("events %v, want review.completed and finding.created", names)
		}
	})
}

// A newer head pushed while an older review runs stops it; it saves
// nothing.
func TestReviewJobNewerHeadCancelsRunning(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		var h *hangOn
		jb := setupJobs(t, b, RateLimit{}, 10*time.Millisecond, func(head1 string) *hangOn {
			h = &hangOn{head: head1, started: make(chan struct{})}
			return h
		})
		jb.enqueue(t, 7, jb.head1)
		jb.start(t)
		select {
		case <-h.started:
		case <-time.After(60 * time.Second):
			t.Fatal("the first review never started")
		}
		jb.enqueue(t, 7, jb.head2)
		states := jb.wait(t, 2)
		if states[jb.head1] != "cancelled" || states[jb.head2] != "completed" {
			t.Fatalf("job states %v: want the running first head cancelled, the second completed", states)
		}
		if heads := jb.reviewedHeads(t); len(heads) != 1 || heads[0] != jb.head2 {
			t.Fatalf("reviews of heads %v, want only %s", heads, jb.head2)
		}
	})
}

// Over the account's review rate limit a job runs no specialist and
// records review.failed rate_limit.
func TestReviewJobRateLimit(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		jb := setupJobs(t, b, RateLimit{Window: time.Hour, MaxReviews: 1}, time.Hour, nil)
		jb.enqueue(t, 7, jb.head2)
		jb.start(t)
		jb.wait(t, 1)
		jb.enqueue(t, 8, jb.head2)
		jb.wait(t, 1)
		if heads := jb.reviewedHeads(t); len(heads) != 1 {
			t.Fatalf("%d reviews stored, want 1 within the limit", len(heads))
		}
		evs := events(t, jb.db, jb.repo.AccountID)
		last := evs[len(evs)-1]
		var data event.ReviewFailedData
		if err := json.Unmarshal(last.Data, &data); err != nil {
			t.Fatal(err)
		}
		if last.Name != event.ReviewFailed || data.Reason != event.ReasonRateLimit || data.PRNumber != 8 {
			t.Errorf("last event %s %+v, want review.failed rate_limit for #8", last.Name, data)
		}
	})
}

// TestReviewJobRetriesWhenTheDatabaseFails: a review whose newest head
// cannot be read (the database unreachable a moment) is retried, not
// cancelled for good as a superseded one is.
func TestReviewJobRetriesWhenTheDatabaseFails(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	w := &Worker{DB: db}
	db.Close()
	job := &river.Job[ReviewArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: reviewAttempts},
		Args: ReviewArgs{AccountID: "acc", RepositoryID: "repo", Owner: "o", Repo: "r", PR: 1, Head: "abc", Source: "local"}}
	err := w.Work(context.Background(), job)
	var cancel *river.JobCancelError
	if err == nil || errors.As(err, &cancel) {
		t.Fatalf("Work = %v, want an error River retries", err)
	}
}
