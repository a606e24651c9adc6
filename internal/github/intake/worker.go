package intake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v88/github"
	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/delivery"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
)

// Queue is the River queue of intake jobs. One worker per process works
// it, so a pull request's events are handled in the order they arrived.
const Queue = "github_intake"

// Source is the pipeline.Worker source of GitHub changes: ReviewArgs of
// this source carry the installation id, in decimal, as their Location.
const Source = "github"

// DeliveryArgs is the job that handles one stored webhook delivery.
type DeliveryArgs struct {
	DeliveryID string `json:"delivery_id"`
}

// Kind names the job.
func (DeliveryArgs) Kind() string { return "github.delivery" }

// InsertOpts puts the job on Queue. A GitHub call that fails is retried
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
	name, err := deliveries.Handle(ctx, wk.in.db, job.Args.DeliveryID, wk.in.now, wk.in.plan)
	if errors.Is(err, account.ErrLoginTaken) || errors.Is(err, account.ErrInvalidLogin) {
		// Retrying changes nothing: an operator must say whose the login
		// is, and a login GitHub does not allow stays so.
		wk.in.log.Error("github delivery not handled", "delivery", job.Args.DeliveryID, "event", name, "error", err.Error())
		return river.JobCancel(err)
	}
	return err
}

// action is what a delivery changes, run in the transaction that marks it
// handled.
type action = delivery.Action

// plan decodes a delivery and asks GitHub what it must know (outside any
// transaction), and returns what to change, or nil for nothing.
func (in *Intake) plan(ctx context.Context, d delivery.Delivery) (action, error) {
	ev, err := github.ParseWebHook(d.Event, d.Payload)
	if err != nil {
		return nil, fmt.Errorf("decode payload: %w", err)
	}
	switch e := ev.(type) {
	case *github.InstallationEvent:
		return in.installation(e), nil
	case *github.InstallationRepositoriesEvent:
		return in.installationRepositories(e), nil
	case *github.PullRequestEvent:
		return in.pullRequest(ctx, e)
	case *github.IssueCommentEvent:
		return in.issueComment(ctx, e)
	}
	return nil, nil
}

func (in *Intake) installation(e *github.InstallationEvent) action {
	inst := e.GetInstallation()
	return func(ctx context.Context, tx store.Tx, now time.Time) error {
		acct, err := ownerOf(ctx, tx, inst)
		if err != nil {
			return err
		}
		switch e.GetAction() {
		case "created":
			repos := refs(e.Repositories)
			if _, err := account.Install(ctx, tx, acct, inst.GetID(), repos, now); err != nil {
				return err
			}
			return record(ctx, tx, now, event.InstallationCreated, acct, inst.GetID(), repos)
		case "deleted":
			known, err := account.EnsureInstallation(ctx, tx, acct, inst.GetID(), now)
			if err != nil {
				return err
			}
			held, err := account.Uninstall(ctx, tx, known, now)
			if err != nil {
				return err
			}
			repos := refs(e.Repositories)
			if len(held) > 0 {
				repos = repoRefs(held)
			}
			return record(ctx, tx, now, event.InstallationDeleted, acct, inst.GetID(), repos)
		case "suspend", "unsuspend":
			known, err := account.EnsureInstallation(ctx, tx, acct, inst.GetID(), now)
			if err != nil {
				return err
			}
			return account.Suspend(ctx, tx, known, e.GetAction() == "suspend", now)
		}
		return nil
	}
}

// installationRepositories follows repositories given to or taken from an
// installation; for the customer they are installs on, or uninstalls from,
// those repositories, so they are announced as installation.created and
// installation.deleted listing them.
func (in *Intake) installationRepositories(e *github.InstallationRepositoriesEvent) action {
	inst := e.GetInstallation()
	return func(ctx context.Context, tx store.Tx, now time.Time) error {
		acct, err := ownerOf(ctx, tx, inst)
		if err != nil {
			return err
		}
		known, err := account.EnsureInstallation(ctx, tx, acct, inst.GetID(), now)
		if err != nil {
			return err
		}
		switch e.GetAction() {
		case "added":
			added, err := account.AddRepositories(ctx, tx, known, refs(e.RepositoriesAdded), now)
			if err != nil || len(added) == 0 {
				return err
			}
			return record(ctx, tx, now, event.InstallationCreated, acct, inst.GetID(), repoRefs(added))
		case "removed":
			removed, err := account.RemoveRepositories(ctx, tx, known, refs(e.RepositoriesRemoved), now)
			if err != nil || len(removed) == 0 {
				return err
			}
			return record(ctx, tx, now, event.InstallationDeleted, acct, inst.GetID(), repoRefs(removed))
		}
		return nil
	}
}

func (in *Intake) pullRequest(ctx context.Context, e *github.PullRequestEvent) (action, error) {
	pr := e.GetPullRequest()
	instID := e.GetInstallation().GetID()
	if ok, err := in.installationHas(ctx, instID, e.GetRepo()); !ok || err != nil {
		return nil, err
	}
	switch e.GetAction() {
	case "closed":
		return func(ctx context.Context, tx store.Tx, now time.Time) error {
			_, repo, err := in.repository(ctx, tx, instID, e.GetRepo(), now)
			if err != nil || repo.ID == "" {
				return err
			}
			return pipeline.Close(ctx, tx, repo.ID, e.GetNumber(), now)
		}, nil
	case "opened", "reopened", "synchronize", "ready_for_review", "edited":
		if pr.GetDraft() && !in.cfg.ReviewDrafts {
			in.log.Debug("draft pull request not reviewed", "repo", e.GetRepo().GetFullName(), "pr", e.GetNumber())
			return nil, nil
		}
		if e.GetAction() == "edited" && e.GetChanges().GetBase() == nil {
			return nil, nil // a new title or description changes nothing to review
		}
		return func(ctx context.Context, tx store.Tx, now time.Time) error {
			inst, repo, err := in.repository(ctx, tx, instID, e.GetRepo(), now)
			if err != nil || repo.ID == "" {
				return err
			}
			args := reviewArgs(inst, repo, e.GetNumber(), pr.GetHead().GetSHA(), pr.GetBase().GetSHA())
			if e.GetAction() == "edited" {
				// Another base branch: the same head makes another change,
				// reviewed again once per base.
				return pipeline.Rerun(ctx, tx, args, "base:"+args.Base, now)
			}
			return pipeline.Enqueue(ctx, tx, args, now)
		}, nil
	}
	return nil, nil
}

// issueComment re-runs the review of the pull request's current head when
// a comment asks "@<bot> review" and its author may push to the
// repository.
func (in *Intake) issueComment(ctx context.Context, e *github.IssueCommentEvent) (action, error) {
	c := e.GetComment()
	if e.Issue == nil || !e.Issue.IsPullRequest() || !in.mention(c.GetBody()) || c.GetUser().GetType() == "Bot" {
		return nil, nil
	}
	instID, owner, name, number := e.GetInstallation().GetID(), e.GetRepo().GetOwner().GetLogin(), e.GetRepo().GetName(), e.GetIssue().GetNumber()
	if ok, err := in.installationHas(ctx, instID, e.GetRepo()); !ok || err != nil {
		return nil, err
	}
	login := c.GetUser().GetLogin()
	ok, err := in.gh.CanWrite(ctx, instID, owner, name, login)
	if err != nil {
		return nil, fmt.Errorf("permission of %s on %s/%s: %w", login, owner, name, err)
	}
	if !ok {
		in.log.Info("review request ignored: commenter cannot write", "repo", owner+"/"+name, "pr", number, "login", login)
		return nil, nil
	}
	head, base, err := in.gh.PullHead(ctx, instID, owner, name, number)
	if err != nil {
		return nil, fmt.Errorf("head of %s/%s#%d: %w", owner, name, number, err)
	}
	return func(ctx context.Context, tx store.Tx, now time.Time) error {
		inst, repo, err := in.repository(ctx, tx, instID, e.GetRepo(), now)
		if err != nil || repo.ID == "" {
			return err
		}
		key := "comment:" + strconv.FormatInt(c.GetID(), 10)
		return pipeline.Rerun(ctx, tx, reviewArgs(inst, repo, number, head, base), key, now)
	}, nil
}

// installationHas reports whether the installation an event names holds
// its repository: as recorded from installation events, or else (a
// repository quorum has not heard of, or one recorded as taken away) as
// GitHub says now. An event naming a repository its installation lacks is
// ignored: it would file that repository, and its reviews, under the
// installation's account.
func (in *Intake) installationHas(ctx context.Context, instID int64, r *github.Repository) (bool, error) {
	owner, name := r.GetOwner().GetLogin(), r.GetName()
	held, err := account.Holds(ctx, in.db.Reader(), account.PlatformGitHub, instID, owner, name)
	if held || err != nil {
		return held, err
	}
	ok, err := in.gh.HasRepository(ctx, instID, owner, name)
	if err != nil {
		return false, fmt.Errorf("does installation %d have %s/%s: %w", instID, owner, name, err)
	}
	if !ok {
		in.log.Warn("github event ignored: its installation does not have the repository", "installation", instID, "repo", owner+"/"+name)
	}
	return ok, nil
}

// repository returns the installation and the repository an event is
// about, recording them when an installation event was missed; the
// repository is empty when the installation is suspended or deleted.
func (in *Intake) repository(ctx context.Context, tx store.Tx, instID int64, r *github.Repository, now time.Time) (account.Installation, account.Repository, error) {
	inst, err := account.FindInstallation(ctx, tx, account.PlatformGitHub, instID)
	if errors.Is(err, account.ErrNotFound) {
		var acct account.Account
		acct, err = account.EnsureOwner(ctx, tx, account.PlatformGitHub, ownerRef(r.GetOwner()))
		if err != nil {
			return inst, account.Repository{}, err
		}
		inst, err = account.EnsureInstallation(ctx, tx, acct, instID, now)
	}
	if err != nil {
		return inst, account.Repository{}, err
	}
	if inst.Suspended || inst.Deleted {
		in.log.Info("event of a suspended or deleted installation ignored", "installation", instID, "repo", r.GetFullName())
		return inst, account.Repository{}, nil
	}
	repos, err := account.AddRepositories(ctx, tx, inst, []account.RepoRef{{Owner: r.GetOwner().GetLogin(), Name: r.GetName(), ExternalID: r.GetID()}}, now)
	if err != nil {
		return inst, account.Repository{}, err
	}
	return inst, repos[0], nil
}

// ownerOf returns the account the installation belongs to: for a known
// installation the one it was recorded on, whatever login the payload
// gives (a rename of that GitHub account renames it); for a new one the
// payload's account, found by GitHub's account id or login, or created.
func ownerOf(ctx context.Context, tx store.Tx, inst *github.Installation) (account.Account, error) {
	o := ownerRef(inst.GetAccount())
	known, err := account.FindInstallation(ctx, tx, account.PlatformGitHub, inst.GetID())
	if errors.Is(err, account.ErrNotFound) {
		return account.EnsureOwner(ctx, tx, account.PlatformGitHub, o)
	}
	if err != nil {
		return account.Account{}, err
	}
	acct, err := account.Get(ctx, tx, known.AccountID)
	if err != nil {
		return account.Account{}, err
	}
	return account.Update(ctx, tx, acct, o)
}

func ownerRef(u *github.User) account.Owner {
	return account.Owner{ExternalID: u.GetID(), Login: u.GetLogin(), Type: u.GetType()}
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

// InstallationData is the data of installation.created and
// installation.deleted (event.InstallationData).
type InstallationData = event.InstallationData

// AccountData is the account an installation belongs to.
type AccountData = event.InstallationAccount

// RepoData is one repository of an installation event.
type RepoData = event.InstallationRepo

func record(ctx context.Context, tx store.Tx, now time.Time, name string, acct account.Account, instID int64, repos []account.RepoRef) error {
	data := event.InstallationData{
		InstallationID: instID,
		Platform:       account.PlatformGitHub,
		Account:        event.InstallationAccount{Login: acct.Login, Type: acct.Type},
	}
	for _, r := range repos {
		data.Repositories = append(data.Repositories, event.InstallationRepo{Owner: r.Owner, Repo: r.Name})
	}
	return event.RecordInstallation(ctx, tx, now, acct.ID, name, data)
}

// refs turns an event's repositories into references; installation events
// give only full_name for the owner.
func refs(rs []*github.Repository) []account.RepoRef {
	out := make([]account.RepoRef, 0, len(rs))
	for _, r := range rs {
		owner, name, ok := strings.Cut(r.GetFullName(), "/")
		if !ok {
			owner, name = r.GetOwner().GetLogin(), r.GetName()
		}
		if owner == "" || name == "" {
			continue
		}
		out = append(out, account.RepoRef{Owner: owner, Name: name, ExternalID: r.GetID()})
	}
	return out
}

func repoRefs(rs []account.Repository) []account.RepoRef {
	out := make([]account.RepoRef, len(rs))
	for i, r := range rs {
		out[i] = account.RepoRef{Owner: r.Owner, Name: r.Name}
	}
	return out
}
