package api

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

// guarded is a /v1 endpoint that needs a token: a path to acme's own
// resource, to globex's, and to one that does not exist, with the text
// that names the resource in a 404's detail.
type guarded struct {
	name                   string
	scope                  string
	own, foreign, missing  string
	foreignKey, missingKey string
}

func guardedEndpoints(t *testing.T, b *bundle) []guarded {
	t.Helper()
	at := b.clock.Now().Add(-time.Hour)
	own := storetest.Review(t, b.db, b.repo, 7, 1, at)
	foreign := storetest.Review(t, b.db, b.other, 7, 1, at)
	missingReview, missingFinding := id.New(id.Review, at), id.New(id.Finding, at)
	withJobs(t, b.db)
	ownHook, ownDelivery := seedHook(t, b, b.repo.AccountID)
	foreignHook, foreignDelivery := seedHook(t, b, b.other.AccountID)
	missingHook, missingDelivery := id.New(id.Endpoint, at), id.New(id.Delivery, at)
	return []guarded{{
		name: "list", scope: token.ScopeReviewsRead,
		own: listPath(b.repo, ""), foreign: listPath(b.other, ""), missing: "/v1/reviews?owner=nobody&repo=nothing",
		foreignKey: b.other.Owner + "/" + b.other.Name, missingKey: "nobody/nothing",
	}, {
		name: "review", scope: token.ScopeReviewsRead,
		own: "/v1/reviews/" + own.ID, foreign: "/v1/reviews/" + foreign.ID, missing: "/v1/reviews/" + missingReview,
		foreignKey: foreign.ID, missingKey: missingReview,
	}, {
		name: "finding", scope: token.ScopeFindingsRead,
		own: "/v1/findings/" + own.Findings[0].ID, foreign: "/v1/findings/" + foreign.Findings[0].ID, missing: "/v1/findings/" + missingFinding,
		foreignKey: foreign.Findings[0].ID, missingKey: missingFinding,
	}, {
		name: "webhook", scope: token.ScopeWebhooksRead,
		own: "/v1/webhooks/" + ownHook.ID, foreign: "/v1/webhooks/" + foreignHook.ID, missing: "/v1/webhooks/" + missingHook,
		foreignKey: foreignHook.ID, missingKey: missingHook,
	}, {
		name: "deliveries", scope: token.ScopeWebhooksRead,
		own: "/v1/webhooks/" + ownHook.ID + "/deliveries", foreign: "/v1/webhooks/" + foreignHook.ID + "/deliveries", missing: "/v1/webhooks/" + missingHook + "/deliveries",
		foreignKey: foreignHook.ID, missingKey: missingHook,
	}, {
		name: "delivery", scope: token.ScopeWebhooksRead,
		own: "/v1/deliveries/" + ownDelivery.ID, foreign: "/v1/deliveries/" + foreignDelivery.ID, missing: "/v1/deliveries/" + missingDelivery,
		foreignKey: foreignDelivery.ID, missingKey: missingDelivery,
	}}
}

// seedHook registers an endpoint of the account and pings it, for a
// delivery to exist.
func seedHook(t *testing.T, b *bundle, accountID string) (webhook.Endpoint, webhook.Delivery) {
	t.Helper()
	e, _, err := webhook.Create(t.Context(), b.db.Writer(), accountID, "https://hooks.example.com/", nil, "", "", b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	d, err := webhook.Ping(t.Context(), b.db, accountID, e.ID, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return e, d
}

// wantUnauthorized checks a 401: its anchor, its challenge, and its title
// and detail when given.
func wantUnauthorized(t *testing.T, r response, title, detail string) {
	t.Helper()
	p := r.want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
	if wa := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer") {
		t.Errorf("WWW-Authenticate %q, want it to start with Bearer", wa)
	}
	if title != "" && p.Title != title {
		t.Errorf("title %q, want %q", p.Title, title)
	}
	if !strings.Contains(p.Detail, detail) {
		t.Errorf("detail %q, want it to say %q", p.Detail, detail)
	}
}

func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		endpoints := guardedEndpoints(t, b)
		ctx := t.Context()
		acme := b.repo.AccountID

		unknown, err := token.Generate()
		if err != nil {
			t.Fatal(err)
		}
		revoked, revokedSecret := b.token(t, acme, 0, token.AllScopes...)
		if _, err := b.tokens.Revoke(ctx, revoked.ID); err != nil {
			t.Fatal(err)
		}
		_, expired := b.token(t, acme, time.Hour, token.AllScopes...)
		b.clock.Advance(time.Hour)
		_, all := b.token(t, acme, 0, token.AllScopes...)

		for _, e := range endpoints {
			t.Run(e.name, func(t *testing.T) {
				b.get(t, e.own, all).want(t, http.StatusOK)

				wantUnauthorized(t, b.get(t, e.own, ""), "", "")
				wantUnauthorized(t, b.do(t, http.MethodGet, e.own, "Authorization", "Basic dXNlcjpwYXNz"), "", "")
				// "Bearer", one space, the token, nothing else. (The server
				// trims whitespace around a header value before quorum sees it.)
				for _, h := range []string{"Bearer  " + all, "Bearer\t" + all, "Bearer \t" + all, "Bearer " + all + " x", "Bearer " + all + "\tx"} {
					wantUnauthorized(t, b.do(t, http.MethodGet, e.own, "Authorization", h), "", "one space")
				}
				b.do(t, http.MethodGet, e.own, "Authorization", "bearer "+all).want(t, http.StatusOK)
				wantUnauthorized(t, b.get(t, e.own, "qrm_notatoken"), "invalid PAT", "malformed")
				wantUnauthorized(t, b.get(t, e.own, unknown), "invalid PAT", "does not exist or was revoked")
				wantUnauthorized(t, b.get(t, e.own, revokedSecret), "invalid PAT", "does not exist or was revoked")
				wantUnauthorized(t, b.get(t, e.own, expired), "invalid PAT", "expired")

				// Every scope but the one the endpoint needs.
				var others []string
				for _, sc := range token.AllScopes {
					if sc != e.scope {
						others = append(others, sc)
					}
				}
				_, wrongScope := b.token(t, acme, 0, others...)
				p := b.get(t, e.own, wrongScope).want(t, http.StatusForbidden).problem(t, codeForbidden)
				if !strings.Contains(p.Detail, e.scope) {
					t.Errorf("403 detail %q does not name the missing scope %s", p.Detail, e.scope)
				}

				foreign := b.get(t, e.foreign, all).want(t, http.StatusNotFound).problem(t, codeNotFound)
				missing := b.get(t, e.missing, all).want(t, http.StatusNotFound).problem(t, codeNotFound)
				foreign.RequestID, missing.RequestID = "", ""
				foreign.Detail = strings.ReplaceAll(foreign.Detail, e.foreignKey, "<id>")
				missing.Detail = strings.ReplaceAll(missing.Detail, e.missingKey, "<id>")
				if !reflect.DeepEqual(foreign, missing) {
					t.Errorf("another account's resource gives %+v, a missing one %+v: they must be indistinguishable", foreign, missing)
				}
			})
		}
	})
}

// TestRevocationIsImmediate revokes a token the way the CLI does, from
// another token store on the same database, between two requests.
func TestRevocationIsImmediate(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		tok, secret := b.token(t, b.repo.AccountID, 0, token.ScopeReviewsRead)
		b.get(t, listPath(b.repo, ""), secret).want(t, http.StatusOK)
		cli := token.NewStore(b.db, b.clock.Now)
		if _, err := cli.Revoke(t.Context(), tok.ID); err != nil {
			t.Fatal(err)
		}
		wantUnauthorized(t, b.get(t, listPath(b.repo, ""), secret), "invalid PAT", "does not exist or was revoked")
	})
}
