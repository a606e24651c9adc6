package github

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v88/github"

	"github.com/quorum-review/quorum/internal/change"
	posts "github.com/quorum-review/quorum/internal/posting"
)

// Source builds the change of a pull request from GitHub: its metadata and
// files from the API, its trees from a shallow fetch of its base and head.
type Source struct {
	app      *App
	location string
}

var _ change.Source = (*Source)(nil)

// maxListedFiles is the most files GitHub lists for a pull request.
const maxListedFiles = 3000

// namePattern is what GitHub allows in owner and repository names; it
// keeps them safe as directory names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Change fetches the change of ref's pull request, from the merge base of
// its base and head, as GitHub shows it. The diff is GitHub's (what its
// inline comments can be placed on): the files listed by the API with their
// patches, or the whole diff when a patch is missing, or, when GitHub
// refuses that as too large (406) or the pull request has moved on from
// ref.Head, the diff of the fetched commits computed here.
func (s *Source) Change(ctx context.Context, ref change.Ref) (*change.Change, error) {
	c, err := s.change(ctx, ref)
	return c, s.app.retryLater(err)
}

func (s *Source) change(ctx context.Context, ref change.Ref) (*change.Change, error) {
	inst, err := strconv.ParseInt(s.location, 10, 64)
	if err != nil {
		return nil, errors.New("github source: the location is not an installation id")
	}
	if !namePattern.MatchString(ref.Owner) || !namePattern.MatchString(ref.Repo) || strings.Trim(ref.Repo, ".") == "" || strings.Trim(ref.Owner, ".") == "" {
		return nil, fmt.Errorf("github source: invalid repository %q/%q", ref.Owner, ref.Repo)
	}
	c, err := s.app.client(inst)
	if err != nil {
		return nil, err
	}
	pr, _, err := c.PullRequests.Get(ctx, ref.Owner, ref.Repo, ref.PRNumber)
	if err != nil {
		return nil, fmt.Errorf("get %s/%s#%d: %w", ref.Owner, ref.Repo, ref.PRNumber, err)
	}
	head, base := ref.Head, ref.Base
	if head == "" {
		head = pr.GetHead().GetSHA()
	}
	if base == "" {
		base = pr.GetBase().GetSHA()
	}
	prBase := base
	// GitHub diffs from the merge base of base and head (the base branch
	// may have moved on since head forked): so does the change, and its
	// base files are read there.
	cmp, _, err := c.Repositories.CompareCommits(ctx, ref.Owner, ref.Repo, base, head, &gh.ListOptions{PerPage: 1})
	if err != nil {
		return nil, fmt.Errorf("merge base of %s and %s: %w", posts.Short(base), posts.Short(head), err)
	}
	if mb := cmp.GetMergeBaseCommit().GetSHA(); mb != "" {
		base = mb
	}
	ref.Head, ref.Base = head, base
	local, err := s.app.fetch(ctx, inst, pr.GetBase().GetRepo().GetCloneURL(), ref.Owner, ref.Repo, base, head)
	if err != nil {
		return nil, err
	}
	if head != pr.GetHead().GetSHA() || prBase != pr.GetBase().GetSHA() {
		// GitHub's files are those of another head: diff here.
		return local.Change(ctx, ref)
	}
	files, tooLarge, err := githubDiff(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if tooLarge {
		s.app.log.Info("diff too large for GitHub; diffing the fetched commits", "owner", ref.Owner, "repo", ref.Repo, "pr", ref.PRNumber)
		return local.Change(ctx, ref)
	}
	return change.New(ctx, ref, base, head, files, local)
}

// githubDiff returns the pull request's files as GitHub diffs them: the
// listed files with their patches, or the whole diff when GitHub left a
// patch out; tooLarge when GitHub refuses that too (406).
func githubDiff(ctx context.Context, c *gh.Client, ref change.Ref) (files []*change.File, tooLarge bool, err error) {
	files, complete, err := listFiles(ctx, c, ref)
	if err != nil || complete {
		return files, false, err
	}
	diff, resp, err := c.PullRequests.GetRaw(ctx, ref.Owner, ref.Repo, ref.PRNumber, gh.RawOptions{Type: gh.Diff})
	if resp != nil && resp.StatusCode == http.StatusNotAcceptable {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get the diff of %s/%s#%d: %w", ref.Owner, ref.Repo, ref.PRNumber, err)
	}
	if files, err = change.ParseDiff(strings.NewReader(diff)); err != nil {
		return nil, false, fmt.Errorf("parse the diff of %s/%s#%d: %w", ref.Owner, ref.Repo, ref.PRNumber, err)
	}
	return files, false, nil
}

// listFiles lists the pull request's files, every page, and parses their
// patches. complete is false when GitHub left something out: a file's patch
// (too large, or binary) or files past the most it lists.
func listFiles(ctx context.Context, c *gh.Client, ref change.Ref) (files []*change.File, complete bool, err error) {
	var listed []*gh.CommitFile
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.PullRequests.ListFiles(ctx, ref.Owner, ref.Repo, ref.PRNumber, opts)
		if err != nil {
			return nil, false, fmt.Errorf("list the files of %s/%s#%d: %w", ref.Owner, ref.Repo, ref.PRNumber, err)
		}
		listed = append(listed, page...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(listed) >= maxListedFiles {
		return nil, false, nil
	}
	var diff strings.Builder
	for _, f := range listed {
		if f.Patch == nil && f.GetChanges() > 0 {
			return nil, false, nil
		}
		writeFileDiff(&diff, f)
	}
	files, err = change.ParseDiff(strings.NewReader(diff.String()))
	if err != nil {
		return nil, false, nil // let the whole diff say it
	}
	return files, true, nil
}

// writeFileDiff writes a listed file as git would write its part of the
// diff: the header its status implies, then GitHub's patch.
func writeFileDiff(b *strings.Builder, f *gh.CommitFile) {
	name, old := f.GetFilename(), f.GetFilename()
	if f.GetPreviousFilename() != "" {
		old = f.GetPreviousFilename()
	}
	fmt.Fprintf(b, "diff --git a/%s b/%s\n", old, name)
	from, to := "a/"+old, "b/"+name
	switch f.GetStatus() {
	case "added":
		b.WriteString("new file mode 100644\n")
		from = "/dev/null"
	case "removed":
		b.WriteString("deleted file mode 100644\n")
		to = "/dev/null"
	case "renamed":
		fmt.Fprintf(b, "similarity index 100%%\nrename from %s\nrename to %s\n", old, name)
	case "copied":
		fmt.Fprintf(b, "similarity index 100%%\ncopy from %s\ncopy to %s\n", old, name)
	}
	if f.GetPatch() == "" {
		return
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n%s\n", from, to, strings.TrimSuffix(f.GetPatch(), "\n"))
}

// fetch fetches base and head of owner/repo into the repository's cache
// directory, with the installation's token, and returns the Local source
// over it. Fetches into one directory take turns.
func (a *App) fetch(ctx context.Context, installationID int64, cloneURL, owner, repo string, revs ...string) (*change.Local, error) {
	if cloneURL == "" {
		return nil, fmt.Errorf("fetch %s/%s: GitHub gave no clone URL", owner, repo)
	}
	token, err := a.transport(installationID).Token(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetch %s/%s: installation token: %w", owner, repo, err)
	}
	dir := a.cacheDir(installationID, owner, repo)
	defer a.cache.Use(dir)()
	local := change.NewLocal(dir)
	header := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	if err := local.Fetch(ctx, cloneURL, header, revs...); err != nil {
		return nil, fmt.Errorf("fetch %s/%s: %w", owner, repo, err)
	}
	return local, nil
}

// cacheDir is where owner/repo's commits are fetched for an installation:
// one directory per installation too, so a commit fetched with one
// installation's token is never served to another's review ('@' is not in
// GitHub's repository names).
func (a *App) cacheDir(installationID int64, owner, repo string) string {
	return filepath.Join(a.cfg.CacheDir, strings.ToLower(owner), fmt.Sprintf("%s@%d.git", strings.ToLower(repo), installationID))
}
