package review

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/quorum-review/quorum/internal/store"
)

// SearchQuery selects a page of an account's reviews, newest first: all of
// its repositories', or one repository's (Owner and Repo), narrowed to a
// pull request and a verdict when given. It is the dashboard's list; the
// API's is ListQuery.
type SearchQuery struct {
	AccountID   string
	Owner, Repo string // both "": every repository of the account
	PR          int    // 0: every pull request; needs Owner and Repo
	Verdict     string // "": every verdict
	After       *Cursor
	Limit       int
}

// Search returns a page of reviews for q. A repository the account does not
// own is ErrNotFound; an account without reviews is an empty page.
//
// Every shape reads a keyset index and stops after a page: one repository
// reads (repository_id, [pr_number | verdict,] synthesized_at, id); all of
// an account's repositories read a page from each repository's index and
// merge them, because sorting all of an account's reviews is slow once it
// has many (measured in migration 0013's comment).
func (s *Store) Search(ctx context.Context, q SearchQuery) (Page, error) {
	if q.Limit < 1 {
		return Page{}, fmt.Errorf("search reviews: limit %d, want at least 1", q.Limit)
	}
	if (q.Owner == "") != (q.Repo == "") || q.PR != 0 && q.Owner == "" {
		return Page{}, fmt.Errorf("search reviews: a pull request or owner needs its repository (owner %q, repo %q, pr %d)", q.Owner, q.Repo, q.PR)
	}
	db := s.db.Reader()
	query, args := s.searchSQL(q)
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return Page{}, fmt.Errorf("search reviews: %w", err)
	}
	page, err := readPage(rows, q.Limit)
	if err != nil {
		return Page{}, fmt.Errorf("search reviews: %w", err)
	}
	if len(page.Reviews) == 0 && q.Owner != "" {
		if err := repositoryExists(ctx, db, q.AccountID, q.Owner, q.Repo); err != nil {
			return Page{}, err
		}
	}
	return page, nil
}

// searchSQL is q's query. It is put together from constant pieces only;
// every value is a parameter.
func (s *Store) searchSQL(q SearchQuery) (string, []any) {
	args := []any{q.AccountID}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	// cond narrows the reviews aliased as alias.
	cond := func(alias string) string {
		var b strings.Builder
		if q.PR != 0 {
			b.WriteString(" AND " + alias + ".pr_number = " + param(q.PR))
		}
		if q.Verdict != "" {
			b.WriteString(" AND " + alias + ".verdict = " + param(q.Verdict))
		}
		if q.After != nil {
			b.WriteString(" AND (" + alias + ".synthesized_at, " + alias + ".id) < (" + param(q.After.SynthesizedAt) + ", " + param(q.After.ID) + ")")
		}
		return b.String()
	}
	order := func(alias string) string {
		return " ORDER BY " + alias + ".synthesized_at DESC, " + alias + ".id DESC LIMIT " + param(q.Limit+1)
	}

	if q.Owner != "" {
		owner, repo := param(q.Owner), param(q.Repo)
		return `SELECT ` + reviewColumns + ` FROM reviews r JOIN repositories p ON p.id = r.repository_id
WHERE r.repository_id = (SELECT id FROM repositories WHERE account_id = $1 AND lower(owner) = lower(` + owner + `) AND lower(name) = lower(` + repo + `))` +
			cond("r") + order("r"), args
	}
	// Every repository of the account: the newest page of each, merged.
	// PostgreSQL does it with LATERAL; SQLite, which has no LATERAL, runs
	// the correlated IN once per repository (PostgreSQL would run it per
	// review instead, after sorting them all).
	where := cond("x")
	limit := param(q.Limit + 1)
	perRepo := func(columns string) string {
		return `SELECT ` + columns + ` FROM reviews x WHERE x.repository_id = p.id` + where +
			` ORDER BY x.synthesized_at DESC, x.id DESC LIMIT ` + limit
	}
	if s.db.Dialect() == store.Postgres {
		return `SELECT ` + reviewColumns + ` FROM repositories p CROSS JOIN LATERAL (` + perRepo("x.*") + `) r
WHERE p.account_id = $1 ORDER BY r.synthesized_at DESC, r.id DESC LIMIT ` + limit, args
	}
	return `SELECT ` + reviewColumns + ` FROM repositories p JOIN reviews r ON r.id IN (` + perRepo("x.id") + `)
WHERE p.account_id = $1 ORDER BY r.synthesized_at DESC, r.id DESC LIMIT ` + limit, args
}
