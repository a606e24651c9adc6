package webhook

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// Under a running River client: ten concurrent redeliveries of a failed
// delivery make one attempt now, and its chain's schedule goes on (the
// next retry 5 m after the second attempt, not a second chain at 1 m);
// ten of a dead-lettered one start one new chain (its retry 1 m after);
// ten of a succeeded one send once more. The receiver counts every send.
func TestRedeliverKeepsOneChain(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		clock := storetest.NewClock(time.Now())
		workers := river.NewWorkers()
		river.AddWorker(workers, &Worker{DB: db, Version: "t", AllowPrivate: true, Now: clock.Now})
		jobs, err := db.ConfigureJobs(store.JobsConfig{Workers: workers, Work: true, PollInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ended, cancel := jobs.Subscribe(river.EventKindJobFailed, river.EventKindJobCompleted)
		t.Cleanup(cancel)
		ctx, stop := context.WithCancel(context.Background())
		if err := jobs.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
			defer done()
			_ = jobs.Stop(stopCtx)
			stop()
		})
		var sends atomic.Int32
		var healthy atomic.Bool
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			sends.Add(1)
			if !healthy.Load() {
				w.WriteHeader(http.StatusInternalServerError)
			}
		})
		bd := &bundle{db: db, account: storetest.Repo(t, db, "acme", "acme", "api").AccountID, clock: clock}
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")

		// settle waits for one job to end, then until no job is runnable
		// or running: any other job made runnable meanwhile has run too.
		settle := func(what string) {
			t.Helper()
			select {
			case <-ended:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: no job ended within 30 s", what)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				var n int
				if err := db.Reader().QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE state IN ('available', 'running')`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %d jobs still runnable or running after 30 s", what, n)
				}
			}
			for {
				select {
				case <-ended:
					continue
				default:
				}
				return
			}
		}
		redeliverTen := func(d string) {
			t.Helper()
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					if _, err := Redeliver(context.Background(), db, bd.account, d, clock.Now()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		live := func(d string) int {
			t.Helper()
			js, err := liveJobs(context.Background(), db.Reader(), db.Dialect(), d)
			if err != nil {
				t.Fatal(err)
			}
			return len(js)
		}

		ping, err := Ping(context.Background(), db, bd.account, hook, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		settle("ping")
		if n := sends.Load(); n != 1 {
			t.Fatalf("%d sends after the ping, want 1", n)
		}

		// Failed, its retry due in a minute: ten redeliveries, one send now.
		clock.Advance(10 * time.Second)
		redeliverTen(ping.ID)
		settle("redeliveries of a failed delivery")
		dl, attempts := bd.delivery(t, ping.ID)
		t.Logf("failed delivery, 10 concurrent redeliveries: %d sends in all, %d live jobs", sends.Load(), live(ping.ID))
		if n := sends.Load(); n != 2 || len(attempts) != 2 {
			t.Fatalf("%d sends, %d attempts after ten redeliveries of a failed delivery, want 2", n, len(attempts))
		}
		if want := attempts[1].AttemptedAt.Add(RetryDelays[1]); dl.Status != StatusFailed || dl.NextAttemptAt == nil || !dl.NextAttemptAt.Equal(want) {
			t.Fatalf("after the redelivered attempt: %s, next %v; want failed, next at %s (the chain's second retry)", dl.Status, dl.NextAttemptAt, want)
		}
		if n := live(ping.ID); n != 1 {
			t.Fatalf("%d live jobs, want the one chain", n)
		}

		// Dead-lettered (as a 410 to another delivery does) while its job
		// still waits: ten redeliveries start one new chain.
		bd.exec(t, `UPDATE webhook_deliveries SET status = 'dead_lettered', next_attempt_at = NULL WHERE id = $1`, ping.ID)
		clock.Advance(10 * time.Second)
		redeliverTen(ping.ID)
		settle("redeliveries of a dead letter")
		dl, attempts = bd.delivery(t, ping.ID)
		if n := sends.Load(); n != 3 || len(attempts) != 3 {
			t.Fatalf("%d sends, %d attempts after ten redeliveries of a dead letter, want 3", n, len(attempts))
		}
		if want := attempts[2].AttemptedAt.Add(RetryDelays[0]); dl.NextAttemptAt == nil || !dl.NextAttemptAt.Equal(want) {
			t.Fatalf("new chain: next %v, want %s (a fresh schedule)", dl.NextAttemptAt, want)
		}
		if n := live(ping.ID); n != 1 {
			t.Fatalf("%d live jobs, want the one new chain", n)
		}

		// Succeeded: ten redeliveries send it once more.
		healthy.Store(true)
		ok, err := Ping(context.Background(), db, bd.account, hook, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		settle("a ping that succeeds")
		clock.Advance(10 * time.Second)
		before := sends.Load()
		redeliverTen(ok.ID)
		settle("redeliveries of a success")
		if n := sends.Load() - before; n != 1 {
			t.Fatalf("%d sends after ten redeliveries of a succeeded delivery, want 1", n)
		}
		if dl, _ := bd.delivery(t, ok.ID); dl.Status != StatusSucceeded || dl.Attempts != 2 {
			t.Fatalf("succeeded delivery after redelivery: %+v", dl)
		}
	})
}

// A redelivery asked before an attempt that has since begun is answered by
// that attempt: it changes nothing, whatever the order its transaction
// commits in.
func TestRedeliverAnsweredByLaterAttempt(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
		d := bd.record(t, bd.account)[hook]
		asked := bd.clock.Now()
		bd.clock.Advance(time.Second)
		if err := bd.work(t, d, 1); err == nil {
			t.Fatal("Work succeeded against a 502")
		}
		before, _ := bd.delivery(t, d)
		got, err := Redeliver(context.Background(), bd.db, bd.account, d, asked)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != StatusFailed || !got.NextAttemptAt.Equal(*before.NextAttemptAt) || !got.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("a redelivery asked before the last attempt changed the delivery: %+v, was %+v", got, before)
		}
		got, err = Redeliver(context.Background(), bd.db, bd.account, d, bd.clock.Now().Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != StatusPending || !got.NextAttemptAt.Equal(bd.clock.Now().Add(time.Second)) {
			t.Fatalf("a redelivery asked after the last attempt: %+v, want pending, due now", got)
		}
	})
}
