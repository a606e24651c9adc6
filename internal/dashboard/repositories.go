package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/review"
)

// Page sizes: enough to scan, few enough that a page stays fast whatever
// the store holds (every list is keyset-paginated).
const (
	repositoriesPerPage = 25
	// latestPRs is how many pull requests a repository's row shows, from
	// its latestScan newest reviews.
	latestPRs  = 5
	latestScan = 30
)

// repositoryRow is one repository and the newest review of each of its
// most recently reviewed pull requests.
type repositoryRow struct {
	Owner, Name string
	Platform    string
	Removed     bool
	Latest      []review.Review
}

type repositoriesView struct {
	Rows []repositoryRow
	// Next is the address of the next page, "" on the last.
	Next string
}

// repositories lists the account's repositories by name, each with the
// latest review of its recently reviewed pull requests.
func (s *Server) repositories(w http.ResponseWriter, r *http.Request, sess *session) error {
	q, err := pageQuery(r)
	if err != nil {
		return err
	}
	after, err := singleParam(q, "after")
	if err != nil {
		return err
	}
	// The first page starts after ("", ""), before every name.
	afterOwner, afterName, _ := strings.Cut(after, "/")
	ctx := r.Context()
	db := s.db.Reader()
	rows, err := db.Query(ctx, `SELECT r.owner, r.name, r.removed_at IS NOT NULL, a.platform
FROM repositories r JOIN accounts a ON a.id = r.account_id
WHERE r.account_id = $1 AND (lower(r.owner), lower(r.name)) > (lower($2), lower($3))
ORDER BY lower(r.owner), lower(r.name) LIMIT $4`, sess.principal.AccountID, afterOwner, afterName, repositoriesPerPage+1)
	if err != nil {
		return fmt.Errorf("list repositories: %w", err)
	}
	var v repositoriesView
	for rows.Next() {
		var row repositoryRow
		if err := rows.Scan(&row.Owner, &row.Name, &row.Removed, &row.Platform); err != nil {
			rows.Close()
			return fmt.Errorf("list repositories: %w", err)
		}
		v.Rows = append(v.Rows, row)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list repositories: %w", err)
	}
	if len(v.Rows) > repositoriesPerPage {
		v.Rows = v.Rows[:repositoriesPerPage]
		last := v.Rows[len(v.Rows)-1]
		v.Next = Prefix + "repositories?after=" + url.QueryEscape(last.Owner+"/"+last.Name)
	}
	for i := range v.Rows {
		row := &v.Rows[i]
		page, err := s.reviews.List(ctx, review.ListQuery{AccountID: sess.principal.AccountID, Owner: row.Owner, Repo: row.Name, Limit: latestScan})
		if err != nil {
			return err
		}
		seen := map[int]bool{}
		for _, rv := range page.Reviews {
			if seen[rv.PRNumber] || len(row.Latest) == latestPRs {
				continue
			}
			seen[rv.PRNumber] = true
			row.Latest = append(row.Latest, rv)
		}
	}
	s.render(w, r, http.StatusOK, "repositories", sess, "Repositories", v)
	return nil
}

// pullRequestURL is a pull request's page on its platform, "" when the
// platform's address is not known.
func (s *Server) pullRequestURL(platform, owner, name string, pr int) string {
	base := strings.TrimSuffix(s.cfg.PlatformURLs[platform], "/")
	if base == "" || pr <= 0 {
		return ""
	}
	seg := "pull"
	if platform == account.PlatformGitea {
		seg = "pulls"
	}
	return base + "/" + url.PathEscape(owner) + "/" + url.PathEscape(name) + "/" + seg + "/" + strconv.Itoa(pr)
}
