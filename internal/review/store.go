package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
)

// ErrNotFound is returned for a review or finding that does not exist or
// that the asking account may not see: the two are indistinguishable.
var ErrNotFound = errors.New("not found")

// Store reads and writes reviews.
type Store struct {
	db *store.DB
}

// NewStore returns a review store over db.
func NewStore(db *store.DB) *Store { return &Store{db: db} }

// Cursor is a keyset position in a newest-first listing: the last review of
// the previous page.
type Cursor struct {
	SynthesizedAt int64 // Unix microseconds
	ID            string
}

// ListQuery selects a page of one repository's reviews.
type ListQuery struct {
	AccountID string
	Owner     string
	Repo      string
	PR        int // 0: every pull request
	After     *Cursor
	Limit     int
}

// Page is one page of reviews, and the position after its last one when
// more follow.
type Page struct {
	Reviews []Review
	Next    *Cursor
}

const reviewColumns = `r.id, p.owner, p.name, r.pr_number, r.head_sha, r.verdict, r.synthesized_at,
	r.specialists_succeeded, r.findings_count, r.summary, r.repository_id, r.base_sha, r.specialists_failed, r.duration_ms`

// One query per listing shape, so each uses its keyset index. The
// repository is found by a scalar subquery, which both databases evaluate
// once before scanning the index: one round trip per page.
const (
	repoOfAccount = `(SELECT id FROM repositories WHERE account_id = $1 AND lower(owner) = lower($2) AND lower(name) = lower($3))`
	listFrom      = `SELECT ` + reviewColumns + ` FROM reviews r JOIN repositories p ON p.id = r.repository_id
WHERE r.repository_id = ` + repoOfAccount
	listOrder = `
ORDER BY r.synthesized_at DESC, r.id DESC LIMIT $4`
	listRepoFirst = listFrom + listOrder
	listRepoAfter = listFrom + ` AND (r.synthesized_at, r.id) < ($5, $6)` + listOrder
	listPRFirst   = listFrom + ` AND r.pr_number = $5` + listOrder
	listPRAfter   = listFrom + ` AND r.pr_number = $5 AND (r.synthesized_at, r.id) < ($6, $7)` + listOrder
)

// List returns a page of a repository's reviews, newest first. A repository
// the account does not own is ErrNotFound.
func (s *Store) List(ctx context.Context, q ListQuery) (Page, error) {
	if q.Limit < 1 {
		return Page{}, fmt.Errorf("list reviews: limit %d, want at least 1", q.Limit)
	}
	db := s.db.Reader()
	query, args := listRepoFirst, []any{q.AccountID, q.Owner, q.Repo, q.Limit + 1}
	switch {
	case q.PR == 0 && q.After != nil:
		query, args = listRepoAfter, append(args, q.After.SynthesizedAt, q.After.ID)
	case q.PR != 0 && q.After == nil:
		query, args = listPRFirst, append(args, q.PR)
	case q.PR != 0:
		query, args = listPRAfter, append(args, q.PR, q.After.SynthesizedAt, q.After.ID)
	}
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return Page{}, fmt.Errorf("list reviews of %s/%s: %w", q.Owner, q.Repo, err)
	}
	page, err := readPage(rows, q.Limit)
	if err != nil {
		return Page{}, fmt.Errorf("list reviews of %s/%s: %w", q.Owner, q.Repo, err)
	}
	if len(page.Reviews) == 0 {
		// An empty page: an empty repository, or none the account owns.
		if err := repositoryExists(ctx, db, q.AccountID, q.Owner, q.Repo); err != nil {
			return Page{}, err
		}
	}
	return page, nil
}

// readPage reads a newest-first page of limit reviews from rows, which
// hold one more when another page follows, and closes rows.
func readPage(rows store.Rows, limit int) (Page, error) {
	defer rows.Close()
	page := Page{Reviews: []Review{}}
	for rows.Next() {
		r, err := scanReview(rows)
		if err != nil {
			return Page{}, err
		}
		page.Reviews = append(page.Reviews, r)
	}
	if err := rows.Err(); err != nil {
		return Page{}, err
	}
	if len(page.Reviews) > limit {
		page.Reviews = page.Reviews[:limit]
		last := page.Reviews[limit-1]
		page.Next = &Cursor{SynthesizedAt: store.Micros(last.SynthesizedAt), ID: last.ID}
	}
	return page, nil
}

// repositoryExists is nil when the account owns owner/name, else
// ErrNotFound: it tells an empty page of an empty repository from one of a
// repository the account cannot see.
func repositoryExists(ctx context.Context, db store.Querier, accountID, owner, name string) error {
	var repoID string
	err := db.QueryRow(ctx, `SELECT id FROM repositories WHERE account_id = $1 AND lower(owner) = lower($2) AND lower(name) = lower($3)`,
		accountID, owner, name).Scan(&repoID)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("find repository %s/%s: %w", owner, name, err)
	}
	return nil
}

// Get returns a review with its findings, ranked.
func (s *Store) Get(ctx context.Context, accountID, reviewID string) (Full, error) {
	db := s.db.Reader()
	r, err := scanReview(db.QueryRow(ctx, `SELECT `+reviewColumns+` FROM reviews r JOIN repositories p ON p.id = r.repository_id
WHERE r.id = $1 AND p.account_id = $2`, reviewID, accountID))
	if errors.Is(err, store.ErrNotFound) {
		return Full{}, ErrNotFound
	}
	if err != nil {
		return Full{}, fmt.Errorf("load review %s: %w", reviewID, err)
	}
	rows, err := db.Query(ctx, `SELECT `+findingColumns+` FROM findings f WHERE f.review_id = $1 ORDER BY f.position`, reviewID)
	if err != nil {
		return Full{}, fmt.Errorf("load findings of %s: %w", reviewID, err)
	}
	defer rows.Close()
	full := Full{Review: r, Findings: []Finding{}}
	for rows.Next() {
		f, err := scanFinding(rows)
		if err != nil {
			return Full{}, fmt.Errorf("load findings of %s: %w", reviewID, err)
		}
		full.Findings = append(full.Findings, f)
	}
	if err := rows.Err(); err != nil {
		return Full{}, fmt.Errorf("load findings of %s: %w", reviewID, err)
	}
	return full, nil
}

const findingColumns = `f.id, f.specialist, f.category, f.severity, f.path, f.line, f.headline, f.body, f.suggested_patch,
	f.end_line, f.fingerprint, f.engine, f.rule, f.model, f.detected_at, f.excerpt`

// GetFinding returns one finding with its context.
func (s *Store) GetFinding(ctx context.Context, accountID, findingID string) (Detail, error) {
	var (
		d       Detail
		headSHA string
	)
	row := s.db.Reader().QueryRow(ctx, `SELECT `+findingColumns+`, r.id, r.head_sha
FROM findings f JOIN reviews r ON r.id = f.review_id JOIN repositories p ON p.id = r.repository_id
WHERE f.id = $1 AND p.account_id = $2`, findingID, accountID)
	f, err := scanFinding(row, &d.ReviewID, &headSHA)
	if errors.Is(err, store.ErrNotFound) {
		return Detail{}, ErrNotFound
	}
	if err != nil {
		return Detail{}, fmt.Errorf("load finding %s: %w", findingID, err)
	}
	d.Finding = f
	d.Context = Context{
		Provenance: Provenance{
			Specialist: f.Specialist,
			Engine:     f.Engine,
			Engines:    EnginesOf(f),
			Rule:       f.Rule,
			Model:      f.Model,
			HeadSHA:    headSHA,
			DetectedAt: f.DetectedAt,
		},
		Excerpt: f.Excerpt,
	}
	return d, nil
}

// Create stores a review and its findings in q (normally a transaction that
// also records the events the review causes), and adds the review to its
// repository's daily rollup (see Rollup). Missing ids and the findings
// count are filled in.
func (s *Store) Create(ctx context.Context, q store.Querier, r *Full) error {
	now := time.Now()
	// Leave r as it is stored, so what the caller goes on to announce (the
	// review.completed event) matches what Get returns.
	r.SynthesizedAt = r.SynthesizedAt.UTC().Truncate(time.Microsecond)
	r.SpecialistsSucceeded = nonNil(r.SpecialistsSucceeded)
	r.SpecialistsFailed = nonNil(r.SpecialistsFailed)
	if r.ID == "" {
		r.ID = id.New(id.Review, r.SynthesizedAt)
	}
	r.FindingsCount = len(r.Findings)
	r.Duration = storedDuration(r.Duration)
	succeeded, _ := json.Marshal(r.SpecialistsSucceeded)
	failed, _ := json.Marshal(r.SpecialistsFailed)
	_, err := q.Exec(ctx, `INSERT INTO reviews (id, repository_id, pr_number, base_sha, head_sha, verdict, summary,
	specialists_succeeded, specialists_failed, findings_count, synthesized_at, created_at, duration_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		r.ID, r.RepositoryID, r.PRNumber, r.BaseSHA, r.HeadSHA, r.Verdict, r.Summary,
		string(succeeded), string(failed), r.FindingsCount, store.Micros(r.SynthesizedAt), store.Micros(now), durationMillis(r.Duration))
	if err != nil {
		return fmt.Errorf("insert review: %w", err)
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.ID == "" {
			f.ID = id.New(id.Finding, r.SynthesizedAt)
		}
		if f.EndLine < f.Line {
			f.EndLine = f.Line
		}
		if f.DetectedAt.IsZero() {
			f.DetectedAt = r.SynthesizedAt
		}
		f.DetectedAt = f.DetectedAt.UTC().Truncate(time.Microsecond)
		if f.Excerpt.Lines == nil {
			f.Excerpt.Lines = []Line{}
		}
		excerpt, err := json.Marshal(f.Excerpt)
		if err != nil {
			return fmt.Errorf("encode excerpt: %w", err)
		}
		_, err = q.Exec(ctx, `INSERT INTO findings (id, review_id, position, specialist, category, severity, path, line, end_line,
	headline, body, suggested_patch, fingerprint, engine, rule, model, detected_at, excerpt)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			f.ID, r.ID, i, f.Specialist, f.Category, f.Severity, f.Path, f.Line, f.EndLine,
			f.Headline, f.Body, f.SuggestedPatch, f.Fingerprint, f.Engine, f.Rule, f.Model,
			store.Micros(f.DetectedAt), string(excerpt))
		if err != nil {
			return fmt.Errorf("insert finding %d of review %s: %w", i, r.ID, err)
		}
	}
	// Last, so that on PostgreSQL the day's row, which every review of the
	// repository that day updates, stays locked only until the commit.
	var rollup Rollup
	rollup.Add(r)
	return rollup.Write(ctx, q)
}

// storedDuration is d as the store keeps it: whole milliseconds, and zero
// (not known) for a negative one, which only a clock set back can make.
func storedDuration(d time.Duration) time.Duration {
	return max(d, 0).Truncate(time.Millisecond)
}

// durationMillis is d as stored: NULL when not known, so charts of review
// durations leave the review out rather than count it as instant.
func durationMillis(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	ms := d.Milliseconds()
	return &ms
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func scanReview(row store.Row) (Review, error) {
	var (
		r                 Review
		at                int64
		succeeded, failed string
		durationMS        *int64
	)
	err := row.Scan(&r.ID, &r.Owner, &r.Repo, &r.PRNumber, &r.HeadSHA, &r.Verdict, &at,
		&succeeded, &r.FindingsCount, &r.Summary, &r.RepositoryID, &r.BaseSHA, &failed, &durationMS)
	if err != nil {
		return Review{}, err
	}
	if durationMS != nil {
		r.Duration = time.Duration(*durationMS) * time.Millisecond
	}
	r.SynthesizedAt = store.FromMicros(at)
	if err := json.Unmarshal([]byte(succeeded), &r.SpecialistsSucceeded); err != nil {
		return Review{}, fmt.Errorf("decode specialists of %s: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(failed), &r.SpecialistsFailed); err != nil {
		return Review{}, fmt.Errorf("decode specialists of %s: %w", r.ID, err)
	}
	return r, nil
}

func scanFinding(row store.Row, extra ...any) (Finding, error) {
	var (
		f       Finding
		patch   *string
		at      int64
		excerpt string
	)
	dest := append([]any{&f.ID, &f.Specialist, &f.Category, &f.Severity, &f.Path, &f.Line, &f.Headline, &f.Body, &patch,
		&f.EndLine, &f.Fingerprint, &f.Engine, &f.Rule, &f.Model, &at, &excerpt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return Finding{}, err
	}
	f.SuggestedPatch = patch
	f.DetectedAt = store.FromMicros(at)
	if err := json.Unmarshal([]byte(excerpt), &f.Excerpt); err != nil {
		return Finding{}, fmt.Errorf("decode excerpt of %s: %w", f.ID, err)
	}
	return f, nil
}
