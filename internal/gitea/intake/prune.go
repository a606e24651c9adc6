package intake

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/delivery"
	"github.com/quorum-review/quorum/internal/store"
)

// pruneQuery forgets the deliveries received before $1 and handled before
// it too, or never. A delivery is handled after it was received, so
// received_at bounds both and its index finds them.
const pruneQuery = `DELETE FROM gitea_deliveries WHERE received_at < $1 AND (handled_at IS NULL OR handled_at < $1)`

// Prune forgets the deliveries handled, or received and never handled,
// longer than delivery.Retention ago, and reports how many.
func (in *Intake) Prune(ctx context.Context) (int64, error) {
	n, err := in.db.Writer().Exec(ctx, pruneQuery, store.Micros(in.now().Add(-delivery.Retention)))
	if err != nil {
		return 0, fmt.Errorf("prune gitea deliveries: %w", err)
	}
	return n, nil
}

// PruneArgs is the daily job that runs Prune.
type PruneArgs struct{}

// Kind names the job.
func (PruneArgs) Kind() string { return "gitea.prune" }

type pruneWorker struct {
	river.WorkerDefaults[PruneArgs]
	in *Intake
}

func (w *pruneWorker) Work(ctx context.Context, _ *river.Job[PruneArgs]) error {
	_, err := w.in.Prune(ctx)
	return err
}

// PruneEvery schedules Prune daily, on the elected leader.
func PruneEvery() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(24*time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{}, nil }, nil)
}
