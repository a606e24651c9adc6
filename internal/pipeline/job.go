package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/membudget"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/store"
)

// ReviewArgs is the River job that reviews one pull-request head. It is
// unique per repository, pull request and head: asking twice for the same
// head queues one review.
type ReviewArgs struct {
	AccountID    string `json:"account_id"`
	RepositoryID string `json:"repository_id" river:"unique"`
	Owner        string `json:"owner"`
	Repo         string `json:"repo"`
	PR           int    `json:"pr" river:"unique"`
	Head         string `json:"head" river:"unique"`
	// Base is the base revision; empty means the source's default.
	Base string `json:"base,omitempty"`
	// Source names the Worker.Sources entry that builds the change, and
	// Location is what that source needs to find the repository (a
	// directory for "local").
	Source   string `json:"source"`
	Location string `json:"location,omitempty"`
}

// Kind names the job.
func (ReviewArgs) Kind() string { return "review.run" }

// reviewAttempts is how often a review that failed internally is tried
// before review.failed internal_error is recorded.
const reviewAttempts = 3

// Queue is the River queue of review jobs: a review loads and analyses a
// whole change (hundreds of MB at its peak), so a process works only a few
// at once, whatever else it works.
const Queue = "review"

// InsertOpts puts the job on Queue and makes it unique by its tagged
// arguments.
func (ReviewArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: reviewAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// Enqueue asks for a review of args.Head in tx, and records it as the pull
// request's newest head, so reviews of older heads are cancelled — queued
// ones before they start, running ones within Worker.Watch.
func Enqueue(ctx context.Context, tx store.Tx, args ReviewArgs, now time.Time) error {
	if args.AccountID == "" || args.RepositoryID == "" || args.Head == "" || args.Source == "" {
		return errors.New("enqueue review: account, repository, head and source are required")
	}
	_, err := tx.Exec(ctx, `INSERT INTO pull_requests (repository_id, pr_number, head_sha, updated_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (repository_id, pr_number) DO UPDATE SET head_sha = excluded.head_sha, updated_at = excluded.updated_at`,
		args.RepositoryID, args.PR, args.Head, store.Micros(now))
	if err != nil {
		return fmt.Errorf("enqueue review of %s/%s#%d: %w", args.Owner, args.Repo, args.PR, err)
	}
	if err := tx.InsertJob(ctx, args, nil); err != nil {
		return fmt.Errorf("enqueue review of %s/%s#%d: %w", args.Owner, args.Repo, args.PR, err)
	}
	return nil
}

// ErrSuperseded cancels a review whose head is no longer the pull
// request's newest.
var ErrSuperseded = errors.New("a newer head of the pull request was pushed")

// Publisher posts a finished review back to where the change came from.
type Publisher interface {
	// Head returns the pull request's current head on the platform; when it
	// differs from args.Head the worker saves review.failed stale_head, and
	// Publish sees that reason: it posts no review.
	Head(ctx context.Context, args ReviewArgs) (string, error)
	// Publish is called inside Save's transaction (so posting is queued
	// atomically with the review): it inserts the job(s) that post the
	// review, or the notice of a failed run (saved.Reason). A completed
	// review is saved without its events: the publisher records them with
	// Announce once the review is posted (or, when posting fails for good,
	// once it gives up: the review is still in the API).
	Publish(ctx context.Context, tx store.Tx, args ReviewArgs, saved Saved) error
}

// Starter is a Publisher that shows that a review started (a check run in
// progress, say). Its error is logged, never fails the review.
type Starter interface {
	Started(ctx context.Context, args ReviewArgs) error
}

// RetryLater is an error of a source or publisher that asks to be tried
// again later, such as a platform's rate limit: the review job is snoozed
// for RetryAfter rather than failed.
type RetryLater interface {
	error
	RetryAfter() time.Duration
}

// RateLimitError is a platform's rate limit met while reading a change, a
// head or posting: the job asking is snoozed for After.
type RateLimitError struct {
	Err   error
	After time.Duration
}

func (e *RateLimitError) Error() string { return e.Err.Error() }

func (e *RateLimitError) Unwrap() error { return e.Err }

// RetryAfter is how long to wait.
func (e *RateLimitError) RetryAfter() time.Duration { return e.After }

var _ RetryLater = (*RateLimitError)(nil)

// Worker runs review jobs: the rate limit, the change, the repository's
// configuration from its base, the specialists, and Save.
type Worker struct {
	river.WorkerDefaults[ReviewArgs]

	DB *store.DB
	// Sources build changes, by ReviewArgs.Source.
	Sources map[string]func(location string) change.Source
	// Publishers post finished reviews, by ReviewArgs.Source; a source
	// without one (local) publishes nothing.
	Publishers map[string]Publisher
	// Specialists returns the specialists the configuration enables, for
	// the review args asks for (the LLM engine keeps its results per
	// repository).
	Specialists func(cfg repoconfig.Config, args ReviewArgs) []specialist.Specialist
	// SpecialistTimeout bounds each specialist (DefaultTimeout when 0).
	SpecialistTimeout time.Duration
	Limits            RateLimit
	// Watch is how often a running review checks whether a newer head
	// superseded it (default 5 s).
	Watch time.Duration
	Now   func() time.Time
	Log   *slog.Logger
	// Observe, when set, is told of each review the job saved (a review
	// or a failure) and how long the job took to make it (the metrics).
	Observe func(res Result, took time.Duration)
	// Memory, when set, bounds the memory of the reviews running at once:
	// each reserves its estimate (membudget.EstimateOf) before its
	// specialists start, and waits while the others hold the rest.
	Memory *membudget.Budget
}

// Timeout bounds a whole job: every specialist's timeout, plus loading.
func (w *Worker) Timeout(*river.Job[ReviewArgs]) time.Duration {
	return 2*w.specialistTimeout() + time.Minute
}

func (w *Worker) specialistTimeout() time.Duration {
	if w.SpecialistTimeout > 0 {
		return w.SpecialistTimeout
	}
	return DefaultTimeout
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Work reviews the job's head.
func (w *Worker) Work(ctx context.Context, job *river.Job[ReviewArgs]) error {
	a := job.Args
	start := time.Now()
	// On the worker's clock, as synthesis is: the review's stored duration.
	began := w.now()
	if err := w.checkCurrent(ctx, a); err != nil {
		return cancelIfSuperseded(err)
	}
	open, ok := w.Sources[a.Source]
	if !ok {
		return river.JobCancel(fmt.Errorf("review %s/%s#%d: unknown source %q", a.Owner, a.Repo, a.PR, a.Source))
	}
	lastAttempt := job.Attempt >= job.MaxAttempts
	// fail records review.failed internal_error on the last attempt, and
	// otherwise lets River retry; a platform's rate limit snoozes the job
	// instead, using no attempt.
	fail := func(err error) error {
		var later RetryLater
		if errors.As(err, &later) {
			return river.JobSnooze(later.RetryAfter())
		}
		if !lastAttempt {
			return err
		}
		if w.Log != nil {
			w.Log.Error("review failed", "owner", a.Owner, "repo", a.Repo, "pr", a.PR, "head", a.Head, "error", err.Error())
		}
		// The attempt may have ended with its context (the job's time
		// limit): the failure must still be recorded.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		res := Skipped(a.Owner, a.Repo, a.PR, a.Head, event.ReasonInternalError, w.now())
		if _, serr := w.save(sctx, a, res, start); serr != nil {
			return errors.Join(err, serr)
		}
		return nil
	}

	if _, err := CheckRateLimit(ctx, w.DB.Reader(), a.AccountID, w.Limits, w.now()); err != nil {
		if !errors.Is(err, ErrRateLimited) {
			return fail(err)
		}
		res := Skipped(a.Owner, a.Repo, a.PR, a.Head, event.ReasonRateLimit, w.now())
		if _, err := w.save(ctx, a, res, start); err != nil {
			return fail(err)
		}
		return nil
	}

	c, err := open(a.Location).Change(ctx, change.Ref{Owner: a.Owner, Repo: a.Repo, PRNumber: a.PR, Base: a.Base, Head: a.Head})
	if err != nil {
		return fail(fmt.Errorf("read the change: %w", err))
	}
	cfg, problems := repoconfig.Load(ctx, c)
	release, err := w.reserve(ctx, a, c)
	if err != nil {
		return err
	}
	defer release()
	if s, ok := w.Publishers[a.Source].(Starter); ok {
		if err := s.Started(ctx, a); err != nil && w.Log != nil {
			w.Log.Warn("show the review as started", "owner", a.Owner, "repo", a.Repo, "pr", a.PR, "error", err.Error())
		}
	}

	// Stop early when a newer head arrives while the specialists run.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go w.watch(runCtx, cancel, a)
	res := Run(runCtx, c, w.Specialists(cfg, a), Options{
		Timeout:          w.specialistTimeout(),
		Quorum:           cfg.Quorum,
		BlockingSeverity: cfg.BlockingSeverity,
		MaxFindings:      cfg.MaxFindings,
		Include:          cfg.Includes,
		Notes:            problems,
		Rules:            cfg.Rules,
		Now:              w.Now,
	})
	if errors.Is(context.Cause(runCtx), ErrSuperseded) {
		return river.JobCancel(ErrSuperseded)
	}
	res.Review.Duration = res.Review.SynthesizedAt.Sub(began)
	if err := ctx.Err(); err != nil {
		if lastAttempt && !errors.Is(context.Cause(ctx), ErrSuperseded) {
			// No attempt is left: say that the review could not be made.
			return fail(fmt.Errorf("the review ran out of time: %w", err))
		}
		return err // the job was stopped; River retries it
	}
	if !res.Completed() && w.Log != nil {
		w.Log.Warn("review could not run", "owner", a.Owner, "repo", a.Repo, "pr", a.PR, "head", a.Head,
			"reason", res.Reason, "summary", res.Review.Summary)
	}
	if err := w.checkCurrent(ctx, a); err != nil {
		return cancelIfSuperseded(err)
	}
	if pub := w.Publishers[a.Source]; pub != nil {
		// Just before posting: a head that moved on the platform (a push
		// whose webhook has not arrived yet) gets nothing posted.
		head, err := pub.Head(ctx, a)
		if err != nil {
			return fail(fmt.Errorf("ask for the current head: %w", err))
		}
		if head != a.Head {
			// The publisher posts nothing for it, but may close what
			// Started opened.
			res = Skipped(a.Owner, a.Repo, a.PR, a.Head, event.ReasonStaleHead, w.now())
			if _, err := w.save(ctx, a, res, start); err != nil {
				return fail(fmt.Errorf("save the review: %w", err))
			}
			return nil
		}
	}
	if _, err := w.save(ctx, a, res, start); err != nil {
		return fail(fmt.Errorf("save the review: %w", err))
	}
	return nil
}

// reserve takes the review's estimate from w.Memory, waiting while other
// reviews hold it. The wait takes at most one specialist timeout of the
// job's time limit; past it the job is snoozed (back to the queue, no
// attempt used), so that it still has the time to run when it gets the
// memory.
func (w *Worker) reserve(ctx context.Context, a ReviewArgs, c *change.Change) (func(), error) {
	if w.Memory == nil {
		return func() {}, nil
	}
	est, err := membudget.EstimateOf(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// A tree that cannot be listed: reserve as for the largest review.
		est = membudget.Estimate{Bytes: w.Memory.Total()}
	}
	var waitStart time.Time
	waiting := func(reserved int64) {
		waitStart = time.Now()
		if w.Log != nil {
			w.Log.Info("review waiting for memory", "owner", a.Owner, "repo", a.Repo, "pr", a.PR, "head", a.Head,
				"estimate", membudget.FormatSize(est.Bytes), "go_source", est.SourceBytes,
				"reserved", membudget.FormatSize(reserved), "budget", membudget.FormatSize(w.Memory.Total()))
		}
	}
	wctx, cancel := context.WithTimeout(ctx, w.specialistTimeout())
	defer cancel()
	release, err := w.Memory.Acquire(wctx, est.Bytes, waiting)
	if err != nil {
		if ctx.Err() == nil {
			if w.Log != nil {
				w.Log.Info("review still waiting for memory: queued again", "owner", a.Owner, "repo", a.Repo, "pr", a.PR, "head", a.Head,
					"waited", time.Since(waitStart).Round(time.Millisecond).String())
			}
			return nil, river.JobSnooze(time.Second)
		}
		return nil, err
	}
	if !waitStart.IsZero() && w.Log != nil {
		w.Log.Info("review got its memory", "owner", a.Owner, "repo", a.Repo, "pr", a.PR, "head", a.Head,
			"estimate", membudget.FormatSize(est.Bytes), "waited", time.Since(waitStart).Round(time.Millisecond).String())
	}
	return release, nil
}

// save saves res and, when the source has a Publisher, queues its posting
// in the same transaction; then tells Observe, with the time since the
// attempt started.
func (w *Worker) save(ctx context.Context, a ReviewArgs, res Result, started time.Time) (Saved, error) {
	saved, err := w.saveOnly(ctx, a, res)
	if err == nil && w.Observe != nil {
		w.Observe(res, time.Since(started))
	}
	return saved, err
}

// saveOnly is save without Observe.
func (w *Worker) saveOnly(ctx context.Context, a ReviewArgs, res Result) (Saved, error) {
	pub := w.Publishers[a.Source]
	if pub == nil {
		return Save(ctx, w.DB, a.AccountID, a.RepositoryID, res, w.Limits)
	}
	return saveThen(ctx, w.DB, a.AccountID, a.RepositoryID, res, w.Limits, event.RecordAt, false, func(tx store.Tx, saved Saved) error {
		if saved.Reason == event.ReasonRateLimit {
			// The publisher says when the limit resets.
			u, err := Usage(ctx, tx, a.AccountID, w.Limits, res.Review.SynthesizedAt)
			if err != nil {
				return err
			}
			saved.RateLimit = u
		}
		return pub.Publish(ctx, tx, a, saved)
	})
}

// cancelIfSuperseded cancels the job when a newer head superseded it; any
// other error (the database unreachable a moment) is retried.
func cancelIfSuperseded(err error) error {
	if errors.Is(err, ErrSuperseded) {
		return river.JobCancel(err)
	}
	return err
}

// checkCurrent returns ErrSuperseded when a newer head of the pull request
// was enqueued.
func (w *Worker) checkCurrent(ctx context.Context, a ReviewArgs) error {
	var newest string
	err := w.DB.Reader().QueryRow(ctx, `SELECT head_sha FROM pull_requests WHERE repository_id = $1 AND pr_number = $2`,
		a.RepositoryID, a.PR).Scan(&newest)
	if errors.Is(err, store.ErrNotFound) {
		return nil // enqueued without Enqueue: nothing supersedes it
	}
	if err != nil {
		return fmt.Errorf("check the newest head: %w", err)
	}
	if newest != a.Head {
		return fmt.Errorf("%w (%s replaces %s)", ErrSuperseded, short(newest), short(a.Head))
	}
	return nil
}

func (w *Worker) watch(ctx context.Context, cancel context.CancelCauseFunc, a ReviewArgs) {
	every := w.Watch
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := w.checkCurrent(ctx, a); errors.Is(err, ErrSuperseded) {
				cancel(ErrSuperseded)
				return
			}
		}
	}
}
