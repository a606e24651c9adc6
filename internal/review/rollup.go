package review

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/store"
)

// DurationBounds are the upper bounds of the daily rollups' duration
// buckets, about 1.5 times apart: bucket i counts the reviews that took at
// most DurationBounds[i] and more than the bound before it, and one more
// bucket, len(DurationBounds), those that took longer than the last. The
// migration 0014_review_rollups.sql spells the same bounds in SQL.
var DurationBounds = []time.Duration{
	1 * time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second, 7 * time.Second,
	10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second, 45 * time.Second,
	1 * time.Minute, 90 * time.Second, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute,
	7 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	45 * time.Minute, 1 * time.Hour, 90 * time.Minute, 2 * time.Hour, 3 * time.Hour,
	4 * time.Hour, 6 * time.Hour,
}

// DurationBucket returns the rollups' bucket of a review that took d.
func DurationBucket(d time.Duration) int {
	i, _ := slices.BinarySearch(DurationBounds, d)
	return i
}

// dayMicros is a UTC day in the rollups' unit, microseconds.
const dayMicros = int64(24 * time.Hour / time.Microsecond)

// DayOf returns the rollups' day of t: 00:00 UTC of its day, in Unix
// microseconds, as the migration computes it from synthesized_at.
func DayOf(t time.Time) int64 {
	return store.Micros(t) / dayMicros * dayMicros
}

// Rollup gathers what reviews add to the daily rollups (the tables
// review_days and review_day_durations, which the dashboard's charts read
// instead of every review), per repository and UTC day, until Write adds
// it to the store. Create writes each review's; a bulk load that inserts
// reviews itself writes theirs.
type Rollup struct {
	days map[rollupKey]*rollupDay
}

type rollupKey struct {
	repositoryID string
	day          int64
}

type rollupDay struct {
	verdicts   [3]int64 // approve, comment, request_changes
	severities [5]int64 // in the order of Severities
	timed      int64
	longestMS  int64
	durations  map[int]int64 // bucket: reviews
}

// Add counts r, as Create stores it: its verdict, its findings' severities
// and, when known, its duration. A verdict or severity the spec does not
// know counts nowhere, as the charts would not show it.
func (u *Rollup) Add(r *Full) {
	if u.days == nil {
		u.days = map[rollupKey]*rollupDay{}
	}
	k := rollupKey{r.RepositoryID, DayOf(r.SynthesizedAt)}
	d := u.days[k]
	if d == nil {
		d = &rollupDay{durations: map[int]int64{}}
		u.days[k] = d
	}
	if v := slices.Index([]string{VerdictApprove, VerdictComment, VerdictRequestChanges}, r.Verdict); v >= 0 {
		d.verdicts[v]++
	}
	for _, f := range r.Findings {
		if s := slices.Index(Severities, f.Severity); s >= 0 {
			d.severities[s]++
		}
	}
	if ms := durationMillis(storedDuration(r.Duration)); ms != nil {
		d.timed++
		d.longestMS = max(d.longestMS, *ms)
		d.durations[DurationBucket(time.Duration(*ms)*time.Millisecond)]++
	}
}

// Adding to a day's row: the upsert both databases share. longest_ms keeps
// the larger (GREATEST and SQLite's two-argument MAX are not portable).
const (
	addDay = `INSERT INTO review_days (repository_id, day, approve, comment, request_changes, critical, high, medium, low, info, timed, longest_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (repository_id, day) DO UPDATE SET
	approve = review_days.approve + excluded.approve,
	comment = review_days.comment + excluded.comment,
	request_changes = review_days.request_changes + excluded.request_changes,
	critical = review_days.critical + excluded.critical,
	high = review_days.high + excluded.high,
	medium = review_days.medium + excluded.medium,
	low = review_days.low + excluded.low,
	info = review_days.info + excluded.info,
	timed = review_days.timed + excluded.timed,
	longest_ms = CASE WHEN excluded.longest_ms > review_days.longest_ms THEN excluded.longest_ms ELSE review_days.longest_ms END`
	addDuration = `INSERT INTO review_day_durations (repository_id, day, bucket, n) VALUES ($1, $2, $3, $4)
ON CONFLICT (repository_id, day, bucket) DO UPDATE SET n = review_day_durations.n + excluded.n`
)

// Write adds what was gathered to the rollups in q, which should be the
// transaction that stores the reviews, and empties u. Rows are written in
// order of repository, day and bucket, so that two transactions adding to
// the same rows on PostgreSQL wait for each other rather than deadlock.
func (u *Rollup) Write(ctx context.Context, q store.Querier) error {
	keys := make([]rollupKey, 0, len(u.days))
	for k := range u.days {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rollupKey) int {
		return cmp.Or(cmp.Compare(a.repositoryID, b.repositoryID), cmp.Compare(a.day, b.day))
	})
	for _, k := range keys {
		d := u.days[k]
		args := []any{k.repositoryID, k.day}
		for _, n := range d.verdicts {
			args = append(args, n)
		}
		for _, n := range d.severities {
			args = append(args, n)
		}
		args = append(args, d.timed, d.longestMS)
		if _, err := q.Exec(ctx, addDay, args...); err != nil {
			return fmt.Errorf("add to the rollup of repository %s on %s: %w", k.repositoryID, store.FromMicros(k.day).Format(time.DateOnly), err)
		}
		buckets := make([]int, 0, len(d.durations))
		for b := range d.durations {
			buckets = append(buckets, b)
		}
		slices.Sort(buckets)
		for _, b := range buckets {
			if _, err := q.Exec(ctx, addDuration, k.repositoryID, k.day, b, d.durations[b]); err != nil {
				return fmt.Errorf("add to the durations of repository %s on %s: %w", k.repositoryID, store.FromMicros(k.day).Format(time.DateOnly), err)
			}
		}
	}
	u.days = nil
	return nil
}

// rollupMigration is the migration that made the rollups and filled them
// from the reviews stored before it: RebuildRollups runs its INSERTs
// again, so the two cannot count differently.
const rollupMigration = "review_rollups"

// RebuildRollups recounts the daily rollups from the stored reviews. A
// review saved by a quorum older than the rollups (a replica not yet
// upgraded, during a rolling upgrade) is stored but not counted; this
// counts it. Reviews saved while it runs are counted once: on PostgreSQL
// it holds the rollup tables against writes until it commits, and a
// review committed after its count adds itself when its own transaction
// takes the tables; SQLite has one writer.
func RebuildRollups(ctx context.Context, db *store.DB) error {
	var inserts []string
	for _, m := range store.Migrations() {
		if m.Name != rollupMigration {
			continue
		}
		for _, st := range m.Statements() {
			if strings.HasPrefix(st, "INSERT INTO review_day") {
				inserts = append(inserts, st)
			}
		}
	}
	if len(inserts) != 2 {
		return fmt.Errorf("rebuild rollups: migration %s has %d INSERT statements, want 2", rollupMigration, len(inserts))
	}
	return db.InTx(ctx, func(tx store.Tx) error {
		if db.Dialect() == store.Postgres {
			if _, err := tx.Exec(ctx, `LOCK TABLE review_days, review_day_durations IN SHARE ROW EXCLUSIVE MODE`); err != nil {
				return fmt.Errorf("rebuild rollups: %w", err)
			}
		}
		for _, st := range append([]string{`DELETE FROM review_day_durations`, `DELETE FROM review_days`}, inserts...) {
			if _, err := tx.Exec(ctx, st); err != nil {
				return fmt.Errorf("rebuild rollups: %w", err)
			}
		}
		return nil
	})
}
