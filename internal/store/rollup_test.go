package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// insertAsBefore stores r as quorum did before migration 14: the review
// and its findings, no rollups.
func insertAsBefore(t *testing.T, db *store.DB, r review.Full) {
	t.Helper()
	ctx := context.Background()
	var ms *int64
	if r.Duration > 0 {
		v := r.Duration.Milliseconds()
		ms = &v
	}
	reviewID := id.New(id.Review, r.SynthesizedAt)
	_, err := db.Writer().Exec(ctx, `INSERT INTO reviews (id, repository_id, pr_number, head_sha, verdict, summary,
	specialists_succeeded, findings_count, synthesized_at, created_at, duration_ms)
VALUES ($1, $2, $3, $4, $5, $6, '[]', $7, $8, $8, $9)`,
		reviewID, r.RepositoryID, r.PRNumber, r.HeadSHA, r.Verdict, r.Summary, len(r.Findings), store.Micros(r.SynthesizedAt), ms)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range r.Findings {
		excerpt, _ := json.Marshal(f.Excerpt)
		_, err := db.Writer().Exec(ctx, `INSERT INTO findings (id, review_id, position, specialist, category, severity, path, line, end_line,
	headline, body, fingerprint, engine, detected_at, excerpt)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			id.New(id.Finding, r.SynthesizedAt), reviewID, i, f.Specialist, f.Category, f.Severity, f.Path, f.Line, f.EndLine,
			f.Headline, f.Body, f.Fingerprint, f.Engine, store.Micros(r.SynthesizedAt), string(excerpt))
		if err != nil {
			t.Fatal(err)
		}
	}
}

// rollupsOf reads a repository's rows of both rollup tables, as text.
func rollupsOf(t *testing.T, db *store.DB, repositoryID string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	rows, err := db.Reader().Query(ctx, `SELECT day, approve, comment, request_changes, critical, high, medium, low, info, timed, longest_ms
FROM review_days WHERE repository_id = $1 ORDER BY day`, repositoryID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c [11]int64
		if err := rows.Scan(&c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7], &c[8], &c[9], &c[10]); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s: verdicts %v, severities %v, timed %d, longest %d ms",
			store.FromMicros(c[0]).Format(time.DateOnly), c[1:4], c[4:9], c[9], c[10]))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.Reader().Query(ctx, `SELECT day, bucket, n FROM review_day_durations WHERE repository_id = $1 ORDER BY day, bucket`, repositoryID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var day, bucket, n int64
		if err := rows.Scan(&day, &bucket, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s: bucket %d: %d", store.FromMicros(day).Format(time.DateOnly), bucket, n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRollupMigrationBackfills stores reviews as quorum did before
// migration 14, migrates, and checks that the rollups it made from them
// are those review.Store.Create keeps for the same reviews made after it:
// the migration's SQL and Create's Go agree on days, verdicts, severities
// and each duration bucket's bound.
func TestRollupMigrationBackfills(t *testing.T) {
	t.Parallel()
	storetest.ForEachTarget(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db := storetest.OpenUnmigrated(t, cfg)
		if _, err := db.MigrateTo(ctx, 13); err != nil {
			t.Fatal(err)
		}
		before := storetest.Repo(t, db, "acme", "acme", "before")
		after := storetest.Repo(t, db, "acme", "acme", "after")

		start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		verdicts := []string{review.VerdictApprove, review.VerdictComment, review.VerdictRequestChanges, "undecided"}
		var durations []time.Duration
		for _, b := range review.DurationBounds {
			durations = append(durations, b, b+time.Millisecond)
		}
		durations = append(durations, 0, 7*time.Hour, 0)
		var reviews []review.Full
		for i := range 2 * len(durations) {
			at := start.AddDate(0, 0, i%4).Add(time.Duration(i*7919%86400) * time.Second)
			if i%9 == 0 {
				at = start.AddDate(0, 0, i%4+1).Add(-time.Microsecond) // a day's last microsecond
			}
			r := storetest.NewReview(before, i+1, i%7, at)
			r.Verdict, r.Duration = verdicts[i/3%len(verdicts)], durations[i%len(durations)]
			if len(r.Findings) > 1 && i%3 == 0 {
				r.Findings[1].Severity = "unheard-of"
			}
			reviews = append(reviews, r)
			insertAsBefore(t, db, r)
		}

		res, err := db.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Applied) == 0 || res.Applied[0].Version != 14 {
			t.Fatalf("applied %v, want 14 first", versions(res.Applied))
		}
		reviewStore := review.NewStore(db)
		for _, r := range reviews {
			r.RepositoryID = after.ID
			if err := reviewStore.Create(ctx, db.Writer(), &r); err != nil {
				t.Fatal(err)
			}
		}

		backfilled, created := rollupsOf(t, db, before.ID), rollupsOf(t, db, after.ID)
		if len(backfilled) < 4 {
			t.Fatalf("the migration made %d rollup rows of 4 days' reviews:\n%v", len(backfilled), backfilled)
		}
		if !reflect.DeepEqual(backfilled, created) {
			t.Errorf("the migration's rollups of the reviews before it:\n%v\nCreate's of the same reviews:\n%v", backfilled, created)
		}
	})
}
