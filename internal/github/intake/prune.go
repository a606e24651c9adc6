package intake

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/delivery"
)

// Retention is how long a handled delivery's id is kept to recognise a
// redelivery (delivery.Retention).
const Retention = delivery.Retention

// Prune forgets the deliveries handled, or received and never handled,
// longer than Retention ago, and reports how many.
func (in *Intake) Prune(ctx context.Context) (int64, error) {
	n, err := deliveries.Prune(ctx, in.db, in.now())
	if err != nil {
		return 0, fmt.Errorf("github: %w", err)
	}
	return n, nil
}

// PruneArgs is the daily job that runs Prune.
type PruneArgs struct{}

// Kind names the job.
func (PruneArgs) Kind() string { return "github.prune" }

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
