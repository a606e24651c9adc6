package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// Closing a pull request stops its running review and cancels its queued
// one; neither is saved.
func TestCloseCancelsReviews(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		var h *hangOn
		jb := setupJobs(t, b, RateLimit{}, 10*time.Millisecond, func(head1 string) *hangOn {
			h = &hangOn{head: head1, started: make(chan struct{})}
			return h
		})
		closePR := func(pr int) {
			t.Helper()
			if err := jb.db.InTx(context.Background(), func(tx store.Tx) error {
				return Close(context.Background(), tx, jb.repo.ID, pr, time.Now())
			}); err != nil {
				t.Fatal(err)
			}
		}
		jb.enqueue(t, 8, jb.head2)
		closePR(8) // queued, then closed
		jb.enqueue(t, 7, jb.head1)
		jb.start(t)
		select {
		case <-h.started:
		case <-time.After(60 * time.Second):
			t.Fatal("the review never started")
		}
		closePR(7) // running, then closed
		states := jb.wait(t, 2)
		if states[jb.head1] != "cancelled" || states[jb.head2] != "cancelled" {
			t.Fatalf("job states %v: want both cancelled", states)
		}
		if heads := jb.reviewedHeads(t); len(heads) != 0 {
			t.Fatalf("reviews of closed pull requests: %v", heads)
		}
	})
}

// Rerun reviews a head that was reviewed already, once per key.
func TestRerunReviewsAgain(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		jb := setupJobs(t, b, RateLimit{}, time.Hour, nil)
		args := ReviewArgs{AccountID: jb.repo.AccountID, RepositoryID: jb.repo.ID,
			Owner: "acme", Repo: "api", PR: 7, Head: jb.head2, Base: "main", Source: "local", Location: jb.dir}
		rerun := func(key string) {
			t.Helper()
			if err := jb.db.InTx(context.Background(), func(tx store.Tx) error {
				return Rerun(context.Background(), tx, args, key, time.Now())
			}); err != nil {
				t.Fatal(err)
			}
		}
		jb.enqueue(t, 7, jb.head2)
		jb.start(t)
		if states := jb.wait(t, 1); states[jb.head2] != "completed" {
			t.Fatalf("first review: %v", states)
		}
		jb.enqueue(t, 7, jb.head2) // Enqueue alone does not review a head twice
		rerun("comment:1")
		rerun("comment:1") // the same request, delivered twice
		if states := jb.wait(t, 1); states[jb.head2] != "completed" {
			t.Fatalf("second review: %v", states)
		}
		if n := count(t, jb.db, `SELECT count(*) FROM river_job WHERE kind = 'review.run'`); n != 2 {
			t.Errorf("%d review jobs, want 2 (the review and one re-run)", n)
		}
		if heads := jb.reviewedHeads(t); len(heads) != 2 || heads[0] != jb.head2 || heads[1] != jb.head2 {
			t.Errorf("reviews of heads %v, want %s twice", heads, jb.head2)
		}
		err := jb.db.InTx(context.Background(), func(tx store.Tx) error {
			return Rerun(context.Background(), tx, args, "", time.Now())
		})
		if err == nil {
			t.Error("Rerun without a key: no error")
		}
	})
}
