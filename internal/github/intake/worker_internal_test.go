package intake

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// Two runs of one delivery's job at once (a job rescued while the first
// run still works it) handle it once: the first to claim it.
func TestDeliveryHandledOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		ctx := context.Background()
		// Both runs have read the payload before either writes: Work asks
		// the time after reading and planning, before its transaction.
		var arrived sync.WaitGroup
		arrived.Add(2)
		var calls atomic.Int32
		now := func() time.Time {
			if calls.Add(1) <= 2 {
				arrived.Done()
				waited := make(chan struct{})
				go func() { arrived.Wait(); close(waited) }()
				select {
				case <-waited:
				case <-time.After(30 * time.Second):
					t.Error("the second run did not read the delivery within 30s")
				}
			}
			return time.Now()
		}
		in, err := New(Config{WebhookSecret: "s"}, db, nil, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		rw := river.NewWorkers()
		in.Register(rw)
		if _, err := db.ConfigureJobs(store.JobsConfig{Workers: rw}); err != nil { // insert-only
			t.Fatal(err)
		}
		payload, err := os.ReadFile(filepath.Join("testdata", "installation.created.json"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Writer().Exec(ctx, `INSERT INTO github_deliveries (delivery_id, event, action, installation_id, payload, received_at)
VALUES ('d1', 'installation', 'created', 957387, $1, 0)`, string(payload)); err != nil {
			t.Fatal(err)
		}

		wk := &worker{in: in}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = wk.Work(ctx, &river.Job[DeliveryArgs]{Args: DeliveryArgs{DeliveryID: "d1"}}) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("run %d: %v", i, err)
			}
		}
		var events, handled int
		if err := db.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM events`).Scan(&events); err != nil {
			t.Fatal(err)
		}
		if events != 1 {
			t.Errorf("%d installation.created events, want 1", events)
		}
		if err := db.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM github_deliveries WHERE handled_at IS NOT NULL AND payload IS NULL`).Scan(&handled); err != nil || handled != 1 {
			t.Errorf("%d deliveries handled (%v), want 1", handled, err)
		}
	})
}
