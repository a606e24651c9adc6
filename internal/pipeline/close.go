package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorum-review/quorum/internal/store"
)

// Close records in tx that the pull request was closed: it has no head to
// review any more, so its queued reviews are cancelled before they start
// and a running one within Worker.Watch, and none is saved. A reopened
// pull request is enqueued again.
func Close(ctx context.Context, tx store.Tx, repositoryID string, pr int, now time.Time) error {
	if err := setNewestHead(ctx, tx, repositoryID, pr, "", now); err != nil {
		return fmt.Errorf("close pull request #%d: %w", pr, err)
	}
	return nil
}

// Rerun asks in tx for a review of args.Head again, even when that head was
// reviewed already (Enqueue queues one review per head). key names the
// request (a comment's id, say): asking twice with the same key still runs
// one review. Like Enqueue it makes args.Head the pull request's newest.
func Rerun(ctx context.Context, tx store.Tx, args ReviewArgs, key string, now time.Time) error {
	if args.AccountID == "" || args.RepositoryID == "" || args.Head == "" || args.Source == "" || key == "" {
		return errors.New("rerun review: account, repository, head, source and key are required")
	}
	if err := setNewestHead(ctx, tx, args.RepositoryID, args.PR, args.Head, now); err != nil {
		return fmt.Errorf("rerun review of %s/%s#%d: %w", args.Owner, args.Repo, args.PR, err)
	}
	if err := tx.InsertJob(ctx, rerunArgs{ReviewArgs: args, Rerun: key}, nil); err != nil {
		return fmt.Errorf("rerun review of %s/%s#%d: %w", args.Owner, args.Repo, args.PR, err)
	}
	return nil
}

// rerunArgs is a review job that is unique by its key as well as by its
// head, so it is not taken for the review of that head already done. It
// has ReviewArgs' kind, and the worker reads it as ReviewArgs (the key is
// an extra JSON field it ignores).
type rerunArgs struct {
	ReviewArgs
	Rerun string `json:"rerun" river:"unique"`
}

// setNewestHead records head as the newest of the pull request ("" once it
// is closed).
func setNewestHead(ctx context.Context, tx store.Tx, repositoryID string, pr int, head string, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO pull_requests (repository_id, pr_number, head_sha, updated_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (repository_id, pr_number) DO UPDATE SET head_sha = excluded.head_sha, updated_at = excluded.updated_at`,
		repositoryID, pr, head, store.Micros(now))
	return err
}
