package intake

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// Prune forgets the deliveries handled, or received and never handled,
// longer than delivery.Retention ago, and reports how many.
func (in *Intake) Prune(ctx context.Context) (int64, error) {
	return deliveries.Prune(ctx, in.db, in.now())
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
