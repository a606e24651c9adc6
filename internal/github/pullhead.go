package github

import (
	"context"
	"fmt"
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
