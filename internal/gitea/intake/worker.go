package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/delivery"
	"github.com/quorum-review/quorum/internal/gitea"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
)

// Queue is the River queue of Gitea intake jobs. One worker per process
// works it, so a pull request's events are handled in the order they
// arrived.
const Queue = "gitea_intake"

// Source is the pipeline.Worker source of Gitea changes: ReviewArgs of
// this source carry Gitea's repository id (the installation's external
// id), in decimal, as their Location.
const Source = "gitea"

// DeliveryArgs is the job that handles one stored webhook delivery.
type DeliveryArgs struct {
	DeliveryID string `json:"delivery_id"`
}

// Kind names the job.
func (DeliveryArgs) Kind() string { return "gitea.delivery" }

// InsertOpts puts the job on Queue. A Gitea call that fails is retried
// with River's backoff, for about a day.
func (DeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 15}
}

type worker struct {
	river.WorkerDefaults[DeliveryArgs]
	in *Intake
}

// Work handles the delivery and drops its payload, in one transaction with
// what it changes (delivery.Table.Handle).
func (wk *worker) Work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	_, err := deliveries.Handle(ctx, wk.in.db, job.Args.DeliveryID, wk.in.now, wk.in.plan)
	return err
}

// The parts of Gitea's payloads (modules/structs/hook.go, pull.go,
// issue.go of Gitea v1.26.0) the worker reads.
type (
	repository struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	}
	branch struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	pullRequest struct {
		Number int    `json:"number"`
		Draft  bool   `json:"draft"` // a title with a WIP prefix
		State  string `json:"state"` // open or closed
		Head   branch `json:"head"`
		Base   branch `json:"base"`
	}
	pullRequestPayload struct {
		Action      string       `json:"action"`
		Number      int          `json:"number"`
		Changes     *changes     `json:"changes"`
		PullRequest *pullRequest `json:"pull_request"`
		Repository  repository   `json:"repository"`
	}
	issueCommentPayload struct {
		Action string `json:"action"`
		Issue  struct {
			Number int `json:"number"`
		} `json:"issue"`
		Comment struct {
			ID   int64  `json:"id"`
			Body string `json:"body"`
			User struct {
				Login string `json:"login"`
			} `json:"user"`
		} `json:"comment"`
		Repository repository `json:"repository"`
		IsPull     bool       `json:"is_pull"`
	}
)

// plan decodes a delivery and asks Gitea what it must know (outside any
// transaction), and returns what to change, or nil for nothing.
func (in *Intake) plan(ctx context.Context, d delivery.Delivery) (delivery.Action, error) {
	payload, repositoryID := d.Payload, d.Scope
	switch d.Event {
	case "pull_request":
		var e pullRequestPayload
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, fmt.Errorf("decode payload: %w", err)
		}
		if e.PullRequest == nil || e.Number <= 0 {
			return nil, nil
		}
		r, connected, err := in.named(ctx, repositoryID, e.Repository)
		if err != nil || !connected {
			return nil, err
		}
		e.Repository = r
		if e.Action != "closed" && in.api != nil {
			// The head and base are Gitea's now, not the payload's: a
			// delivery replayed (from Gitea's "Replay", or captured with
			// its signature and sent again under a new id) must not make
			// an older head the pull request's newest, which would drop
			// the current head's review.
			now, err := in.currentPull(ctx, r, e.Number)
			if gitea.StatusOf(err) == http.StatusNotFound {
				in.log.Info("event of a pull request Gitea does not have ignored", "repository", repositoryID, "pr", e.Number, "action", e.Action)
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			if now.State != "open" {
				in.log.Info("event of a pull request no longer open ignored", "repository", repositoryID, "pr", e.Number, "action", e.Action)
				return nil, nil
			}
			e.PullRequest.Head, e.PullRequest.Base, e.PullRequest.Draft = now.Head, now.Base, now.Draft
		}
		return in.pullRequest(e, repositoryID), nil
	case "issue_comment":
		var e issueCommentPayload
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, fmt.Errorf("decode payload: %w", err)
		}
		if e.Action != "created" || !e.IsPull || e.Issue.Number <= 0 || !in.mention(e.Comment.Body) {
			return nil, nil
		}
		r, connected, err := in.named(ctx, repositoryID, e.Repository)
		if err != nil || !connected {
			return nil, err
		}
		e.Repository = r
		return in.issueComment(ctx, e, repositoryID)
	}
	return nil, nil
}

func (in *Intake) pullRequest(e pullRequestPayload, repositoryID int64) delivery.Action {
	pr := e.PullRequest
	if pr == nil || e.Number <= 0 {
		return nil
	}
	if e.Action == "closed" {
		return func(ctx context.Context, tx store.Tx, now time.Time) error {
			_, repo, err := in.repository(ctx, tx, repositoryID, e.Repository, now)
			if err != nil || repo.ID == "" {
				return err
			}
			return pipeline.Close(ctx, tx, repo.ID, e.Number, now)
		}
	}
	if pr.Draft && !in.cfg.ReviewDrafts {
		in.log.Debug("work-in-progress pull request not reviewed", "repository", repositoryID, "pr", e.Number)
		return nil
	}
	if pr.Head.SHA == "" {
		return nil
	}
	return func(ctx context.Context, tx store.Tx, now time.Time) error {
		inst, repo, err := in.repository(ctx, tx, repositoryID, e.Repository, now)
		if err != nil || repo.ID == "" {
			return err
		}
		args := reviewArgs(inst, repo, e.Number, pr.Head.SHA, pr.Base.SHA)
		switch {
		case e.Action != "edited":
			return pipeline.Enqueue(ctx, tx, args, now)
		case e.Changes != nil && e.Changes.Ref != nil:
			// Another base branch: the same head makes another change,
			// reviewed again once per base.
			return pipeline.Rerun(ctx, tx, args, "base:"+args.Base, now)
		}
		// A new title: it may have lost its WIP prefix (Gitea has no
		// ready_for_review), so a head not asked for yet is reviewed.
		asked, err := newestHead(ctx, tx, repo.ID, e.Number)
		if err != nil || asked == args.Head {
			return err
		}
		return pipeline.Enqueue(ctx, tx, args, now)
	}
}

// named returns the hook's repository under a name that is its own. The
// signature proves only that the delivery came with the hook's secret,
// which an administrator of that one repository can read; the owner and
// name in the payload are theirs to write, and quorum fetches, reviews and
// posts on the repository they name with the bot's token. So they are
// taken only when the installation already holds them; any other name (a
// rename, or another repository's) is asked of Gitea by the hook's
// repository id. A repository not connected (any more) is not asked about:
// its events are ignored.
func (in *Intake) named(ctx context.Context, repositoryID int64, r repository) (repository, bool, error) {
	inst, err := account.FindInstallation(ctx, in.db.Reader(), account.PlatformGitea, repositoryID)
	if errors.Is(err, account.ErrNotFound) || (err == nil && (inst.Suspended || inst.Deleted)) {
		in.log.Info("event of an unconnected or disconnected repository ignored", "repository", repositoryID)
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	if r.Owner.Login != "" && r.Name != "" {
		held, err := account.Holds(ctx, in.db.Reader(), account.PlatformGitea, repositoryID, r.Owner.Login, r.Name)
		if err != nil || held {
			return r, held, err
		}
	}
	if in.api == nil {
		return r, false, fmt.Errorf("repository %d is named %s/%s in the payload, which it was not connected as, and there is no Gitea client to ask its name", repositoryID, r.Owner.Login, r.Name)
	}
	var got repository
	_, err = in.api.Do(ctx, http.MethodGet, gitea.Path("repositories", strconv.FormatInt(repositoryID, 10)), nil, &got)
	if err != nil {
		return r, false, fmt.Errorf("name of repository %d: %w", repositoryID, err)
	}
	if got.ID != repositoryID || got.Owner.Login == "" || got.Name == "" {
		return r, false, fmt.Errorf("name of repository %d: Gitea answered with repository %d %q/%q", repositoryID, got.ID, got.Owner.Login, got.Name)
	}
	if !strings.EqualFold(got.Owner.Login, r.Owner.Login) || !strings.EqualFold(got.Name, r.Name) {
		in.log.Warn("gitea delivery names another repository than its hook's; Gitea's name for it is used",
			"repository", repositoryID, "payload", r.Owner.Login+"/"+r.Name, "gitea", got.Owner.Login+"/"+got.Name)
	}
	return got, true, nil
}

// newestHead returns the head last asked to be reviewed for the pull
// request, or "".
func newestHead(ctx context.Context, tx store.Tx, repositoryID string, pr int) (string, error) {
	var head string
	err := tx.QueryRow(ctx, `SELECT head_sha FROM pull_requests WHERE repository_id = $1 AND pr_number = $2`, repositoryID, pr).Scan(&head)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("newest head of pull request %d: %w", pr, err)
	}
	return head, nil
}

// issueComment re-runs the review of the pull request's current head when
// a comment asks "@<bot> review" and its author, not the bot, may push to
// the repository.
func (in *Intake) issueComment(ctx context.Context, e issueCommentPayload, repositoryID int64) (delivery.Action, error) {
	c := e.Comment
	login := c.User.Login
	if e.Action != "created" || !e.IsPull || e.Issue.Number <= 0 || !in.mention(c.Body) || login == "" || strings.EqualFold(login, in.cfg.BotName) {
		return nil, nil
	}
	owner, name, number := e.Repository.Owner.Login, e.Repository.Name, e.Issue.Number
	if in.api == nil {
		return nil, errors.New("no Gitea client to ask who may request a review")
	}
	ok, err := in.canWrite(ctx, owner, name, login)
	if err != nil {
		return nil, fmt.Errorf("permission of %s on %s/%s: %w", login, owner, name, err)
	}
	if !ok {
		in.log.Info("review request ignored: commenter cannot write", "repo", owner+"/"+name, "pr", number, "login", login)
		return nil, nil
	}
	pr, err := in.currentPull(ctx, e.Repository, number)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, tx store.Tx, now time.Time) error {
		inst, repo, err := in.repository(ctx, tx, repositoryID, e.Repository, now)
		if err != nil || repo.ID == "" {
			return err
		}
		key := "comment:" + strconv.FormatInt(c.ID, 10)
		return pipeline.Rerun(ctx, tx, reviewArgs(inst, repo, number, pr.Head.SHA, pr.Base.SHA), key, now)
	}, nil
}

// currentPull asks Gitea for the pull request as it is now.
func (in *Intake) currentPull(ctx context.Context, r repository, number int) (pullRequest, error) {
	var pr pullRequest
	owner, name := r.Owner.Login, r.Name
	if _, err := in.api.Do(ctx, http.MethodGet, gitea.Path("repos", owner, name, "pulls", strconv.Itoa(number)), nil, &pr); err != nil {
		return pr, fmt.Errorf("head of %s/%s#%d: %w", owner, name, number, err)
	}
	if pr.Head.SHA == "" {
		return pr, fmt.Errorf("head of %s/%s#%d: Gitea's answer names no head commit", owner, name, number)
	}
	return pr, nil
}

// canWrite reports whether login may push to owner/name: Gitea's
// permission write, admin or owner. A login Gitea does not know cannot.
func (in *Intake) canWrite(ctx context.Context, owner, name, login string) (bool, error) {
	var p struct {
		Permission string `json:"permission"`
	}
	_, err := in.api.Do(ctx, http.MethodGet, gitea.Path("repos", owner, name, "collaborators", login, "permission"), nil, &p)
	if gitea.StatusOf(err) == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	switch p.Permission {
	case "write", "admin", "owner":
		return true, nil
	}
	return false, nil
}

// repository returns the connected repository's installation and the
// repository an event is about; the repository is empty when the
// installation was disconnected (or is unknown: a delivery stored before
// a disconnect), so the event is ignored.
func (in *Intake) repository(ctx context.Context, tx store.Tx, repositoryID int64, r repository, now time.Time) (account.Installation, account.Repository, error) {
	inst, err := account.FindInstallation(ctx, tx, account.PlatformGitea, repositoryID)
	if errors.Is(err, account.ErrNotFound) {
		in.log.Info("event of an unconnected repository ignored", "repository", repositoryID)
		return inst, account.Repository{}, nil
	}
	if err != nil {
		return inst, account.Repository{}, err
	}
	if inst.Suspended || inst.Deleted {
		in.log.Info("event of a disconnected repository ignored", "repository", repositoryID)
		return inst, account.Repository{}, nil
	}
	if r.Owner.Login == "" || r.Name == "" {
		return inst, account.Repository{}, fmt.Errorf("the payload of repository %d names no owner or name", repositoryID)
	}
	// Under its current name: a renamed repository is recorded anew.
	repos, err := account.AddRepositories(ctx, tx, inst, []account.RepoRef{{Owner: r.Owner.Login, Name: r.Name, ExternalID: repositoryID}}, now)
	if err != nil {
		return inst, account.Repository{}, err
	}
	return inst, repos[0], nil
}

func reviewArgs(inst account.Installation, repo account.Repository, number int, head, base string) pipeline.ReviewArgs {
	return pipeline.ReviewArgs{
		AccountID:    inst.AccountID,
		RepositoryID: repo.ID,
		Owner:        repo.Owner,
		Repo:         repo.Name,
		PR:           number,
		Head:         head,
		Base:         base,
		Source:       Source,
		Location:     strconv.FormatInt(inst.ExternalID, 10),
	}
}
