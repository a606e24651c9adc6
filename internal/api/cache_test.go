package api

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

// A stored review never changes, so GET /v1/reviews/{id} serves it from a
// bounded cache — per account, so the cache never crosses tenants.
func TestReviewCache(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.SQLite, func(c *Config) { c.ReviewCacheSize = 1 })
	secret := b.reader(t)
	first := storetest.Review(t, b.db, b.repo, 1, 3, b.clock.Now())
	second := storetest.Review(t, b.db, b.repo, 2, 3, b.clock.Now())
	ctx := context.Background()
	dropFindings := func(reviewID string) {
		t.Helper()
		if _, err := b.db.Writer().Exec(ctx, `DELETE FROM findings WHERE review_id = $1`, reviewID); err != nil {
			t.Fatal(err)
		}
	}

	before := b.get(t, "/v1/reviews/"+first.ID, secret).want(t, http.StatusOK)
	dropFindings(first.ID)
	cached := b.get(t, "/v1/reviews/"+first.ID, secret).want(t, http.StatusOK)
	if !bytes.Equal(before.body, cached.body) {
		t.Errorf("second GET was not served from the cache:\n%s\n%s", before.body, cached.body)
	}

	// Another account misses the cache and gets the database's answer.
	_, globex := b.token(t, b.other.AccountID, 0, token.ScopeReviewsRead)
	b.get(t, "/v1/reviews/"+first.ID, globex).problem(t, "not-found")

	// The cache is bounded: reading another review evicts the first.
	b.get(t, "/v1/reviews/"+second.ID, secret).want(t, http.StatusOK)
	evicted := b.get(t, "/v1/reviews/"+first.ID, secret).want(t, http.StatusOK)
	if !bytes.Contains(evicted.body, []byte(`"findings":[]`)) {
		t.Errorf("after eviction the review is still the cached one: %s", evicted.body)
	}
}
