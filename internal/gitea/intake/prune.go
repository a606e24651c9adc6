package intake

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/delivery"
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

// PruneEvery schedules Prune daily, on the elected leader.
func PruneEvery() *river.PeriodicJob { return delivery.Daily(PruneArgs{}) }
