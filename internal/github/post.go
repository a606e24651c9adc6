package github

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
)

// PostArgs is the River job that posts a saved review (or the notice of a
// failed run) to its pull request.
type PostArgs struct {
	Review   pipeline.ReviewArgs `json:"review"`
	ReviewID string              `json:"review_id,omitempty"`
	Reason   string              `json:"reason,omitempty"`
}

// Kind names the job.
func (PostArgs) Kind() string { return "github.post" }

type postWorker struct {
	river.WorkerDefaults[PostArgs]
	app *App
}

func (w *postWorker) Work(ctx context.Context, job *river.Job[PostArgs]) error {
	return nil
}

type publisher struct{ app *App }

var _ pipeline.Publisher = publisher{}

func (p publisher) Head(ctx context.Context, args pipeline.ReviewArgs) (string, error) {
	return args.Head, nil
}

func (p publisher) Publish(ctx context.Context, tx store.Tx, args pipeline.ReviewArgs, saved pipeline.Saved) error {
	return tx.InsertJob(ctx, PostArgs{Review: args, ReviewID: saved.ReviewID, Reason: saved.Reason}, nil)
}
