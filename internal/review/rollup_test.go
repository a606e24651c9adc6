package review_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// rollupRow is one repository's day in the rollups: review_days' columns
// in order, then review_day_durations' buckets.
type rollupRow struct {
	counts    [10]int64 // approve .. info, timed, longest_ms
	durations map[int64]int64
}

type rollupKey struct {
	repositoryID string
	day          int64
}

// readRollups reads both rollup tables whole.
func readRollups(t *testing.T, db *store.DB) map[rollupKey]*rollupRow {
	t.Helper()
	ctx := context.Background()
	out := map[rollupKey]*rollupRow{}
	rows, err := db.Reader().Query(ctx, `SELECT repository_id, day, approve, comment, request_changes, critical, high, medium, low, info, timed, longest_ms FROM review_days`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k rollupKey
		r := &rollupRow{durations: map[int64]int64{}}
		c := &r.counts
		if err := rows.Scan(&k.repositoryID, &k.day, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7], &c[8], &c[9]); err != nil {
			t.Fatal(err)
		}
		out[k] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.Reader().Query(ctx, `SELECT repository_id, day, bucket, n FROM review_day_durations`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k         rollupKey
			bucket, n int64
		)
		if err := rows.Scan(&k.repositoryID, &k.day, &bucket, &n); err != nil {
			t.Fatal(err)
		}
		if out[k] == nil {
			t.Errorf("durations of %v without its day", k)
			continue
		}
		out[k].durations[bucket] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rollupsOfReviews computes the rollups from the reviews and findings
// stored, plainly, as the charts counted them before there were rollups.
func rollupsOfReviews(t *testing.T, db *store.DB) map[rollupKey]*rollupRow {
	t.Helper()
	ctx := context.Background()
	out := map[rollupKey]*rollupRow{}
	row := func(repositoryID string, at int64) *rollupRow {
		const day = int64(24 * time.Hour / time.Microsecond)
		k := rollupKey{repositoryID, at - at%day}
		if out[k] == nil {
			out[k] = &rollupRow{durations: map[int64]int64{}}
		}
		return out[k]
	}
	rows, err := db.Reader().Query(ctx, `SELECT repository_id, synthesized_at, verdict, duration_ms FROM reviews`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			repositoryID, verdict string
			at                    int64
			ms                    *int64
		)
		if err := rows.Scan(&repositoryID, &at, &verdict, &ms); err != nil {
			t.Fatal(err)
		}
		r := row(repositoryID, at)
		switch verdict {
		case review.VerdictApprove:
			r.counts[0]++
		case review.VerdictComment:
			r.counts[1]++
		case review.VerdictRequestChanges:
			r.counts[2]++
		}
		if ms == nil {
			continue
		}
		r.counts[8]++
		r.counts[9] = max(r.counts[9], *ms)
		bucket := int64(len(review.DurationBounds))
		for i, b := range review.DurationBounds {
			if *ms <= b.Milliseconds() {
				bucket = int64(i)
				break
			}
		}
		r.durations[bucket]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.Reader().Query(ctx, `SELECT r.repository_id, r.synthesized_at, f.severity FROM findings f JOIN reviews r ON r.id = f.review_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			repositoryID, severity string
			at                     int64
		)
		if err := rows.Scan(&repositoryID, &at, &severity); err != nil {
			t.Fatal(err)
		}
		for i, s := range review.Severities {
			if s == severity {
				row(repositoryID, at).counts[3+i]++
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rollupReviews makes n reviews of the repositories across five days:
// every verdict (and one the spec does not know), findings of every
// severity (and one it does not know), durations on and just past each
// bucket's bound, beyond the last, under a millisecond, and none.
func rollupReviews(repos []account.Repository, n int) []review.Full {
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	verdicts := []string{review.VerdictApprove, review.VerdictComment, review.VerdictRequestChanges, "undecided"}
	var durations []time.Duration
	for _, b := range review.DurationBounds {
		durations = append(durations, b, b+time.Millisecond)
	}
	durations = append(durations, 0, 7*time.Hour, 500*time.Microsecond, 0)
	var out []review.Full
	for i := range n {
		// The first and last microsecond of a day, and times between.
		at := start.AddDate(0, 0, i%5).Add(time.Duration(i*7919%86400) * time.Second)
		switch i % 11 {
		case 0:
			at = start.AddDate(0, 0, i%5)
		case 1:
			at = start.AddDate(0, 0, i%5+1).Add(-time.Microsecond)
		}
		r := storetest.NewReview(repos[i%len(repos)], i+1, i%7, at)
		r.Verdict = verdicts[i%len(verdicts)]
		r.Duration = durations[i%len(durations)]
		if len(r.Findings) > 2 && i%3 == 0 {
			r.Findings[2].Severity = "unheard-of"
		}
		out = append(out, r)
	}
	return out
}

func TestCreateKeepsTheRollups(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		repos := []account.Repository{
			f.repo,
			storetest.Repo(t, f.db, "acme", "acme", "gadgets"),
			storetest.Repo(t, f.db, "globex", "globex", "widgets"), // another account's
		}
		reviews := rollupReviews(repos, 120)
		// The first half one by one, the rest five to a transaction, as a
		// caller that stores several reviews at once would: several add to
		// the same day's row in one transaction.
		half := len(reviews) / 2
		for i := range reviews[:half] {
			if err := f.reviews.Create(ctx, f.db.Writer(), &reviews[i]); err != nil {
				t.Fatal(err)
			}
		}
		for lo := half; lo < len(reviews); lo += 5 {
			err := f.db.InTx(ctx, func(tx store.Tx) error {
				for i := lo; i < min(lo+5, len(reviews)); i++ {
					if err := f.reviews.Create(ctx, tx, &reviews[i]); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// A transaction rolled back after Create adds nothing: the rollups
		// are written in it.
		rolledBack := errors.New("rolled back")
		err := f.db.InTx(ctx, func(tx store.Tx) error {
			r := rollupReviews(repos, 1)[0]
			if err := f.reviews.Create(ctx, tx, &r); err != nil {
				return err
			}
			return rolledBack
		})
		if !errors.Is(err, rolledBack) {
			t.Fatal(err)
		}

		got, want := readRollups(t, f.db), rollupsOfReviews(t, f.db)
		if len(want) != 3*5 {
			t.Fatalf("the reviews cover %d repository days, want 15: the test's reviews are not spread as meant", len(want))
		}
		for k, w := range want {
			if g := got[k]; g == nil || !reflect.DeepEqual(g, w) {
				t.Errorf("rollup of %s on %s:\n%+v\nwant what its reviews say\n%+v", k.repositoryID, store.FromMicros(k.day).Format(time.DateOnly), g, w)
			}
		}
		for k := range got {
			if want[k] == nil {
				t.Errorf("a rollup of %s on %s without reviews", k.repositoryID, store.FromMicros(k.day).Format(time.DateOnly))
			}
		}
	})
}

func TestDurationBucket(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{time.Millisecond, 0},
		{time.Second, 0},
		{time.Second + time.Millisecond, 1},
		{6 * time.Hour, len(review.DurationBounds) - 1},
		{6*time.Hour + time.Millisecond, len(review.DurationBounds)},
	} {
		if got := review.DurationBucket(c.d); got != c.want {
			t.Errorf("DurationBucket(%s) = %d, want %d", c.d, got, c.want)
		}
	}
	for i := 1; i < len(review.DurationBounds); i++ {
		if review.DurationBounds[i] <= review.DurationBounds[i-1] {
			t.Errorf("DurationBounds are not ascending at %d: %s after %s", i, review.DurationBounds[i], review.DurationBounds[i-1])
		}
	}
}

// TestRebuildRollupsCountsWhatOldReplicasSaved: a review stored without
// its rollup (as a replica older than the rollups saves it) is counted
// after RebuildRollups, and the others are not counted twice.
func TestRebuildRollupsCountsWhatOldReplicasSaved(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		repos := []account.Repository{f.repo, storetest.Repo(t, f.db, "globex", "globex", "widgets")}
		reviews := rollupReviews(repos, 40)
		for i := range reviews {
			if err := f.reviews.Create(ctx, f.db.Writer(), &reviews[i]); err != nil {
				t.Fatal(err)
			}
		}
		// An old replica's saves: the review is there, its rollups are not.
		if _, err := f.db.Writer().Exec(ctx, `DELETE FROM review_day_durations`); err != nil {
			t.Fatal(err)
		}
		if _, err := f.db.Writer().Exec(ctx, `UPDATE review_days SET approve = 0, high = 0 WHERE repository_id = $1`, f.repo.ID); err != nil {
			t.Fatal(err)
		}
		want := rollupsOfReviews(t, f.db)
		if reflect.DeepEqual(readRollups(t, f.db), want) {
			t.Fatal("the rollups still agree with the reviews: the test broke nothing")
		}
		if err := review.RebuildRollups(ctx, f.db); err != nil {
			t.Fatal(err)
		}
		if got := readRollups(t, f.db); !reflect.DeepEqual(got, want) {
			t.Errorf("after the rebuild the rollups are\n%v\nwant what the reviews say\n%v", got, want)
		}
	})
}
