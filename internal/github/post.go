package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v88/github"
	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/pipeline"
	posts "github.com/quorum-review/quorum/internal/posting"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

// PostArgs is the River job that posts a saved review, or the notice of a
// run that failed, to its pull request.
type PostArgs posts.Post

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
	post, err := p.app.ledger().NewPost(ctx, tx, args, saved)
	if err != nil {
		return err
	}
	if saved.Reason != "" && !post.Notice && !p.app.cfg.CheckRuns {
		return nil
	}
	return tx.InsertJob(ctx, PostArgs(post), nil)
}

type postWorker struct {
	river.WorkerDefaults[PostArgs]
	app *App
}

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
		return w.app.ledger().GiveUp(ctx, posts.Post(job.Args), err)
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
	outcome, err := w.app.ledger().Outcome(ctx, a.ReviewID)
	switch {
	case err != nil:
		return err
	case outcome == "":
	case outcome == posts.Stale:
		return w.app.completeCheckRun(ctx, c, a.Review, event.ReasonStaleHead, nil)
	default:
		// Posted by an attempt that stopped before its check run.
		return w.app.completeCheckRun(ctx, c, a.Review, full.Verdict, full.Findings)
	}
	return w.app.postReview(ctx, c, a, full)
}

func (a *App) ledger() posts.Ledger { return posts.Ledger{DB: a.db, Now: a.now} }

// settle records how the review's posting ended, and announces it: see
// posts.Ledger.Settle.
func (a *App) settle(ctx context.Context, p PostArgs, full review.Full, outcome string) (bool, error) {
	return a.ledger().Settle(ctx, posts.Post(p), full, outcome)
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

// retryLater wraps err in a RateLimitError when it is a rate limit.
func (a *App) retryLater(err error) error {
	if d, ok := rateLimited(err, a.now()); ok {
		return &pipeline.RateLimitError{Err: err, After: d}
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
	body := posts.NoticeText(posts.Post(p), a.cfg.BotName)
	if body == "" {
		return a.completeCheckRun(ctx, c, r, p.Reason, nil)
	}
	if _, _, err := c.Issues.CreateComment(ctx, r.Owner, r.Repo, r.PR, &gh.IssueComment{Body: &body}); err != nil {
		return fmt.Errorf("post the notice on %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	return a.completeCheckRun(ctx, c, r, p.Reason, nil)
}

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
		if _, err := a.settle(ctx, p, full, posts.Stale); err != nil {
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
	plan := posts.PlanReview(a.platform(pr.GetBase().GetRepo().GetHTMLURL()), full, files, posted)

	// File-level comments go first, so the review's body can list those
	// GitHub refused.
	for _, fc := range plan.FileLevel {
		cm := &gh.PullRequestComment{Body: &fc.Body, CommitID: &r.Head, Path: &fc.Finding.Path, SubjectType: gh.Ptr("file")}
		_, resp, err := c.PullRequests.CreateComment(ctx, r.Owner, r.Repo, r.PR, cm)
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
			plan.Refused = append(plan.Refused, fc.Finding)
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
		if _, err := a.settle(ctx, p, full, posts.Posted); err != nil {
			return err
		}
		return a.completeCheckRun(ctx, c, r, full.Verdict, full.Findings)
	}

	inline := plan.Inline
	req := &gh.PullRequestReviewRequest{CommitID: &r.Head, Event: gh.Ptr(reviewEvent(a.cfg, full.Verdict))}
	for {
		req.Comments = drafts(inline)
		body := plan.Body(r.Head) + "\n" + posts.ReviewMarker(full.ID)
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
			plan.Refused = append(plan.Refused, b.Finding)
		}
		inline = good
	}
	if _, err := a.settle(ctx, p, full, posts.Posted); err != nil {
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
			if fp, ok := posts.FingerprintOf(cm.GetBody()); ok {
				posted[fp] = true
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

// alreadyPosted reports whether the App already posted the review (its
// marker ends one of the App's submitted reviews of the pull request).
func alreadyPosted(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs, bot, reviewID string) (bool, error) {
	found := false
	err := eachOwnReview(ctx, c, r, bot, func(rv *gh.PullRequestReview) (bool, error) {
		found = rv.GetState() != "PENDING" && posts.HasReviewMarker(rv.GetBody(), reviewID)
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
func (a *App) sortComments(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs, cs []posts.Comment) (good, bad []posts.Comment, err error) {
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

func drafts(cs []posts.Comment) []*gh.DraftReviewComment {
	out := make([]*gh.DraftReviewComment, 0, len(cs))
	for _, c := range cs {
		d := &gh.DraftReviewComment{Path: gh.Ptr(c.Finding.Path), Body: gh.Ptr(c.Body), Line: gh.Ptr(c.Line), Side: gh.Ptr("RIGHT")}
		if c.StartLine > 0 && c.StartLine < c.Line {
			d.StartLine, d.StartSide = gh.Ptr(c.StartLine), gh.Ptr("RIGHT")
		}
		out = append(out, d)
	}
	return out
}

// platform is GitHub as posting sees it; htmlURL is the base
// repository's address, for links to files.
func (a *App) platform(htmlURL string) posts.Platform {
	base := strings.TrimSuffix(htmlURL, "/")
	return posts.Platform{Name: "GitHub", Suggestions: true, FileComments: true, MaxComments: a.cfg.MaxComments,
		FileURL: func(commit, path string) string { return base + "/blob/" + commit + "/" + path }}
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
