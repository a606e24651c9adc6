package api

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

// tightLimit allows three requests a minute.
func tightLimit(c *Config) { c.RateLimit, c.RateWindow = 3, time.Minute }

// wantBudget checks the RateLimit headers, and Retry-After on a 429.
func wantBudget(t *testing.T, r response, remaining, reset int) {
	t.Helper()
	for name, want := range map[string]int{"RateLimit-Limit": 3, "RateLimit-Remaining": remaining, "RateLimit-Reset": reset} {
		if got := r.header.Get(name); got != strconv.Itoa(want) {
			t.Errorf("%s: %q, want %d (status %d)", name, got, want, r.status)
		}
	}
	retry := r.header.Get("Retry-After")
	switch {
	case r.status == http.StatusTooManyRequests && retry != strconv.Itoa(reset):
		t.Errorf("429 with Retry-After %q, want %d", retry, reset)
	case r.status != http.StatusTooManyRequests && retry != "":
		t.Errorf("%d with Retry-After %q", r.status, retry)
	}
}

func TestRateLimitPerToken(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open, tightLimit)
		_, first := b.token(t, b.repo.AccountID, 0, token.ScopeReviewsRead)
		_, second := b.token(t, b.repo.AccountID, 0, token.ScopeReviewsRead)
		list := listPath(b.repo, "")

		wantBudget(t, b.get(t, "/v1/reviews/"+id.New(id.Review, b.clock.Now()), first).want(t, http.StatusNotFound), 2, 60)
		b.clock.Advance(10 * time.Second)
		wantBudget(t, b.get(t, list, first).want(t, http.StatusOK), 1, 50)
		wantBudget(t, b.get(t, "/v1/findings/"+id.New(id.Finding, b.clock.Now()), first).want(t, http.StatusForbidden), 0, 50)
		r := b.get(t, list, first).want(t, http.StatusTooManyRequests)
		r.problem(t, codeRateLimited)
		wantBudget(t, r, 0, 50)

		wantBudget(t, b.get(t, list, second).want(t, http.StatusOK), 2, 60)

		b.clock.Advance(50 * time.Second)
		wantBudget(t, b.get(t, list, first).want(t, http.StatusOK), 2, 60)
	})
}

func TestRateLimitPerAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.SQLite, tightLimit, func(c *Config) { c.TrustProxy = true })
	from := func(addr string) []string { return []string{"X-Forwarded-For", "198.51.100.7, " + addr} }

	wantBudget(t, b.do(t, http.MethodGet, listPath(b.repo, ""), from("203.0.113.1")...).want(t, http.StatusUnauthorized), 2, 60)
	wantBudget(t, b.do(t, http.MethodGet, "/v1/nope", from("203.0.113.1")...).want(t, http.StatusNotFound), 1, 60)
	wantBudget(t, b.do(t, http.MethodGet, "/v1/openapi.json", from("203.0.113.1")...).want(t, http.StatusOK), 0, 60)
	wantBudget(t, b.do(t, http.MethodGet, "/v1/openapi.json", from("203.0.113.1")...).want(t, http.StatusTooManyRequests), 0, 60)
	// A token that does not authenticate is no way around the limit.
	unknown, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	wantBudget(t, b.do(t, http.MethodGet, listPath(b.repo, ""), append(from("203.0.113.1"), "Authorization", "Bearer "+unknown)...).
		want(t, http.StatusTooManyRequests), 0, 60)

	wantBudget(t, b.do(t, http.MethodGet, "/v1/openapi.json", from("203.0.113.2")...).want(t, http.StatusOK), 2, 60)
	// Probes are not limited.
	if r := b.do(t, http.MethodGet, "/healthz", from("203.0.113.1")...).want(t, http.StatusOK); r.header.Get("RateLimit-Limit") != "" {
		t.Error("/healthz carries RateLimit headers; probes are not rate limited")
	}
	b.clock.Advance(time.Minute)
	wantBudget(t, b.do(t, http.MethodGet, "/v1/openapi.json", from("203.0.113.1")...).want(t, http.StatusOK), 2, 60)
}
