package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

// seeded is what the load runs need to know about the seeded database.
type seeded struct {
	Owner, Repo string
	Token       string // a reviews:read token of the repository's account
	FullID      string // the review with 20 findings (the newest)
	FindingID   string // its first finding
	Reviews     int
	Took        time.Duration
}

const (
	benchLogin  = "bench-org"
	benchRepo   = "api"
	rowsPerStmt = 500 // reviews per multi-row INSERT (12 parameters each)
)

// seedPlan says how many reviews seed makes and how.
type seedPlan struct {
	Reviews int
	// Newest is when the newest review was synthesized; the others are
	// one second apart before it.
	Newest time.Time
	// FindingsOn says which reviews besides the newest carry findings: one
	// in FindingsOn, with 3 findings each, so that findings are on a few
	// reviews.
	FindingsOn int
	PerTx      int // reviews per transaction
}

// benchPlan is the benchmark's: n reviews up to now, in transactions of
// 20,000, findings on one review in 100,000.
func benchPlan(n int) seedPlan {
	return seedPlan{Reviews: n, Newest: time.Now(), FindingsOn: 100_000, PerTx: 20_000}
}

// seed fills a migrated database with the plan's reviews of one repository,
// spaced one second apart, the newest of which has 20 findings, and issues
// a token. Bulk reviews (without findings) go in with multi-row INSERTs
// inside transactions, with their daily rollups; reviews with findings go
// through review.Store.Create, in the same transactions.
func seed(ctx context.Context, db *store.DB, plan seedPlan, progress func(done int)) (seeded, error) {
	start := time.Now()
	n := plan.Reviews
	acct, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, benchLogin, "Organization")
	if err != nil {
		return seeded{}, err
	}
	repo, err := account.EnsureRepository(ctx, db.Writer(), acct.ID, benchLogin, benchRepo)
	if err != nil {
		return seeded{}, err
	}
	_, secret, err := token.NewStore(db, time.Now).Create(ctx, acct.ID, "load bench", []string{token.ScopeReviewsRead, token.ScopeFindingsRead}, 0)
	if err != nil {
		return seeded{}, err
	}
	reviews := review.NewStore(db)
	base := plan.Newest.Add(-time.Duration(n-1) * time.Second).UTC().Truncate(time.Second)
	out := seeded{Owner: benchLogin, Repo: benchRepo, Token: secret, Reviews: n}

	succeeded := `["logic","performance","security","tests"]`
	for lo := 0; lo < n; lo += plan.PerTx {
		hi := min(lo+plan.PerTx, n)
		err := db.InTx(ctx, func(tx store.Tx) error {
			var rows []any
			// The bulk reviews bypass Create, so their daily rollups are
			// gathered here and written with the transaction's reviews.
			var rollup review.Rollup
			flush := func() error {
				if len(rows) == 0 {
					return nil
				}
				if err := insertReviews(ctx, tx, db.Dialect(), rows); err != nil {
					return err
				}
				rows = rows[:0]
				return nil
			}
			for i := lo; i < hi; i++ {
				at := base.Add(time.Duration(i) * time.Second)
				pr := i/4 + 1 // four pushes per pull request
				switch {
				case i == n-1:
					r := storetest.NewReview(account.Repository{ID: repo.ID, Owner: repo.Owner, Name: repo.Name}, pr, 20, at)
					if err := reviews.Create(ctx, tx, &r); err != nil {
						return err
					}
					out.FullID, out.FindingID = r.ID, r.Findings[0].ID
				case i%plan.FindingsOn == plan.FindingsOn/2:
					r := storetest.NewReview(account.Repository{ID: repo.ID, Owner: repo.Owner, Name: repo.Name}, pr, 3, at)
					if err := reviews.Create(ctx, tx, &r); err != nil {
						return err
					}
				default:
					rollup.Add(&review.Full{Review: review.Review{RepositoryID: repo.ID, Verdict: review.VerdictApprove, SynthesizedAt: at}})
					rows = append(rows,
						id.New(id.Review, at), repo.ID, pr,
						fmt.Sprintf("%040x", at.UnixNano()-1), fmt.Sprintf("%040x", at.UnixNano()),
						review.VerdictApprove, fmt.Sprintf("Review of #%d: no findings. All four specialists ran.", pr),
						succeeded, "[]", 0, store.Micros(at), store.Micros(at))
					if len(rows) == rowsPerStmt*reviewCols {
						if err := flush(); err != nil {
							return err
						}
					}
				}
			}
			if err := flush(); err != nil {
				return err
			}
			return rollup.Write(ctx, tx)
		})
		if err != nil {
			return seeded{}, fmt.Errorf("seed reviews %d..%d: %w", lo, hi, err)
		}
		if progress != nil {
			progress(hi)
		}
	}
	out.Took = time.Since(start)
	return out, nil
}

const reviewCols = 12

var insertStmts = map[string]string{}

// insertReviews inserts len(args)/reviewCols reviews in one statement. On
// SQLite the placeholders are anonymous (?): the driver looks $N names up
// one by one in a list, which is quadratic in a 6,000-parameter statement.
func insertReviews(ctx context.Context, q store.Querier, dialect store.Dialect, args []any) error {
	k := len(args) / reviewCols
	key := fmt.Sprint(dialect, k)
	stmt, ok := insertStmts[key]
	if !ok {
		var sb strings.Builder
		sb.WriteString(`INSERT INTO reviews (id, repository_id, pr_number, base_sha, head_sha, verdict, summary,
	specialists_succeeded, specialists_failed, findings_count, synthesized_at, created_at) VALUES `)
		for r := range k {
			if r > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('(')
			for c := range reviewCols {
				if c > 0 {
					sb.WriteString(", ")
				}
				if dialect == store.SQLite {
					sb.WriteByte('?')
				} else {
					fmt.Fprintf(&sb, "$%d", r*reviewCols+c+1)
				}
			}
			sb.WriteByte(')')
		}
		stmt = sb.String()
		insertStmts[key] = stmt
	}
	_, err := q.Exec(ctx, stmt, args...)
	return err
}
