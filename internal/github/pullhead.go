package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v88/github"
)

// PullHead returns the pull request's current head and base commits, as
// GitHub has them now (intake re-runs a review of that head when asked in
// a comment).
func (a *App) PullHead(ctx context.Context, installationID int64, owner, repo string, number int) (head, base string, err error) {
	c, err := a.client(installationID)
	if err != nil {
		return "", "", err
	}
	pr, _, err := c.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return "", "", fmt.Errorf("get pull request %s/%s#%d: %w", owner, repo, number, err)
	}
	return pr.GetHead().GetSHA(), pr.GetBase().GetSHA(), nil
}

// HasRepository reports whether the installation was given owner/repo,
// from the installation's own list of repositories.
func (a *App) HasRepository(ctx context.Context, installationID int64, owner, repo string) (bool, error) {
	c, err := a.client(installationID)
	if err != nil {
		return false, err
	}
	opts := &gh.ListOptions{PerPage: 100}
	for {
		list, resp, err := c.Apps.ListRepos(ctx, opts)
		if err != nil {
			return false, fmt.Errorf("list the repositories of installation %d: %w", installationID, err)
		}
		for _, r := range list.Repositories {
			if strings.EqualFold(r.GetOwner().GetLogin(), owner) && strings.EqualFold(r.GetName(), repo) {
				return true, nil
			}
		}
		if resp.NextPage == 0 {
			return false, nil
		}
		opts.Page = resp.NextPage
	}
}
