package main

import (
	"context"
	"testing"

	"github.com/quorum-review/quorum/internal/storetest"
)

// TestSeedKeepsRollups seeds more than a day of reviews (one a second),
// most of them by bulk INSERTs that bypass review.Store.Create, and checks
// that each day's rollup counts that day's reviews and findings, so the
// charts the benchmark times count what was seeded.
func TestSeedKeepsRollups(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	if _, err := seed(ctx, db, 90_000, nil); err != nil {
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
