package github

import (
	"context"
	"errors"
	"fmt"

	gh "github.com/google/go-github/v88/github"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/pipeline"
	posts "github.com/quorum-review/quorum/internal/posting"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

// checkRunName is the name of quorum's check run.
const checkRunName = "quorum"

// annotationsPerRequest is the most annotations GitHub takes in one
// request of the checks API.
const annotationsPerRequest = 50

// startCheckRun creates the head's check run, in progress, and keeps its
// id for completeCheckRun.
func (a *App) startCheckRun(ctx context.Context, r pipeline.ReviewArgs) error {
	if !a.cfg.CheckRuns {
		return nil
	}
	var open int
	err := a.db.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM github_check_runs WHERE repository_id = $1 AND head_sha = $2 AND completed_at IS NULL`,
		r.RepositoryID, r.Head).Scan(&open)
	if err != nil {
		return fmt.Errorf("find the check run of %s/%s@%s: %w", r.Owner, r.Repo, posts.Short(r.Head), err)
	}
	if open > 0 {
		return nil // a retry of the review: its run is still in progress
	}
	c, err := a.clientFor(r.Location)
	if err != nil {
		return err
	}
	run, _, err := c.Checks.CreateCheckRun(ctx, r.Owner, r.Repo, gh.CreateCheckRunOptions{
		Name: checkRunName, HeadSHA: r.Head, Status: gh.Ptr("in_progress"),
		Output: &gh.CheckRunOutput{Title: gh.Ptr("Reviewing"), Summary: gh.Ptr("quorum's reviewers are looking at this change.")},
	})
	if err != nil {
		return fmt.Errorf("create the check run of %s/%s@%s: %w", r.Owner, r.Repo, posts.Short(r.Head), err)
	}
	_, err = a.db.Writer().Exec(ctx, `INSERT INTO github_check_runs (repository_id, head_sha, check_run_id, created_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (repository_id, head_sha) DO UPDATE SET check_run_id = excluded.check_run_id, created_at = excluded.created_at, completed_at = NULL`,
		r.RepositoryID, r.Head, run.GetID(), store.Micros(a.now()))
	if err != nil {
		return fmt.Errorf("keep the check run of %s/%s@%s: %w", r.Owner, r.Repo, posts.Short(r.Head), err)
	}
	return nil
}

// conclusions maps a verdict, or the reason a run failed, to a check run
// conclusion.
var conclusions = map[string]string{
	review.VerdictApprove:        "success",
	review.VerdictComment:        "neutral",
	review.VerdictRequestChanges: "failure",
	event.ReasonStaleHead:        "cancelled",
	event.ReasonRateLimit:        "skipped",
	event.ReasonQuorumFailure:    "neutral",
	event.ReasonInternalError:    "neutral",
}

var annotationLevels = map[string]string{"critical": "failure", "high": "failure", "medium": "warning", "low": "notice", "info": "notice"}

// completeCheckRun completes the head's check run with the outcome (a
// verdict or a failure reason) and the findings as annotations, 50 per
// request. Without check runs, or without one started, it does nothing.
func (a *App) completeCheckRun(ctx context.Context, c *gh.Client, r pipeline.ReviewArgs, outcome string, findings []review.Finding) error {
	if !a.cfg.CheckRuns {
		return nil
	}
	var id int64
	err := a.db.Reader().QueryRow(ctx, `SELECT check_run_id FROM github_check_runs WHERE repository_id = $1 AND head_sha = $2 AND completed_at IS NULL`,
		r.RepositoryID, r.Head).Scan(&id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find the check run of %s/%s@%s: %w", r.Owner, r.Repo, posts.Short(r.Head), err)
	}
	conclusion := conclusions[outcome]
	if conclusion == "" {
		conclusion = "neutral"
	}
	title := fmt.Sprintf("%d finding(s): %s", len(findings), outcome)
	if outcome != review.VerdictApprove && outcome != review.VerdictComment && outcome != review.VerdictRequestChanges {
		title = "No review: " + outcome
	}
	var anns []*gh.CheckRunAnnotation
	for _, f := range findings {
		end := max(f.EndLine, f.Line)
		anns = append(anns, &gh.CheckRunAnnotation{
			Path: gh.Ptr(f.Path), StartLine: gh.Ptr(max(f.Line, 1)), EndLine: gh.Ptr(max(end, 1)),
			AnnotationLevel: gh.Ptr(annotationLevels[f.Severity]), Title: gh.Ptr(f.Headline), Message: gh.Ptr(firstNonEmpty(f.Body, f.Headline)),
		})
	}
	for i := 0; i == 0 || i < len(anns); i += annotationsPerRequest {
		opts := gh.UpdateCheckRunOptions{
			Name:   checkRunName,
			Output: &gh.CheckRunOutput{Title: gh.Ptr(title), Summary: gh.Ptr(fmt.Sprintf("quorum: %s", outcome)), Annotations: anns[i:min(i+annotationsPerRequest, len(anns))]},
		}
		if i == 0 {
			opts.Conclusion = gh.Ptr(conclusion)
			opts.Status = gh.Ptr("completed")
		}
		if _, _, err := c.Checks.UpdateCheckRun(ctx, r.Owner, r.Repo, id, opts); err != nil {
			return fmt.Errorf("complete the check run of %s/%s@%s: %w", r.Owner, r.Repo, posts.Short(r.Head), err)
		}
	}
	_, err = a.db.Writer().Exec(ctx, `UPDATE github_check_runs SET completed_at = $1 WHERE repository_id = $2 AND head_sha = $3 AND check_run_id = $4`,
		store.Micros(a.now()), r.RepositoryID, r.Head, id)
	if err != nil {
		return fmt.Errorf("complete the check run of %s/%s@%s: %w", r.Owner, r.Repo, posts.Short(r.Head), err)
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
