// Package gitea is quorum's second platform: Gitea (and Forgejo, which
// speaks the same API), reached with plain HTTP against its documented API
// and git over HTTP, with a bot account's token.
package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
)

// Source builds the change of a Gitea pull request: its base, head and
// merge base from the API, its trees and diff from a shallow fetch of the
// merge base and the head.
type Source struct {
	baseURL string
	token   string
	dir     string
	api     *Client

	// cache holds the fetched repositories: fetches into one take turns,
	// and one unused for a week is removed.
	cache *change.FetchCache
}

var _ change.Source = (*Source)(nil)

// NewSource returns the source of api's Gitea, reading as its bot
// account. Commits are fetched into bare repositories under dir, one per
// repository, kept after Change returns because the change reads its files
// from there; dir must be this source's alone, so commits fetched with one
// token are never served to another's reviews.
func NewSource(api *Client, dir string) (*Source, error) {
	if api == nil {
		return nil, errors.New("gitea source: no API client")
	}
	if dir == "" {
		return nil, errors.New("gitea source: no directory to fetch repositories into")
	}
	return &Source{baseURL: api.BaseURL(), token: api.token, dir: dir, api: api, cache: &change.FetchCache{Dir: dir}}, nil
}

// namePattern is what Gitea allows in owner and repository names; it keeps
// them safe as URL path segments and directory names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// pullRequest is the part of Gitea's pull request JSON the source reads.
type pullRequest struct {
	// MergeBase is the merge base of the base branch and the head as Gitea
	// last computed it (on opening and on every push).
	MergeBase string `json:"merge_base"`
	Base      struct {
		SHA string `json:"sha"`
	} `json:"base"`
	Head struct {
		SHA string `json:"sha"`
	} `json:"head"`
}

// Change fetches the change of ref's pull request: from its merge base to
// its head, as Gitea shows it. When ref.Head names another commit than the
// pull request's head (it moved on since the review was asked for), that
// commit is reviewed, as the GitHub source does, still from the pull
// request's merge base (Gitea's API gives the merge base of the current
// head only; the stale-head check keeps such a review from being posted).
func (s *Source) Change(ctx context.Context, ref change.Ref) (*change.Change, error) {
	c, err := s.change(ctx, ref)
	if err != nil && strings.Contains(err.Error(), s.token) {
		// Nothing here puts the token in an error; should git or net/http
		// ever echo it, it still goes no further.
		return nil, errors.New(strings.ReplaceAll(err.Error(), s.token, "[token]"))
	}
	return c, err
}

func (s *Source) change(ctx context.Context, ref change.Ref) (*change.Change, error) {
	if !validName(ref.Owner) || !validName(ref.Repo) {
		return nil, fmt.Errorf("gitea source: invalid repository %q/%q", ref.Owner, ref.Repo)
	}
	if ref.PRNumber <= 0 {
		return nil, fmt.Errorf("gitea source: invalid pull request number %d", ref.PRNumber)
	}
	pr, err := s.pull(ctx, ref)
	if err != nil {
		return nil, err
	}
	head := ref.Head
	if head == "" {
		head = pr.Head.SHA
	}
	base := pr.MergeBase
	if base == "" {
		return nil, fmt.Errorf("gitea source: %s gave no merge base for %s/%s#%d", s.baseURL, ref.Owner, ref.Repo, ref.PRNumber)
	}
	ref.Base, ref.Head = base, head
	local, err := s.fetch(ctx, ref.Owner, ref.Repo, base, head)
	if err != nil {
		return nil, err
	}
	return local.Change(ctx, ref)
}

// validName reports whether name is a Gitea owner or repository name that
// is safe in a URL path and as a directory name.
func validName(name string) bool {
	return namePattern.MatchString(name) && strings.Trim(name, ".") != ""
}

// pull gets ref's pull request from the API.
func (s *Source) pull(ctx context.Context, ref change.Ref) (*pullRequest, error) {
	what := fmt.Sprintf("%s/%s#%d", ref.Owner, ref.Repo, ref.PRNumber)
	var pr pullRequest
	_, err := s.api.Do(ctx, http.MethodGet, Path("repos", ref.Owner, ref.Repo, "pulls", strconv.Itoa(ref.PRNumber)), nil, &pr)
	switch StatusOf(err) {
	case 0:
		if err != nil {
			return nil, fmt.Errorf("gitea source: get %s: %w", what, err)
		}
		return &pr, nil
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fmt.Errorf("gitea source: get %s: %w: the token lacks access to the repository; give the bot account read access to %s/%s and a token with the read:repository scope",
			what, err, ref.Owner, ref.Repo)
	case http.StatusNotFound:
		return nil, fmt.Errorf("gitea source: get %s: no such pull request on %s (or the repository is private and the bot account cannot see it)", what, s.baseURL)
	default:
		return nil, fmt.Errorf("gitea source: get %s: %w", what, err)
	}
}

// fetch fetches revs of owner/repo into the repository's directory with
// the token, and returns the Local source over it. Fetches into one
// directory take turns.
func (s *Source) fetch(ctx context.Context, owner, repo string, revs ...string) (*change.Local, error) {
	dir := filepath.Join(s.dir, strings.ToLower(owner), strings.ToLower(repo)+".git")
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, fmt.Errorf("gitea source: fetch %s/%s: %w", owner, repo, err)
	}
	defer s.cache.Use(dir)()
	local := change.NewLocal(dir)
	// The clone URL is built from the address quorum reaches Gitea at, not
	// taken from the API, whose clone_url follows Gitea's ROOT_URL (often a
	// public name this host cannot reach).
	remote := fmt.Sprintf("%s/%s/%s.git", s.baseURL, url.PathEscape(owner), url.PathEscape(repo))
	// Local.Fetch hands the header to git through its environment only.
	if err := local.Fetch(ctx, remote, "Authorization: token "+s.token, revs...); err != nil {
		return nil, fmt.Errorf("gitea source: fetch %s/%s: %w", owner, repo, err)
	}
	return local, nil
}
