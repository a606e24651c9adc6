package store

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// OptimizeArgs is the periodic job that keeps the query planner's statistics
// fresh: PRAGMA optimize on SQLite (which its authors recommend running
// periodically on long-lived connections), ANALYZE of quorum's tables on
// PostgreSQL.
type OptimizeArgs struct{}

// Kind names the job.
func (OptimizeArgs) Kind() string { return "store.optimize" }

// OptimizeWorker runs OptimizeArgs.
type OptimizeWorker struct {
	river.WorkerDefaults[OptimizeArgs]
	DB *DB
}

// Work runs the optimization.
func (w *OptimizeWorker) Work(ctx context.Context, _ *river.Job[OptimizeArgs]) error {
	stmt := `PRAGMA optimize`
	if w.DB.dialect == Postgres {
		stmt = `ANALYZE accounts, installations, repositories, reviews, findings, api_tokens`
	}
	if _, err := w.DB.Writer().Exec(ctx, stmt); err != nil {
		return fmt.Errorf("optimize: %w", err)
	}
	return nil
}

// OptimizeEvery schedules the job daily, and once at start.
func OptimizeEvery() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(24*time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return OptimizeArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})
}
