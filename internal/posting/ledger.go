package posting

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

// Post is what a platform's post job carries: a saved review to post, or
// the notice of a run that failed. Each platform's job args are this type
// under a kind of their own.
type Post struct {
	Review pipeline.ReviewArgs `json:"review"`
	// ReviewID is the saved review; empty for a notice.
	ReviewID string `json:"review_id,omitempty"`
	// Reason is review.failed's reason, for a notice.
	Reason string `json:"reason,omitempty"`
	// Notice asks for the issue comment of a failed run.
	Notice bool `json:"notice,omitempty"`
	// ResetsAt is when the review rate limit resets, for a rate_limit
	// notice.
	ResetsAt time.Time `json:"resets_at,omitzero"`
	// RateLimit is the account's usage when the review was saved, for its
	// review.completed.
	RateLimit event.RateLimit `json:"rate_limit,omitzero"`
	// Failed are the specialists that did not finish, for a
	// quorum_failure notice. Only their names are posted: why they failed
	// (an error's text, which can name internal hosts) stays in quorum's
	// log.
	Failed []string `json:"failed,omitempty"`
}

// NoticeWindow is how often at most a pull request gets a quorum_failure
// notice.
const NoticeWindow = time.Hour

// How a review's posting settled (settled_reviews.outcome).
const (
	Posted = "posted"
	Stale  = "stale"
	Failed = "failed"
)

// Ledger records in quorum's database how the posting of each review
// settled and which notices pull requests were given, for every platform.
type Ledger struct {
	DB  *store.DB
	Now func() time.Time
}

// NewPost is the post of what the review job saved: the review, or for a
// run that failed, its notice when this call claims it (at most one per
// pull request, reason and window, claimed in the review's transaction
// tx). Notice stays false when the window's notice was already given or
// the reason has none.
func (l Ledger) NewPost(ctx context.Context, tx store.Tx, args pipeline.ReviewArgs, saved pipeline.Saved) (Post, error) {
	post := Post{Review: args, ReviewID: saved.ReviewID, Reason: saved.Reason, RateLimit: saved.RateLimit}
	var window time.Time
	switch saved.Reason {
	case event.ReasonRateLimit:
		post.ResetsAt = saved.RateLimit.ResetsAt
		window = saved.RateLimit.ResetsAt
	case event.ReasonQuorumFailure:
		window = l.Now().Truncate(NoticeWindow)
		post.Failed = saved.SpecialistsFailed
	}
	if window.IsZero() {
		return post, nil
	}
	n, err := tx.Exec(ctx, `INSERT INTO pr_notices (repository_id, pr_number, reason, window_start, created_at)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, args.RepositoryID, args.PR, saved.Reason, store.Micros(window), store.Micros(l.Now()))
	if err != nil {
		return post, fmt.Errorf("claim the notice of %s/%s#%d: %w", args.Owner, args.Repo, args.PR, err)
	}
	post.Notice = n > 0 // else already told in this window
	return post, nil
}

// Outcome returns how the review's posting settled, "" when it has not.
func (l Ledger) Outcome(ctx context.Context, reviewID string) (string, error) {
	var outcome string
	err := l.DB.Reader().QueryRow(ctx, `SELECT outcome FROM settled_reviews WHERE review_id = $1`, reviewID).Scan(&outcome)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read whether review %s was posted: %w", reviewID, err)
	}
	return outcome, nil
}

// Settle records how the review's posting ended and announces it in the
// same transaction: review.failed stale_head for a stale head, else
// review.completed and finding.created. A review already settled is left
// as it is; Settle reports whether this call settled it.
func (l Ledger) Settle(ctx context.Context, p Post, full review.Full, outcome string) (bool, error) {
	settled := false
	err := l.DB.InTx(ctx, func(tx store.Tx) error {
		n, err := tx.Exec(ctx, `INSERT INTO settled_reviews (review_id, outcome, settled_at) VALUES ($1, $2, $3)
ON CONFLICT (review_id) DO NOTHING`, full.ID, outcome, store.Micros(l.Now()))
		if err != nil || n == 0 {
			return err
		}
		settled = true
		r := p.Review
		if outcome == Stale {
			_, err := event.RecordAt(ctx, tx, l.Now(), r.AccountID, event.ReviewFailed, event.ReviewFailedData{
				Owner: r.Owner, Repo: r.Repo, PRNumber: r.PR, HeadSHA: r.Head, Reason: event.ReasonStaleHead, SpecialistsFailed: []string{},
			})
			return err
		}
		_, err = pipeline.Announce(ctx, tx, l.Now(), r.AccountID, full, p.RateLimit)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("settle the post of review %s (%s): %w", full.ID, outcome, err)
	}
	return settled, nil
}

// fallbackTimeout bounds recording that posting was given up, after the
// attempt's own context may have ended.
const fallbackTimeout = 30 * time.Second

// GiveUp settles a review whose posting failed for good as failed, which
// still announces it (the spec's "failure-fallback": it is in the API even
// though it is not on the pull request). It runs even when ctx has ended
// (the job's time limit), and returns cause joined with its own errors.
func (l Ledger) GiveUp(ctx context.Context, p Post, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fallbackTimeout)
	defer cancel()
	full, err := review.NewStore(l.DB).Get(ctx, p.Review.AccountID, p.ReviewID)
	if err != nil {
		return errors.Join(cause, err)
	}
	if _, err := l.Settle(ctx, p, full, Failed); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// NoticeText is the one short comment of a run that did not produce a
// review, "" for a reason that has none. bot is the name a comment
// mentions to ask for a review ("@quorum review").
func NoticeText(p Post, bot string) string {
	r := p.Review
	switch p.Reason {
	case event.ReasonRateLimit:
		return fmt.Sprintf("quorum skipped the review of %s: this account has used all its reviews for now. "+
			"The limit resets at %s UTC (%s); after that, push again or comment `@%s review`.",
			Short(r.Head), p.ResetsAt.UTC().Format("2006-01-02 15:04"), p.ResetsAt.UTC().Format(time.RFC3339), bot)
	case event.ReasonQuorumFailure:
		body := fmt.Sprintf("quorum could not review %s: too few of its reviewers finished, so no verdict was given. "+
			"Comment `@%s review` to try again.", Short(r.Head), bot)
		if len(p.Failed) > 0 {
			body += fmt.Sprintf(" Did not finish: %s (why is in quorum's log).", strings.Join(p.Failed, ", "))
		}
		return body
	}
	return ""
}
