package review_test

import (
	"context"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/storetest"
)

// benchReviews is how many reviews the benchmarks' repository holds.
const benchReviews = 200

func benchSetup(b *testing.B) (*review.Store, review.ListQuery, review.Full) {
	b.Helper()
	db := storetest.SQLite(b)
	repo := storetest.Repo(b, db, "acme", "acme", "widgets")
	var last review.Full
	for i := range benchReviews {
		last = storetest.Review(b, db, repo, 1+i%10, 5, base.Add(time.Duration(i)*time.Second))
	}
	return review.NewStore(db), review.ListQuery{AccountID: repo.AccountID, Owner: "acme", Repo: "widgets", Limit: 20}, last
}

// BenchmarkList reads the first page, and one deep page, of a repository's
// reviews on SQLite.
func BenchmarkList(b *testing.B) {
	s, q, _ := benchSetup(b)
	ctx := context.Background()
	first, err := s.List(ctx, q)
	if err != nil {
		b.Fatal(err)
	}
	deep := q
	deep.After = &review.Cursor{SynthesizedAt: first.Next.SynthesizedAt - int64(150*time.Second/time.Microsecond), ID: "rev_"}
	for b.Loop() {
		for _, q := range []review.ListQuery{q, deep} {
			page, err := s.List(ctx, q)
			if err != nil || len(page.Reviews) != q.Limit {
				b.Fatalf("List: %d reviews, %v", len(page.Reviews), err)
			}
		}
	}
}

// BenchmarkGet reads a review with its five findings on SQLite.
func BenchmarkGet(b *testing.B) {
	s, q, r := benchSetup(b)
	ctx := context.Background()
	for b.Loop() {
		full, err := s.Get(ctx, q.AccountID, r.ID)
		if err != nil || len(full.Findings) != 5 {
			b.Fatalf("Get: %d findings, %v", len(full.Findings), err)
		}
	}
}
