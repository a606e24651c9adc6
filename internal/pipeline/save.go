package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

// Defaults of the review rate limit (DESIGN.md §2).
const (
	DefaultRateWindow = time.Hour
	DefaultMaxReviews = 100
)

// RateLimit is an account's review rate limit: at most MaxReviews reviews
// of its repositories per window.
//
// Windows are fixed and aligned to the Unix epoch in multiples of Window
// (with the default hour, they start on the hour, UTC): the count starts
// again from zero at resets_at, which is the same for every review in the
// window, and needs no stored state. A rolling window would spread a burst
// more evenly, but its "resets_at" would only free one review at a time,
// which is not what the spec's word says. At a boundary an account can run
// up to twice MaxReviews in a short span; for a limit meant to stop runaway
// use, not to meter, that is accepted.
type RateLimit struct {
	Window     time.Duration // DefaultRateWindow when 0
	MaxReviews int           // DefaultMaxReviews when 0
}

func (l RateLimit) withDefaults() RateLimit {
	if l.Window <= 0 {
		l.Window = DefaultRateWindow
	}
	if l.MaxReviews <= 0 {
		l.MaxReviews = DefaultMaxReviews
	}
	return l
}

// window returns the fixed window holding at.
func (l RateLimit) window(at time.Time) (start, end time.Time) {
	w := l.Window.Microseconds()
	us := store.Micros(at)
	s := us - ((us%w)+w)%w
	return store.FromMicros(s), store.FromMicros(s + w)
}

// ErrRateLimited means the account has used every review of the current
// window: the run is skipped, with review.failed reason rate_limit.
var ErrRateLimited = errors.New("review rate limit reached")

// Usage reports the account's use of its review rate limit at now: the
// reviews of its repositories synthesized in the current window.
func Usage(ctx context.Context, q store.Querier, accountID string, limits RateLimit, now time.Time) (event.RateLimit, error) {
	limits = limits.withDefaults()
	start, end := limits.window(now)
	var used int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM reviews r JOIN repositories p ON p.id = r.repository_id
WHERE p.account_id = $1 AND r.synthesized_at >= $2 AND r.synthesized_at < $3`,
		accountID, store.Micros(start), store.Micros(end)).Scan(&used)
	if err != nil {
		return event.RateLimit{}, fmt.Errorf("count reviews of %s: %w", accountID, err)
	}
	return event.RateLimit{Used: used, MaxReviews: limits.MaxReviews, ResetsAt: end}, nil
}

// CheckRateLimit is called before the specialists run: it returns the
// account's usage, and ErrRateLimited when no review is left in the window.
// Two runs checked at once may both pass and overrun the limit by one each;
// the limit stops runaway use, it is not a meter.
func CheckRateLimit(ctx context.Context, q store.Querier, accountID string, limits RateLimit, now time.Time) (event.RateLimit, error) {
	u, err := Usage(ctx, q, accountID, limits, now)
	if err != nil {
		return u, err
	}
	if u.Used >= u.MaxReviews {
		return u, fmt.Errorf("%w: %d of %d reviews used, resets at %s", ErrRateLimited, u.Used, u.MaxReviews, u.ResetsAt.Format(time.RFC3339))
	}
	return u, nil
}

// Skipped is the result of a run that did not happen, for reason (such as
// event.ReasonRateLimit or event.ReasonStaleHead), to Save as review.failed.
func Skipped(owner, repo string, pr int, headSHA, reason string, at time.Time) Result {
	return Result{
		Reason: reason,
		Review: review.Full{Review: review.Review{
			Owner: owner, Repo: repo, PRNumber: pr, HeadSHA: headSHA,
			SynthesizedAt:        at.UTC().Truncate(time.Microsecond),
			SpecialistsSucceeded: []string{}, SpecialistsFailed: []string{},
		}, Findings: []review.Finding{}},
	}
}

// Saved is what Save wrote.
type Saved struct {
	// ReviewID is the stored review's id; empty for a failed run.
	ReviewID string
	// Events are the ids of the events recorded, in order.
	Events []string
	// RateLimit is the account's usage after the review, as
	// review.completed reports it; zero for a failed run.
	RateLimit event.RateLimit
	// Reason is review.failed's reason for a failed run; empty for a review.
	Reason string
	// SpecialistsFailed are the specialists that did not finish.
	SpecialistsFailed []string
}

// recordFunc writes one event; Save uses event.RecordAt, tests one that fails.
type recordFunc func(ctx context.Context, tx store.Tx, at time.Time, accountID, name string, data any) (string, error)

// Save stores a run's outcome for the account's repository in one
// transaction: a review, its findings, review.completed and (when there
// are findings) finding.created; or, for a failed run, review.failed with
// its reason and the specialists that failed. Either all of it commits or
// none of it does.
func Save(ctx context.Context, db *store.DB, accountID, repositoryID string, res Result, limits RateLimit) (Saved, error) {
	return save(ctx, db, accountID, repositoryID, res, limits, event.RecordAt)
}

func save(ctx context.Context, db *store.DB, accountID, repositoryID string, res Result, limits RateLimit, record recordFunc) (Saved, error) {
	return saveThen(ctx, db, accountID, repositoryID, res, limits, record, true, nil)
}

// saveThen is save, calling then (when not nil) inside the transaction
// with what was written, so what then writes commits or rolls back with it.
// Without announce, a completed review is stored without its events: its
// publisher announces it once it is posted (see Announce).
func saveThen(ctx context.Context, db *store.DB, accountID, repositoryID string, res Result, limits RateLimit, record recordFunc,
	announce bool, then func(tx store.Tx, saved Saved) error) (Saved, error) {
	full := res.Review
	full.RepositoryID = repositoryID
	full.Findings = slices.Clone(full.Findings)
	at := full.SynthesizedAt
	var saved Saved
	write := func(tx store.Tx) error {
		saved = Saved{Reason: res.Reason, SpecialistsFailed: full.SpecialistsFailed}
		if !res.Completed() {
			id, err := record(ctx, tx, at, accountID, event.ReviewFailed, event.ReviewFailedData{
				Owner: full.Owner, Repo: full.Repo, PRNumber: full.PRNumber, HeadSHA: full.HeadSHA,
				Reason: res.Reason, SpecialistsFailed: nonNil(full.SpecialistsFailed),
			})
			saved.Events = append(saved.Events, id)
			return err
		}
		if err := review.NewStore(db).Create(ctx, tx, &full); err != nil {
			return err
		}
		saved.ReviewID = full.ID
		usage, err := Usage(ctx, tx, accountID, limits, at)
		if err != nil {
			return err
		}
		saved.RateLimit = usage
		if !announce {
			return nil
		}
		saved.Events, err = announceWith(ctx, tx, record, at, accountID, full, usage)
		return err
	}
	err := db.InTx(ctx, func(tx store.Tx) error {
		if err := write(tx); err != nil || then == nil {
			return err
		}
		return then(tx, saved)
	})
	if err != nil {
		return Saved{}, fmt.Errorf("save review of %s/%s#%d: %w", full.Owner, full.Repo, full.PRNumber, err)
	}
	return saved, nil
}

// Announce records a stored review's events in tx at the time at:
// review.completed, with the account's usage of the review rate limit as
// it was when the review was saved (Saved.RateLimit), and, when the review
// has findings, finding.created. Save announces a review itself; a
// Publisher announces the reviews it publishes once they are posted, as
// the spec's review.completed means ("a review has been posted").
func Announce(ctx context.Context, tx store.Tx, at time.Time, accountID string, full review.Full, usage event.RateLimit) ([]string, error) {
	return announceWith(ctx, tx, event.RecordAt, at, accountID, full, usage)
}

func announceWith(ctx context.Context, tx store.Tx, record recordFunc, at time.Time, accountID string, full review.Full, usage event.RateLimit) ([]string, error) {
	id, err := record(ctx, tx, at, accountID, event.ReviewCompleted, event.ReviewCompletedData{
		ReviewID: full.ID, Owner: full.Owner, Repo: full.Repo, PRNumber: full.PRNumber, HeadSHA: full.HeadSHA,
		Verdict: full.Verdict, FindingsCount: full.FindingsCount, SpecialistsSucceeded: full.SpecialistsSucceeded,
		RateLimit: usage,
	})
	if err != nil {
		return nil, err
	}
	ids := []string{id}
	if len(full.Findings) == 0 {
		return ids, nil
	}
	briefs := make([]event.FindingBrief, len(full.Findings))
	for i, f := range full.Findings {
		briefs[i] = event.FindingBrief{ID: f.ID, Specialist: f.Specialist, Category: f.Category,
			Severity: f.Severity, Path: f.Path, Line: f.Line, Headline: f.Headline}
	}
	id, err = record(ctx, tx, at, accountID, event.FindingCreated, event.FindingCreatedData{ReviewID: full.ID, Findings: briefs})
	return append(ids, id), err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
