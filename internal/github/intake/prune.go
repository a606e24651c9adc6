package intake

import (
	"context"
	"fmt"

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

// PruneEvery schedules Prune daily, on the elected leader.
func PruneEvery() *river.PeriodicJob { return delivery.Daily(PruneArgs{}) }
