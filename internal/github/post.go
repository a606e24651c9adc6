package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v88/github"
	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

// PostArgs is the River job that posts a saved review, or the notice of a
// run that failed, to its pull request.
type PostArgs struct {
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

// Kind names the job.
func (PostArgs) Kind() string { return "github.post" }

// postAttempts is how often posting is tried; rate limits snooze the job
// instead of using attempts up.
const postAttempts = 8

// InsertOpts sets the attempts. Posts are not unique jobs: each is
// inserted once, by the transaction that saved what it posts (River's
// unique-by-args would also read the tagged fields of the embedded
// ReviewArgs and fold a head's notice into its review).
func (PostArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: postAttempts}
}

// noticeWindow is how often at most a pull request gets a quorum_failure
// notice.
const noticeWindow = time.Hour

type publisher struct{ app *App }

var (
	_ pipeline.Publisher = publisher{}
	_ pipeline.Starter   = publisher{}
)

// Started shows the review in progress as a check run, when configured.
func (p publisher) Started(ctx context.Context, args pipeline.ReviewArgs) error {
	return p.app.startCheckRun(ctx, args)
}

// Head asks GitHub for the pull request's current head.
func (p publisher) Head(ctx context.Context, args pipeline.ReviewArgs) (string, error) {
	inst, err := strconv.ParseInt(args.Location, 10, 64)
	if err != nil {
		return "", fmt.Errorf("github: location %q is not an installation id", args.Location)
	}
	head, _, err := p.app.PullHead(ctx, inst, args.Owner, args.Repo, args.PR)
	return head, p.app.retryLater(err)
}

// Publish queues the post of a saved review, or, for a run that failed,
// the completion of its check run and, for quorum_failure and rate_limit,
// a notice: at most one per pull request, reason and window, claimed here
// in the review's transaction.
func (p publisher) Publish(ctx context.Context, tx store.Tx, args pipeline.ReviewArgs, saved pipeline.Saved) error {
	post := PostArgs{Review: args, ReviewID: saved.ReviewID, Reason: saved.Reason, RateLimit: saved.RateLimit}
	if saved.Reason != "" {
		var window time.Time
		switch saved.Reason {
		case event.ReasonRateLimit:
			post.ResetsAt = saved.RateLimit.ResetsAt
			window = saved.RateLimit.ResetsAt
		case event.ReasonQuorumFailure:
			window = p.app.now().Truncate(noticeWindow)
			post.Failed = saved.SpecialistsFailed
		}
		if !window.IsZero() {
			n, err := tx.Exec(ctx, `INSERT INTO github_notices (repository_id, pr_number, reason, window_start, created_at)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, args.RepositoryID, args.PR, saved.Reason, store.Micros(window), store.Micros(p.app.now()))
			if err != nil {
				return fmt.Errorf("claim the notice of %s/%s#%d: %w", args.Owner, args.Repo, args.PR, err)
			}
			post.Notice = n > 0 // else already told in this window
		}
		if !post.Notice && !p.app.cfg.CheckRuns {
			return nil
		}
	}
	return tx.InsertJob(ctx, post, nil)
}

type postWorker struct {
	river.WorkerDefaults[PostArgs]
	app *App
}

// fallbackTimeout bounds recording that posting was given up, after the
// attempt's own context may have ended.
const fallbackTimeout = 30 * time.Second

// PostTimeout bounds a post job: with a 422 to sort out, a few dozen
// requests.
const PostTimeout = 5 * time.Minute

// Timeout bounds a post.
func (w *postWorker) Timeout(*river.Job[PostArgs]) time.Duration { return PostTimeout }

// Work posts the review or the notice. A review whose posting fails on
// the job's last attempt is still announced (the spec's "failure-fallback":
// it is in the API even though it is not on the pull request), and the
// error is logged.
func (w *postWorker) Work(ctx context.Context, job *river.Job[PostArgs]) error {
	err := w.work(ctx, job.Args)
	if d, ok := rateLimited(err, w.app.now()); ok {
		w.app.log.Info("GitHub rate limit; posting later", "owner", job.Args.Review.Owner, "repo", job.Args.Review.Repo,
			"pr", job.Args.Review.PR, "after", d.String())
		return river.JobSnooze(d)
	}
	var cancel *river.JobCancelError
	if err != nil && job.Args.ReviewID != "" && (job.Attempt >= job.MaxAttempts || errors.As(err, &cancel)) {
		w.app.log.Error("review not posted; announcing it anyway", "owner", job.Args.Review.Owner, "repo", job.Args.Review.Repo,
			"pr", job.Args.Review.PR, "review", job.Args.ReviewID, "error", errorMessage(err))
		// The attempt may have ended with its context (the job's time
		// limit): giving up must still be recorded.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fallbackTimeout)
		defer cancel()
		full, lerr := review.NewStore(w.app.db).Get(fctx, job.Args.Review.AccountID, job.Args.ReviewID)
		if lerr != nil {
			return errors.Join(err, lerr)
		}
		if _, serr := w.app.settle(fctx, job.Args, full, settledFailed); serr != nil {
			return errors.Join(err, serr)
		}
	}
	return err
}

func (w *postWorker) work(ctx context.Context, a PostArgs) error {
	c, err := w.app.clientFor(a.Review.Location)
	if err != nil {
		return river.JobCancel(err)
	}
	if a.Reason != "" {
		return w.app.postNotice(ctx, c, a)
	}
	full, err := review.NewStore(w.app.db).Get(ctx, a.Review.AccountID, a.ReviewID)
	if err != nil {
		return fmt.Errorf("load review %s: %w", a.ReviewID, err)
	}
	var outcome string
	err = w.app.db.Reader().QueryRow(ctx, `SELECT outcome FROM github_settled_reviews WHERE review_id = $1`, a.ReviewID).Scan(&outcome)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return fmt.Errorf("read whether review %s was posted: %w", a.ReviewID, err)
	case outcome == settledStale:
		return w.app.completeCheckRun(ctx, c, a.Review, event.ReasonStaleHead, nil)
	default:
		// Posted by an attempt that stopped before its check run.
		return w.app.completeCheckRun(ctx, c, a.Review, full.Verdict, full.Findings)
	}
	return w.app.postReview(ctx, c, a, full)
}

// How a review's posting settled (github_settled_reviews.outcome).
const (
	settledPosted = "posted"
	settledStale  = "stale"
	settledFailed = "failed"
)

// settle records how the review's posting ended and announces it in the
// same transaction: review.failed stale_head for a stale head, else
// review.completed and finding.created. A review already settled is left
// as it is; settle reports whether this call settled it.
func (a *App) settle(ctx context.Context, p PostArgs, full review.Full, outcome string) (bool, error) {
	settled := false
	err := a.db.InTx(ctx, func(tx store.Tx) error {
		n, err := tx.Exec(ctx, `INSERT INTO github_settled_reviews (review_id, outcome, settled_at) VALUES ($1, $2, $3)
ON CONFLICT (review_id) DO NOTHING`, full.ID, outcome, store.Micros(a.now()))
		if err != nil || n == 0 {
			return err
		}
		settled = true
		r := p.Review
		if outcome == settledStale {
			_, err := event.RecordAt(ctx, tx, a.now(), r.AccountID, event.ReviewFailed, event.ReviewFailedData{
				Owner: r.Owner, Repo: r.Repo, PRNumber: r.PR, HeadSHA: r.Head, Reason: event.ReasonStaleHead, SpecialistsFailed: []string{},
			})
			return err
		}
		_, err = pipeline.Announce(ctx, tx, a.now(), r.AccountID, full, p.RateLimit)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("settle the post of review %s (%s): %w", full.ID, outcome, err)
	}
	return settled, nil
}

// clientFor returns the client of the installation a ReviewArgs.Location
// names.
func (a *App) clientFor(location string) (*gh.Client, error) {
	inst, err := strconv.ParseInt(location, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("github: location %q is not an installation id", location)
	}
	return a.client(inst)
}

// rateLimited reports whether err is one of GitHub's rate limits, and how
// long to wait: Retry-After when given (secondary limits), else until
// x-ratelimit-reset when x-ratelimit-remaining is 0, else a minute (a
// secondary limit that names no time).
func rateLimited(err error, now time.Time) (time.Duration, bool) {
	var resp *http.Response
	var abuse *gh.AbuseRateLimitError
	var primary *gh.RateLimitError
	var er *gh.ErrorResponse
	switch {
	case errors.As(err, &abuse):
		resp = abuse.Response
	case errors.As(err, &primary):
		resp = primary.Response
	case errors.As(err, &er):
		resp = er.Response
	default:
		return 0, false
	}
	if resp == nil || (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests) {
		return 0, false
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		return max(time.Duration(s)*time.Second, time.Second), true
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(reset, 0).Sub(now), time.Second), true
		}
	}
	if abuse != nil || resp.StatusCode == http.StatusTooManyRequests ||
		strings.Contains(strings.ToLower(errorMessage(err)), "secondary rate limit") {
		return time.Minute, true
	}
	return 0, false // a 403 that is a refusal, not a limit
}

func errorMessage(err error) string {
	var er *gh.ErrorResponse
	if errors.As(err, &er) {
		return er.Message
	}
	return err.Error()
}

// RateLimitError is GitHub's rate limit met while reading a change or a
// head: pipeline.Worker snoozes the review for RetryAfter.
type RateLimitError struct {
	Err   error
	After time.Duration
}

func (e *RateLimitError) Error() string { return e.Err.Error() }

func (e *RateLimitError) Unwrap() error { return e.Err }

// RetryAfter is how long to wait.
func (e *RateLimitError) RetryAfter() time.Duration { return e.After }

var _ pipeline.RetryLater = (*RateLimitError)(nil)

// retryLater wraps err in a RateLimitError when it is a rate limit.
func (a *App) retryLater(err error) error {
	if d, ok := rateLimited(err, a.now()); ok {
		return &RateLimitError{Err: err, After: d}
	}
	return err
}

// postNotice posts the one short issue comment of a run that did not
// produce a review.
func (a *App) postNotice(ctx context.Context, c *gh.Client, p PostArgs) error {
	r := p.Review
	if !p.Notice {
		return a.completeCheckRun(ctx, c, r, p.Reason, nil)
	}
	var body string
	switch p.Reason {
	case event.ReasonRateLimit:
		body = fmt.Sprintf("quorum skipped the review of %s: this account has used all its reviews for now. "+
			"The limit resets at %s UTC (%s); after that, push again or comment `@%s review`.",
			short(r.Head), p.ResetsAt.UTC().Format("2006-01-02 15:04"), p.ResetsAt.UTC().Format(time.RFC3339), a.cfg.BotName)
	case event.ReasonQuorumFailure:
		body = fmt.Sprintf("quorum could not review %s: too few of its reviewers finished, so no verdict was given. "+
			"Comment `@%s review` to try again.", short(r.Head), a.cfg.BotName)
		if len(p.Failed) > 0 {
			body += fmt.Sprintf(" Did not finish: %s (why is in quorum's log).", strings.Join(p.Failed, ", "))
		}
	default:
		return a.completeCheckRun(ctx, c, r, p.Reason, nil)
	}
	if _, _, err := c.Issues.CreateComment(ctx, r.Owner, r.Repo, r.PR, &gh.IssueComment{Body: &body}); err != nil {
		return fmt.Errorf("post the notice on %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	return a.completeCheckRun(ctx, c, r, p.Reason, nil)
}

// marker is the hidden fingerprint at the end of every comment quorum
// posts, by which a finding already posted is not posted again.
// Only a marker that ends the comment counts: finding text is escaped
// (inert) and cannot end a comment, so text from the change or the LLM
// cannot pass for a marker.
var marker = regexp.MustCompile(`<!-- quorum:fp=([A-Za-z0-9_:.-]+) -->\s*$`)

// inert keeps text quorum did not write (headlines and bodies come from
// analyzers and the LLM, which read the pull request) from opening an HTML
// comment, so it can neither hide text nor forge a marker.
func inert(s string) string { return strings.ReplaceAll(s, "<!--", "&lt;!--") }

func markerOf(fp string) string { return "<!-- quorum:fp=" + fp + " -->" }

// postReview posts a review: one request with the summary, the verdict and
// the inline comments; file-level comments before it.
func (a *App) postReview(ctx context.Context, c *gh.Client, p PostArgs, full review.Full) error {
	r := p.Review
	pr, _, err := c.PullRequests.Get(ctx, r.Owner, r.Repo, r.PR)
	if err != nil {
		return fmt.Errorf("get %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	if pr.GetHead().GetSHA() != r.Head {
		// The pull request moved on between saving and posting; the newer
		// head has its own review.
		if _, err := a.settle(ctx, p, full, settledStale); err != nil {
			return err
		}
		return a.completeCheckRun(ctx, c, r, event.ReasonStaleHead, nil)
	}
	bot, err := a.botLogin(ctx)
	if err != nil {
		return err
	}
	posted, err := postedFingerprints(ctx, c, r, bot)
	if err != nil {
		return err
	}
	files, err := a.diffFiles(ctx, c, r)
	if err != nil {
		return err
	}
	plan := planReview(a.cfg, full, files, posted, pr.GetBase().GetRepo().GetHTMLURL())

	// File-level comments go first, so the review's body can list those
	// GitHub refused.
	for _, fc := range plan.fileLevel {
		cm := &gh.PullRequestComment{Body: &fc.body, CommitID: &r.Head, Path: &fc.finding.Path, SubjectType: gh.Ptr("file")}
		_, resp, err := c.PullRequests.CreateComment(ctx, r.Owner, r.Repo, r.PR, cm)
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
			plan.refused = append(plan.refused, fc.finding)
			continue
		}
		if err != nil {
			return fmt.Errorf("post a file comment on %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
		}
	}

	// An attempt that stopped after GitHub took the review (a timeout on
	// the answer, a crash before settling) must not post it again.
	if done, err := alreadyPosted(ctx, c, r, bot, full.ID); err != nil {
		return err
	} else if done {
		if _, err := a.settle(ctx, p, full, settledPosted); err != nil {
			return err
		}
		return a.completeCheckRun(ctx, c, r, full.Verdict, full.Findings)
	}

	inline := plan.inline
	req := &gh.PullRequestReviewRequest{CommitID: &r.Head, Event: gh.Ptr(plan.event)}
	for {
		req.Comments = drafts(inline)
		body := plan.body(a.cfg, r.Head) + "\n" + reviewMarkerOf(full.ID)
		req.Body = &body
		_, resp, err := c.PullRequests.CreateReview(ctx, r.Owner, r.Repo, r.PR, req)
		if err == nil {
			break
		}
		if resp == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			return fmt.Errorf("post the review of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
		}
		if len(inline) == 0 {
			if deleted, derr := deletePending(ctx, c, r, bot); derr != nil || !deleted {
				return errors.Join(fmt.Errorf("post the review of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err), derr)
			}
			continue
		}
		// A pending review of ours left by a post that stopped half-way
		// blocks every other: delete it and try again.
		deleted, derr := deletePending(ctx, c, r, bot)
		if derr != nil {
			return derr
		}
		if deleted {
			continue
		}
		// GitHub refused a comment without saying which: find them with
		// pending reviews (seen by no one, deleted at once), then post
		// without them.
		a.log.Info("GitHub refused a review comment; finding which", "owner", r.Owner, "repo", r.Repo, "pr", r.PR, "error", errorMessage(err))
		good, bad, err := a.sortComments(ctx, c, r, inline)
		if err != nil {
			return err
		}
		if len(bad) == 0 {
			// Each comment passes alone: post without any rather than fail.
			bad, good = good, nil
		}
		for _, b := range bad {
			plan.refused = append(plan.refused, b.finding)
		}
		inline = good
	}
	if _, err := a.settle(ctx, p, full, settledPosted); err != nil {
		return err
	}
	return a.completeCheckRun(ctx, c, r, full.Verdict, full.Findings)
}

// postedFingerprints returns the fingerprints of the findings quorum
// already commented on in the pull request, on any head. Only the App's own
// comments count: anyone can write the marker, and a pull request's author
// must not be able to silence a finding with it.
func postedFingerprints(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs, bot string) (map[string]bool, error) {
	posted := map[string]bool{}
	opts := &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.PullRequests.ListComments(ctx, r.Owner, r.Repo, r.PR, opts)
		if err != nil {
			return nil, fmt.Errorf("list the comments of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
		}
		for _, cm := range page {
			if !strings.EqualFold(cm.GetUser().GetLogin(), bot) {
				continue
			}
			if m := marker.FindStringSubmatch(cm.GetBody()); m != nil {
				posted[m[1]] = true
			}
		}
		if resp.NextPage == 0 {
			return posted, nil
		}
		opts.Page = resp.NextPage
	}
}

// diffFiles returns the pull request's files as GitHub diffs them, by
// path; nil when GitHub cannot say (too large), and then every comment is
// tried inline and the 422 recovery sorts them out.
func (a *App) diffFiles(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs) (map[string]*change.File, error) {
	files, tooLarge, err := githubDiff(ctx, c, change.Ref{Owner: r.Owner, Repo: r.Repo, PRNumber: r.PR})
	if err != nil || tooLarge {
		return nil, err
	}
	byPath := map[string]*change.File{}
	for _, f := range files {
		byPath[f.Path()] = f
	}
	return byPath, nil
}

// reviewMarkerOf is the hidden marker at the end of a posted review's
// body, by which a retried post finds that the review is already there.
func reviewMarkerOf(reviewID string) string { return "<!-- quorum:review=" + reviewID + " -->" }

// alreadyPosted reports whether the App already posted the review (its
// marker ends one of the App's submitted reviews of the pull request).
func alreadyPosted(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs, bot, reviewID string) (bool, error) {
	want := reviewMarkerOf(reviewID)
	found := false
	err := eachOwnReview(ctx, c, r, bot, func(rv *gh.PullRequestReview) (bool, error) {
		found = rv.GetState() != "PENDING" && strings.HasSuffix(strings.TrimSpace(rv.GetBody()), want)
		return found, nil
	})
	return found, err
}

// deletePending deletes the App's pending reviews on the pull request,
// reporting whether there were any.
func deletePending(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs, bot string) (bool, error) {
	deleted := false
	err := eachOwnReview(ctx, c, r, bot, func(rv *gh.PullRequestReview) (bool, error) {
		if rv.GetState() != "PENDING" {
			return false, nil
		}
		if _, _, err := c.PullRequests.DeletePendingReview(ctx, r.Owner, r.Repo, r.PR, rv.GetID()); err != nil {
			return false, fmt.Errorf("delete a pending review of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
		}
		deleted = true
		return false, nil
	})
	return deleted && err == nil, err
}

// eachOwnReview calls fn with each review of the pull request that the
// App (login bot) wrote, page by page, until fn says stop or fails.
func eachOwnReview(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs, bot string, fn func(*gh.PullRequestReview) (stop bool, err error)) error {
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.PullRequests.ListReviews(ctx, r.Owner, r.Repo, r.PR, opts)
		if err != nil {
			return fmt.Errorf("list the reviews of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
		}
		for _, rv := range page {
			if !strings.EqualFold(rv.GetUser().GetLogin(), bot) {
				continue
			}
			if stop, err := fn(rv); err != nil || stop {
				return err
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// sortComments finds the comments GitHub refuses, by bisection with
// pending reviews: a set GitHub takes is good, a refused set of one is bad.
func (a *App) sortComments(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs, cs []comment) (good, bad []comment, err error) {
	if len(cs) == 0 {
		return nil, nil, nil
	}
	rv, resp, err := c.PullRequests.CreateReview(ctx, r.Owner, r.Repo, r.PR,
		&gh.PullRequestReviewRequest{CommitID: &r.Head, Comments: drafts(cs)})
	if err == nil {
		if _, _, err := c.PullRequests.DeletePendingReview(ctx, r.Owner, r.Repo, r.PR, rv.GetID()); err != nil {
			return nil, nil, fmt.Errorf("delete a pending review of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
		}
		return cs, nil, nil
	}
	if resp == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		return nil, nil, fmt.Errorf("try comments on %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	if len(cs) == 1 {
		return nil, cs, nil
	}
	g1, b1, err := a.sortComments(ctx, c, r, cs[:len(cs)/2])
	if err != nil {
		return nil, nil, err
	}
	g2, b2, err := a.sortComments(ctx, c, r, cs[len(cs)/2:])
	if err != nil {
		return nil, nil, err
	}
	// New slices: g1 and b1 may share cs's array with g2 and b2.
	return slices.Concat(g1, g2), slices.Concat(b1, b2), nil
}

// comment is a finding placed on the pull request.
type comment struct {
	finding   review.Finding
	line      int
	startLine int
	body      string
}

func drafts(cs []comment) []*gh.DraftReviewComment {
	out := make([]*gh.DraftReviewComment, 0, len(cs))
	for _, c := range cs {
		d := &gh.DraftReviewComment{Path: gh.Ptr(c.finding.Path), Body: gh.Ptr(c.body), Line: gh.Ptr(c.line), Side: gh.Ptr("RIGHT")}
		if c.startLine > 0 && c.startLine < c.line {
			d.StartLine, d.StartSide = gh.Ptr(c.startLine), gh.Ptr("RIGHT")
		}
		out = append(out, d)
	}
	return out
}

// plan is what a review posts where.
type plan struct {
	summary   string
	event     string
	inline    []comment
	fileLevel []comment
	// overflow is past MaxComments; refused is what GitHub would not
	// place; both are listed in the body.
	overflow []review.Finding
	refused  []review.Finding
	repeated int
	blobURL  string
}

// planReview decides each finding's place: inline on its lines when they
// are in a hunk of GitHub's diff, a file-level comment when its file is in
// the diff but its lines are not, the body past MaxComments or when its
// file is not in the diff at all, and nowhere when it was already posted
// on an earlier head. files nil means GitHub's diff is unknown: every
// finding is tried inline.
func planReview(cfg Config, full review.Full, files map[string]*change.File, posted map[string]bool, htmlURL string) *plan {
	p := &plan{summary: full.Summary, event: reviewEvent(cfg, full.Verdict), blobURL: strings.TrimSuffix(htmlURL, "/")}
	placed := 0
	for _, f := range full.Findings {
		if f.Fingerprint != "" && posted[f.Fingerprint] {
			p.repeated++
			continue
		}
		if placed >= cfg.MaxComments {
			p.overflow = append(p.overflow, f)
			continue
		}
		if f.Line <= 0 {
			// A finding on the file as a whole.
			placed++
			p.fileLevel = append(p.fileLevel, comment{finding: f, body: commentBody(f, "")})
			continue
		}
		c := comment{finding: f, line: f.Line}
		if f.EndLine > f.Line {
			c.startLine, c.line = f.Line, f.EndLine
		}
		var file *change.File
		if files != nil {
			if file = files[f.Path]; file == nil {
				p.overflow = append(p.overflow, f)
				continue
			}
		}
		suggestion := ""
		if start, end, text, ok := suggestionFor(f); ok && inHunk(file, start, end) {
			c.startLine, c.line, suggestion = start, end, text
			if start == end {
				c.startLine = 0
			}
		}
		c.body = commentBody(f, suggestion)
		placed++
		if file != nil && !inHunk(file, max(c.startLine, 1), c.line) {
			if inHunk(file, c.line, c.line) {
				c.startLine = 0 // the range leaves the hunk: its last line alone
			} else {
				p.fileLevel = append(p.fileLevel, c)
				continue
			}
		}
		p.inline = append(p.inline, c)
	}
	return p
}

// inHunk reports whether lines start..end (at head) lie in one hunk of
// file; a nil file (unknown diff) holds every line.
func inHunk(file *change.File, start, end int) bool {
	if file == nil {
		return true
	}
	if start > end {
		start = end
	}
	h := file.HunkFor(end)
	return h != nil && file.HunkFor(start) == h
}

func reviewEvent(cfg Config, verdict string) string {
	switch verdict {
	case review.VerdictRequestChanges:
		return "REQUEST_CHANGES"
	case review.VerdictApprove:
		if cfg.Approve {
			return "APPROVE"
		}
	}
	return "COMMENT"
}

// suggestionFor turns a one-hunk suggested patch into the head lines it
// replaces and their replacement, for a ```suggestion block.
func suggestionFor(f review.Finding) (start, end int, text string, ok bool) {
	if f.SuggestedPatch == nil || *f.SuggestedPatch == "" {
		return 0, 0, "", false
	}
	files, err := change.ParseDiff(strings.NewReader(*f.SuggestedPatch))
	if err != nil || len(files) != 1 || len(files[0].Hunks) != 1 || files[0].Path() != f.Path {
		return 0, 0, "", false
	}
	h := files[0].Hunks[0]
	if h.OldLines == 0 {
		return 0, 0, "", false // an insertion replaces no line to comment on
	}
	var b strings.Builder
	for _, l := range h.Lines {
		if l.Kind != change.KindDeleted {
			b.WriteString(l.Text)
			b.WriteByte('\n')
		}
	}
	return h.OldStart, h.OldStart + h.OldLines - 1, b.String(), true
}

var severityIcon = map[string]string{"critical": "🛑", "high": "🔴", "medium": "🟠", "low": "🟡", "info": "🔵"}

// commentBody is a finding's comment: headline, explanation, the
// suggestion or patch, and the hidden fingerprint.
func commentBody(f review.Finding, suggestion string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s **%s** · %s · %s\n\n", severityIcon[f.Severity], inert(f.Headline), f.Severity, f.Category)
	if f.Body != "" {
		b.WriteString(inert(strings.TrimSpace(f.Body)))
		b.WriteString("\n\n")
	}
	switch {
	case suggestion != "":
		fence := fenceFor(suggestion)
		fmt.Fprintf(&b, "%ssuggestion\n%s%s\n\n", fence, suggestion, fence)
	case f.SuggestedPatch != nil && *f.SuggestedPatch != "":
		fence := fenceFor(*f.SuggestedPatch)
		fmt.Fprintf(&b, "<details><summary>Suggested patch</summary>\n\n%sdiff\n%s\n%s\n\n</details>\n\n", fence, strings.TrimSuffix(*f.SuggestedPatch, "\n"), fence)
	}
	fmt.Fprintf(&b, "<sub>%s</sub>\n", provenance(f))
	if f.Fingerprint != "" {
		b.WriteString(markerOf(f.Fingerprint))
	}
	return b.String()
}

// fenceFor returns a code fence longer than any run of backticks in s.
func fenceFor(s string) string {
	n, run := 3, 0
	for _, r := range s {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", n)
}

func provenance(f review.Finding) string {
	p := "quorum · " + f.Specialist
	if f.Rule != "" {
		p += " · " + f.Rule
	}
	return p
}

// body is the review's body: the summary, the findings past the inline
// limit or outside the diff, and those GitHub refused.
func (p *plan) body(cfg Config, head string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(p.summary))
	if b.Len() == 0 {
		b.WriteString("quorum reviewed this change.")
	}
	b.WriteString("\n")
	// Refused first: the overflow may be cut to fit GitHub's limit.
	if len(p.refused) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d finding(s) GitHub would not place as comments</summary>\n\n", len(p.refused))
		p.list(&b, p.refused, head)
		b.WriteString("\n</details>\n")
	}
	if len(p.overflow) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d more finding(s) (beyond %d inline comments, or outside the diff)</summary>\n\n", len(p.overflow), cfg.MaxComments)
		p.list(&b, p.overflow, head)
		b.WriteString("\n</details>\n")
	}
	if p.repeated > 0 {
		fmt.Fprintf(&b, "\n%d finding(s) already commented on an earlier push are not repeated.\n", p.repeated)
	}
	return b.String()
}

// maxBody is kept below GitHub's limit on a review's body (65,536
// characters), with room for what follows a list.
const maxBody = 60000

func (p *plan) list(b *strings.Builder, fs []review.Finding, head string) {
	for i, f := range fs {
		if b.Len() > maxBody {
			fmt.Fprintf(b, "- … and %d more: quorum's API (`GET /v1/reviews`) has them all.\n", len(fs)-i)
			return
		}
		where, anchor := f.Path, ""
		if f.Line > 0 {
			where += fmt.Sprintf("#L%d", f.Line)
			anchor = fmt.Sprintf("#L%d-L%d", f.Line, max(f.EndLine, f.Line))
		}
		fmt.Fprintf(b, "- %s **%s** (%s, %s) [`%s`](%s/blob/%s/%s%s)", severityIcon[f.Severity], inert(f.Headline), f.Severity,
			f.Specialist, where, p.blobURL, head, f.Path, anchor)
		if f.Fingerprint != "" {
			b.WriteString(" " + markerOf(f.Fingerprint))
		}
		b.WriteString("\n")
	}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
