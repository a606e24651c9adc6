package main

import (
	"context"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/storetest"
)

// TestSeedKeepsRollups seeds reviews (one a second) across a midnight, most
// of them by bulk INSERTs that bypass review.Store.Create, and checks that
// each day's rollup counts that day's reviews and findings, so the charts
// the benchmark times count what was seeded. The plan is the benchmark's
// in small: a day's reviews span transactions, a transaction spans the
// midnight, and reviews made by Create (with findings) are in every
// transaction, on both days, between multi-row INSERTs.
func TestSeedKeepsRollups(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	plan := seedPlan{
		Reviews: 4000,
		// 1,500 s after midnight: the newest 1,501 reviews are on the second
		// day, and the midnight falls in the second transaction.
		Newest:     time.Date(2026, 3, 1, 0, 25, 0, 0, time.UTC),
		FindingsOn: 700,
		PerTx:      1500,
	}
	if _, err := seed(ctx, db, plan, nil); err != nil {
		t.Fatal(err)
	}
	type counts struct{ reviews, findings int64 }
	read := func(query string) map[int64]counts {
		rows, err := db.Reader().Query(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]counts{}
		for rows.Next() {
			var day int64
			var c counts
			if err := rows.Scan(&day, &c.reviews, &c.findings); err != nil {
				t.Fatal(err)
			}
			out[day] = c
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := read(`SELECT r.synthesized_at / 86400000000 * 86400000000, COUNT(*), SUM(r.findings_count) FROM reviews r GROUP BY 1`)
	got := read(`SELECT day, approve + comment + request_changes, critical + high + medium + low + info FROM review_days`)
	if len(want) < 2 {
		t.Fatalf("the seeded reviews are on %d days, want at least 2", len(want))
	}
	for day, w := range want {
		if got[day] != w {
			t.Errorf("day %d: the rollup counts %+v, the reviews say %+v", day, got[day], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d days in the rollups, %d with reviews", len(got), len(want))
	}
}
