package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

// TestLastUsedIsBatched checks that requests record a token's last use in
// memory and Flush writes it once, not once per request. A second token
// store on the same database, like the CLI's, sees only what was written.
func TestLastUsedIsBatched(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		ctx := t.Context()
		tok, secret := b.token(t, b.repo.AccountID, 0, token.ScopeReviewsRead)
		cli := token.NewStore(b.db, b.clock.Now)
		written := func() *time.Time {
			t.Helper()
			list, err := cli.List(ctx, b.repo.AccountID)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range list {
				if l.ID == tok.ID {
					return l.LastUsedAt
				}
			}
			t.Fatalf("token %s not listed", tok.ID)
			return nil
		}
		flush := func() {
			t.Helper()
			if err := b.tokens.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		requests := func(n int) time.Time {
			t.Helper()
			var last time.Time
			for range n {
				b.clock.Advance(time.Second)
				last = b.clock.Now()
				b.get(t, listPath(b.repo, ""), secret).want(t, http.StatusOK)
			}
			return last
		}

		last := requests(10)
		if at := written(); at != nil {
			t.Fatalf("last_used_at %s written before Flush: a write per request", at)
		}
		flush()
		if at := written(); at == nil || !at.Equal(last) {
			t.Fatalf("after Flush last_used_at is %v, want the last request's time %s", at, last)
		}

		// Within a minute of the written use, further requests write nothing.
		requests(5)
		flush()
		if at := written(); at == nil || !at.Equal(last) {
			t.Fatalf("last_used_at %v rewritten within a minute, want it still %s", at, last)
		}

		b.clock.Advance(time.Minute)
		last = requests(1)
		flush()
		if at := written(); at == nil || !at.Equal(last) {
			t.Fatalf("a minute later last_used_at is %v, want %s", at, last)
		}
	})
}
