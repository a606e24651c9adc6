package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

// TestSecretIsShownOnceAfterARedirect: registering answers with a redirect
// (post/redirect/get), so a reload neither registers again nor shows the
// secret again; only the session that registered may see it, once, and
// only for a while.
func TestSecretIsShownOnceAfterARedirect(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		br := s.signedIn(t, s.repo)
		res, body := br.post("/dashboard/webhooks", url.Values{"csrf": {br.csrf()}, "url": {"https://hooks.example.com/a"}})
		wantStatus(t, res, body, http.StatusSeeOther)
		secretPage := res.Header.Get("Location")
		if !strings.HasSuffix(secretPage, "/secret") {
			t.Fatalf("registering leads to %q, want the endpoint's secret page", secretPage)
		}
		// Another session of the same account may not see it.
		res, body = s.signedIn(t, s.repo).get(secretPage)
		wantStatus(t, res, body, http.StatusNotFound)

		res, body = br.get(secretPage)
		wantStatus(t, res, body, http.StatusOK)
		if !strings.Contains(body, `id="endpoint-secret">whsec_`) || res.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("the secret page does not show the secret uncached:\n%s", body)
		}
		res, body = br.get(secretPage)
		wantStatus(t, res, body, http.StatusNotFound)
		if strings.Contains(body, "whsec_") || !strings.Contains(body, "rotate it") {
			t.Fatalf("a reload of the secret page shows the secret, or does not say what to do:\n%s", body)
		}
		var n int
		if err := s.db.Reader().QueryRow(t.Context(), `SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`, s.repo.AccountID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%d endpoints (%v), want the one registered", n, err)
		}

		// A rotation's secret, not looked at within ten minutes, is gone.
		eid := strings.TrimSuffix(strings.TrimPrefix(secretPage, "/dashboard/webhooks/"), "/secret")
		res, body = br.post("/dashboard/webhooks/"+eid+"/rotate-secret", url.Values{"csrf": {br.csrf()}})
		wantStatus(t, res, body, http.StatusSeeOther)
		s.clock.Advance(secretWindow)
		res, body = br.get(secretPage)
		wantStatus(t, res, body, http.StatusNotFound)
	})
}

// TestSecretIsTakenOnceUnderConcurrency: of several requests for an
// offered secret at the same time, exactly one gets it.
func TestSecretIsTakenOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		_, tok, err := s.tokens.Create(t.Context(), s.repo.AccountID, "t", token.AllScopes, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.tokens.Authenticate(t.Context(), tok)
		if err != nil {
			t.Fatal(err)
		}
		ss := &sessions{db: s.db, now: s.clock.Now, ttl: DefaultSessionTTL}
		_, sess, err := ss.create(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if err := ss.offerSecret(t.Context(), sess.hash, "hook_x", secretCreated); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var got atomic.Int32
		for range 8 {
			wg.Go(func() {
				kind, ok, err := ss.takeSecret(context.Background(), sess.hash, "hook_x")
				if err != nil {
					t.Error(err)
				}
				if ok && kind == secretCreated {
					got.Add(1)
				}
			})
		}
		wg.Wait()
		if got.Load() != 1 {
			t.Fatalf("%d of 8 concurrent requests took the secret, want 1", got.Load())
		}
	})
}
