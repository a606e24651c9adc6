package api

import (
	"net/http"
	"testing"

	"github.com/quorum-review/quorum/internal/storetest"
)

// A query string that does not decode, or decodes to text that is not
// valid UTF-8 or holds a NUL, is a 400 naming the parameter on every route
// that reads the query, on both databases (PostgreSQL's text refuses such
// bytes; they must not reach it).
func TestMalformedQuery(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		withJobs(t, b.db)
		reviews := b.reader(t)
		hooks, _, _ := webhookTokens(t, b, b.repo.AccountID)
		var hook created
		b.sendJSON(t, http.MethodPost, "/v1/webhooks", hooks, map[string]any{"url": "https://ci.example.com/q"}).
			want(t, http.StatusCreated).json(t, &hook)

		for _, tc := range []struct{ path, secret, want string }{
			{listPath(b.repo, "cursor=%%%"), reviews, "cursor"},
			{listPath(b.repo, "pr=%%%"), reviews, "pr"},
			{listPath(b.repo, "pr=5&pr=%zz"), reviews, "pr"},
			{listPath(b.repo, "limit=%zz"), reviews, "limit"},
			{listPath(b.repo, "%zz=1"), reviews, "%zz"},
			{listPath(b.repo, "pr=1;limit=2"), reviews, "pr"},
			{"/v1/reviews?owner=%00&repo=x", reviews, "owner"},
			{"/v1/reviews?owner=%ff&repo=x", reviews, "owner"},
			{"/v1/reviews?owner=%C3%28&repo=x", reviews, "owner"},
			{"/v1/reviews?owner=acme&repo=wid%00gets", reviews, "repo"},
			{"/v1/webhooks?cursor=%%%", hooks, "cursor"},
			{"/v1/webhooks?limit=1&limit=%zz", hooks, "limit"},
			{"/v1/webhooks/" + hook.ID + "/deliveries?status=%%%", hooks, "status"},
			{"/v1/webhooks/" + hook.ID + "/deliveries?cursor=%%%", hooks, "cursor"},
			{"/v1/webhooks/" + hook.ID + "/deliveries?status=%ff", hooks, "status"},
		} {
			p := b.get(t, tc.path, tc.secret).want(t, http.StatusBadRequest).problem(t, codeInvalid)
			if got := paramNames(p); got != tc.want {
				t.Errorf("%s: invalid_params %v, want %s", tc.path, p.InvalidParams, tc.want)
			}
		}
	})
}
