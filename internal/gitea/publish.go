package gitea

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/posting"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

// DefaultMaxComments is PublisherConfig.MaxComments when it is not set.
const DefaultMaxComments = 30

// PublisherConfig is how reviews are posted on Gitea.
type PublisherConfig struct {
	// MaxComments bounds the inline comments of one review; the rest go
	// into its body.
	MaxComments int
	// Approve posts APPROVED for approve verdicts; otherwise COMMENT.
	Approve bool
	// BotName is the mention that asks for a re-review ("@quorum
	// review"), as notices say it; "" is the bot account's login.
	BotName string
}

// Publisher posts reviews and notices on the pull requests of one Gitea,
// as the bot account whose token api holds, for pipeline.ReviewArgs of
// Source "gitea" (Location: Gitea's repository id).
type Publisher struct {
	api *Client
	db  *store.DB
	cfg PublisherConfig
	log *slog.Logger
	now func() time.Time

	mu  sync.Mutex
	bot string // the bot account's login, once known
}

var _ pipeline.Publisher = (*Publisher)(nil)

// NewPublisher returns the publisher posting through api; log and now may
// be nil (no log, time.Now).
func NewPublisher(api *Client, db *store.DB, cfg PublisherConfig, log *slog.Logger, now func() time.Time) (*Publisher, error) {
	if api == nil {
		return nil, errors.New("gitea publisher: no API client")
	}
	if db == nil {
		return nil, errors.New("gitea publisher: no database")
	}
	if cfg.MaxComments <= 0 {
		cfg.MaxComments = DefaultMaxComments
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &Publisher{api: api, db: db, cfg: cfg, log: log, now: now}, nil
}

// Register adds the post worker to rw.
func (p *Publisher) Register(rw *river.Workers) {
	river.AddWorker(rw, &postWorker{p: p})
}

// Publisher is what pipeline.Worker calls for source "gitea": p itself,
// named as github.App's for serve's table of publishers.
func (p *Publisher) Publisher() pipeline.Publisher { return p }

func (p *Publisher) ledger() posting.Ledger { return posting.Ledger{DB: p.db, Now: p.now} }

// PostArgs is the River job that posts a saved review, or the notice of a
// run that failed, to its Gitea pull request.
type PostArgs posting.Post

// Kind names the job.
func (PostArgs) Kind() string { return "gitea.post" }

// postAttempts is how often posting is tried; rate limits snooze the job
// instead of using attempts up.
const postAttempts = 8

// InsertOpts sets the attempts. Posts are not unique jobs: each is
// inserted once, by the transaction that saved what it posts.
func (PostArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: postAttempts}
}

// PostTimeout bounds a post job: a few dozen requests at most.
const PostTimeout = 5 * time.Minute

// pull is the part of Gitea's pull request the publisher reads.
type pull struct {
	Head struct {
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Repo struct {
			HTMLURL string `json:"html_url"`
		} `json:"repo"`
	} `json:"base"`
}

func (p *Publisher) pull(ctx context.Context, r pipeline.ReviewArgs) (pull, error) {
	var pr pull
	err := p.call(ctx, http.MethodGet, Path("repos", r.Owner, r.Repo, "pulls", strconv.Itoa(r.PR)), nil, &pr)
	if err != nil {
		return pr, fmt.Errorf("get %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	return pr, nil
}

// Head asks Gitea for the pull request's current head.
func (p *Publisher) Head(ctx context.Context, args pipeline.ReviewArgs) (string, error) {
	pr, err := p.pull(ctx, args)
	if err != nil {
		return "", err
	}
	return pr.Head.SHA, nil
}

// Publish queues the post of a saved review, or, for a run that failed
// with quorum_failure or rate_limit, a notice: at most one per pull
// request, reason and window, claimed here in the review's transaction.
func (p *Publisher) Publish(ctx context.Context, tx store.Tx, args pipeline.ReviewArgs, saved pipeline.Saved) error {
	post, err := p.ledger().NewPost(ctx, tx, args, saved)
	if err != nil {
		return err
	}
	if saved.Reason != "" && !post.Notice {
		return nil
	}
	return tx.InsertJob(ctx, PostArgs(post), nil)
}

// call is Client.Do, with a rate limit's answer turned into a
// RateLimitError.
func (p *Publisher) call(ctx context.Context, method, path string, in, out any) error {
	_, err := p.callHeader(ctx, method, path, in, out)
	return err
}

// callHeader is call that also returns the answer's headers.
func (p *Publisher) callHeader(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	h, err := p.api.Do(ctx, method, path, in, out)
	if d, ok := retryAfter(StatusOf(err), h, p.now()); ok {
		return h, &pipeline.RateLimitError{Err: err, After: d}
	}
	return h, err
}

// retryAfter reads how long a 429, or a 503 that says when to come back,
// asks to wait: Retry-After in seconds or as a date; a minute for a 429
// that does not say.
func retryAfter(status int, h http.Header, now time.Time) (time.Duration, bool) {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return 0, false
	}
	v := h.Get("Retry-After")
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return max(time.Duration(s)*time.Second, time.Second), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), time.Second), true
	}
	if status == http.StatusTooManyRequests {
		return time.Minute, true
	}
	return 0, false // a 503 that names no time is an outage, not a limit
}

type postWorker struct {
	river.WorkerDefaults[PostArgs]
	p *Publisher
}

// Timeout bounds a post.
func (w *postWorker) Timeout(*river.Job[PostArgs]) time.Duration { return PostTimeout }

// Work posts the review or the notice. A review whose posting fails on
// the job's last attempt is still announced (it is in quorum's API though
// not on the pull request), and the error is logged.
func (w *postWorker) Work(ctx context.Context, job *river.Job[PostArgs]) error {
	r := job.Args.Review
	err := w.p.work(ctx, job.Args)
	if limit, ok := errors.AsType[*pipeline.RateLimitError](err); ok {
		w.p.log.Info("Gitea rate limit; posting later", "owner", r.Owner, "repo", r.Repo, "pr", r.PR, "after", limit.After.String())
		return river.JobSnooze(limit.After)
	}
	_, cancelled := errors.AsType[*river.JobCancelError](err)
	if err != nil && job.Args.ReviewID != "" && (job.Attempt >= job.MaxAttempts || cancelled) {
		w.p.log.Error("review not posted; announcing it anyway", "owner", r.Owner, "repo", r.Repo, "pr", r.PR,
			"review", job.Args.ReviewID, "error", err.Error())
		return w.p.ledger().GiveUp(ctx, posting.Post(job.Args), err)
	}
	return err
}

func (p *Publisher) work(ctx context.Context, a PostArgs) error {
	if a.Reason != "" {
		return p.postNotice(ctx, a)
	}
	full, err := review.NewStore(p.db).Get(ctx, a.Review.AccountID, a.ReviewID)
	if err != nil {
		return fmt.Errorf("load review %s: %w", a.ReviewID, err)
	}
	if outcome, err := p.ledger().Outcome(ctx, a.ReviewID); err != nil || outcome != "" {
		return err // settled by an earlier attempt
	}
	return p.postReview(ctx, a, full)
}

// postNotice posts the one short comment of a run that did not produce a
// review.
func (p *Publisher) postNotice(ctx context.Context, a PostArgs) error {
	if !a.Notice {
		return nil
	}
	bot, err := p.mention(ctx)
	if err != nil {
		return err
	}
	body := posting.NoticeText(posting.Post(a), bot)
	if body == "" {
		return nil
	}
	r := a.Review
	err = p.call(ctx, http.MethodPost, Path("repos", r.Owner, r.Repo, "issues", strconv.Itoa(r.PR), "comments"), map[string]string{"body": body}, nil)
	if err != nil {
		return fmt.Errorf("post the notice on %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	return nil
}

// botLogin returns the bot account's login, asked of Gitea once.
func (p *Publisher) botLogin(ctx context.Context) (string, error) {
	p.mu.Lock()
	bot := p.bot
	p.mu.Unlock()
	if bot != "" {
		return bot, nil
	}
	var u User
	if err := p.call(ctx, http.MethodGet, "/user", nil, &u); err != nil {
		return "", fmt.Errorf("get the bot account: %w", err)
	}
	if u.Login == "" {
		return "", errors.New("get the bot account: Gitea gave no login")
	}
	p.mu.Lock()
	p.bot = u.Login
	p.mu.Unlock()
	return u.Login, nil
}

// mention is the name notices ask for a review with.
func (p *Publisher) mention(ctx context.Context) (string, error) {
	if p.cfg.BotName != "" {
		return p.cfg.BotName, nil
	}
	return p.botLogin(ctx)
}

// Review events of Gitea's API (not GitHub's APPROVE).
const (
	eventApproved       = "APPROVED"
	eventRequestChanges = "REQUEST_CHANGES"
	eventComment        = "COMMENT"
	statePending        = "PENDING"
)

func (p *Publisher) reviewEvent(verdict string) string {
	switch verdict {
	case review.VerdictRequestChanges:
		return eventRequestChanges
	case review.VerdictApprove:
		if p.cfg.Approve {
			return eventApproved
		}
	}
	return eventComment
}

// reviewRequest is the body of POST .../pulls/{index}/reviews.
type reviewRequest struct {
	Event    string          `json:"event"`
	Body     string          `json:"body"`
	CommitID string          `json:"commit_id"`
	Comments []reviewComment `json:"comments"`
}

// reviewComment is an inline comment: new_position is a line number of
// the new file (not a diff position).
type reviewComment struct {
	Path        string `json:"path"`
	Body        string `json:"body"`
	NewPosition int    `json:"new_position"`
}

// postReview posts a review: one request with the body, the verdict and
// the inline comments.
func (p *Publisher) postReview(ctx context.Context, a PostArgs, full review.Full) error {
	r := a.Review
	pr, err := p.pull(ctx, r)
	if StatusOf(err) == http.StatusNotFound {
		// The pull request or its repository is gone (or the bot lost
		// access): no attempt will do better.
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if pr.Head.SHA != r.Head {
		// The pull request moved on between saving and posting; the newer
		// head has its own review.
		_, err := p.ledger().Settle(ctx, posting.Post(a), full, posting.Stale)
		return err
	}
	bot, err := p.botLogin(ctx)
	if err != nil {
		return err
	}
	own, err := p.ownReviews(ctx, r, bot)
	if err != nil {
		return err
	}
	posted := map[string]bool{}
	for _, rv := range own {
		switch {
		case rv.State == statePending:
			// Gitea creates a review's comments one by one in the bot's
			// pending review before submitting it: a post that failed
			// half-way left one, which the next post would submit with
			// its own comments. Nobody else sees it.
			if err := p.deleteReview(ctx, r, rv.ID); err != nil {
				return err
			}
		case posting.HasReviewMarker(rv.Body, full.ID):
			// An attempt that stopped after Gitea took the review.
			_, err := p.ledger().Settle(ctx, posting.Post(a), full, posting.Posted)
			return err
		case rv.Comments > 0:
			if err := p.fingerprints(ctx, r, bot, rv.ID, posted); err != nil {
				return err
			}
		}
	}
	files, err := p.diffFiles(ctx, r)
	if err != nil {
		return err
	}
	plan := posting.PlanReview(p.platform(pr.Base.Repo.HTMLURL), full, files, posted)

	req := reviewRequest{Event: p.reviewEvent(full.Verdict), CommitID: r.Head}
	inline := plan.Inline
	for {
		req.Comments = make([]reviewComment, 0, len(inline))
		for _, c := range inline {
			req.Comments = append(req.Comments, reviewComment{Path: c.Finding.Path, Body: c.Body, NewPosition: c.Line})
		}
		req.Body = plan.Body(r.Head) + "\n" + posting.ReviewMarker(full.ID)
		err = p.call(ctx, http.MethodPost, Path("repos", r.Owner, r.Repo, "pulls", strconv.Itoa(r.PR), "reviews"), req, nil)
		if err == nil {
			break
		}
		var apiErr *APIError
		switch {
		case !errors.As(err, &apiErr):
			return fmt.Errorf("post the review of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
		case apiErr.Status == http.StatusUnprocessableEntity && req.Event != eventComment &&
			(strings.Contains(apiErr.Message, "your own pull") || strings.Contains(apiErr.Message, "closed or merged")):
			// Gitea lets nobody approve or reject their own pull request
			// (the bot neither) or a closed one: say it as a comment. It
			// refuses a closed one only after creating the comments in a
			// pending review, which the next request would submit with
			// its own.
			if err := p.deletePending(ctx, r, bot); err != nil {
				return err
			}
			req.Event = eventComment
			continue
		case apiErr.Status == http.StatusInternalServerError && len(inline) > 0:
			// Gitea failed on one of the comments (it checks none before
			// creating them, one by one): drop the comments it may have
			// left pending and post them in the body instead.
			p.log.Info("Gitea failed a review with comments; posting them in its body", "owner", r.Owner, "repo", r.Repo, "pr", r.PR, "error", err.Error())
			if err := p.deletePending(ctx, r, bot); err != nil {
				return err
			}
			for _, c := range inline {
				plan.Refused = append(plan.Refused, c.Finding)
			}
			inline = nil
			continue
		case apiErr.Status == http.StatusUnprocessableEntity:
			// Refused for good: no attempt will do better.
			return river.JobCancel(fmt.Errorf("post the review of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err))
		}
		return fmt.Errorf("post the review of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	_, err = p.ledger().Settle(ctx, posting.Post(a), full, posting.Posted)
	return err
}

// platform is Gitea as posting sees it: no suggestion blocks (a patch is
// shown in a diff block), no comments on a file as a whole. htmlURL is the
// base repository's address, for links to files.
func (p *Publisher) platform(htmlURL string) posting.Platform {
	base := strings.TrimSuffix(htmlURL, "/")
	return posting.Platform{Name: "Gitea", MaxComments: p.cfg.MaxComments,
		FileURL: func(commit, path string) string { return base + "/src/commit/" + commit + "/" + path }}
}

// pullReview is a review as Gitea's API lists it.
type pullReview struct {
	ID   int64 `json:"id"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	State    string `json:"state"`
	Body     string `json:"body"`
	Comments int    `json:"comments_count"`
}

// pageSize is what Gitea gives at most per page by default
// ([api] MAX_RESPONSE_ITEMS).
const pageSize = 50

// ownReviews returns the reviews of the pull request that the bot wrote,
// its pending ones too (Gitea shows a pending review to its author only).
func (p *Publisher) ownReviews(ctx context.Context, r pipeline.ReviewArgs, bot string) ([]pullReview, error) {
	var own []pullReview
	for page := 1; ; page++ {
		var list []pullReview
		h, err := p.callHeader(ctx, http.MethodGet, Path("repos", r.Owner, r.Repo, "pulls", strconv.Itoa(r.PR), "reviews")+
			fmt.Sprintf("?limit=%d&page=%d", pageSize, page), nil, &list)
		if err != nil {
			return nil, fmt.Errorf("list the reviews of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
		}
		for _, rv := range list {
			if strings.EqualFold(rv.User.Login, bot) {
				own = append(own, rv)
			}
		}
		// Gitea pages before it hides others' pending reviews, so a page
		// can be short without being the last: the total says.
		total, err := strconv.Atoi(h.Get("X-Total-Count"))
		if err != nil || len(list) == 0 || page*pageSize >= total {
			return own, nil
		}
	}
}

// fingerprints adds to posted the fingerprints that end the bot's
// comments in one of its reviews. Only the bot's own comments count:
// anyone can write the marker, and a pull request's author must not be
// able to silence a finding with it.
func (p *Publisher) fingerprints(ctx context.Context, r pipeline.ReviewArgs, bot string, reviewID int64, posted map[string]bool) error {
	var comments []struct {
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
	}
	err := p.call(ctx, http.MethodGet, Path("repos", r.Owner, r.Repo, "pulls", strconv.Itoa(r.PR), "reviews", strconv.FormatInt(reviewID, 10), "comments"), nil, &comments)
	if err != nil {
		return fmt.Errorf("list the comments of review %d on %s/%s#%d: %w", reviewID, r.Owner, r.Repo, r.PR, err)
	}
	for _, c := range comments {
		if !strings.EqualFold(c.User.Login, bot) {
			continue
		}
		if fp, ok := posting.FingerprintOf(c.Body); ok {
			posted[fp] = true
		}
	}
	return nil
}

// deletePending deletes the bot's pending reviews of the pull request.
func (p *Publisher) deletePending(ctx context.Context, r pipeline.ReviewArgs, bot string) error {
	own, err := p.ownReviews(ctx, r, bot)
	if err != nil {
		return err
	}
	for _, rv := range own {
		if rv.State != statePending {
			continue
		}
		if err := p.deleteReview(ctx, r, rv.ID); err != nil {
			return err
		}
	}
	return nil
}

// deleteReview deletes one of the bot's reviews (a pending one).
func (p *Publisher) deleteReview(ctx context.Context, r pipeline.ReviewArgs, id int64) error {
	err := p.call(ctx, http.MethodDelete, Path("repos", r.Owner, r.Repo, "pulls", strconv.Itoa(r.PR), "reviews", strconv.FormatInt(id, 10)), nil, nil)
	if err != nil {
		return fmt.Errorf("delete a pending review of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	return nil
}

// diffFiles returns the pull request's files as Gitea diffs them (from
// the merge base to the head), by path. Gitea checks no comment's place:
// one outside these hunks would be taken and shown beside no line, so
// quorum places only what the diff holds.
func (p *Publisher) diffFiles(ctx context.Context, r pipeline.ReviewArgs) (map[string]*change.File, error) {
	var raw []byte
	err := p.call(ctx, http.MethodGet, Path("repos", r.Owner, r.Repo, "pulls", strconv.Itoa(r.PR)+".diff"), nil, &raw)
	if err != nil {
		return nil, fmt.Errorf("get the diff of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	files, err := change.ParseDiff(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("read the diff of %s/%s#%d: %w", r.Owner, r.Repo, r.PR, err)
	}
	byPath := map[string]*change.File{}
	for _, f := range files {
		if f.Status != change.StatusDeleted {
			byPath[f.Path()] = f
		}
	}
	return byPath, nil
}
