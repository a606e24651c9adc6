package dashboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/webhook"
)

// sessionCookie is the session id the browser holds.
func (b *browser) sessionCookie() string {
	u, _ := url.Parse(b.site.url)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "quorum_session" {
			return c.Value
		}
	}
	return ""
}

func TestAttackSessionFixationAndStorage(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := newSite(t, b.Open(t))
		u, _ := url.Parse(s.url)

		// An id the attacker made up is no session.
		victim := s.browser(t)
		victim.client.Jar.SetCookies(u, []*http.Cookie{{Name: "quorum_session", Value: "attacker-chosen-id", Path: "/"}})
		res, body := victim.get("/dashboard/repositories")
		wantStatus(t, res, body, http.StatusSeeOther)

		// An attacker's live session planted in the victim's browser is
		// replaced at sign-in, not adopted, and ends: the browser can no
		// longer name it, and nobody should be able to.
		attacker := s.signedIn(t, s.other)
		planted := attacker.sessionCookie()
		victim.client.Jar.SetCookies(u, []*http.Cookie{{Name: "quorum_session", Value: planted, Path: "/"}})
		res, body = victim.post("/dashboard/sign-in", url.Values{"token": {s.token(t, s.repo)}})
		wantStatus(t, res, body, http.StatusSeeOther)
		id := victim.sessionCookie()
		if id == planted || id == "" {
			t.Fatalf("sign-in kept the planted session id %q", id)
		}
		if res, _ := attacker.get("/dashboard/repositories"); res.StatusCode != http.StatusSeeOther {
			t.Errorf("the session replaced at sign-in still answers %d", res.StatusCode)
		}

		// Signing in again in one browser leaves one session, not two.
		res, body = victim.post("/dashboard/sign-in", url.Values{"token": {s.token(t, s.repo)}})
		wantStatus(t, res, body, http.StatusSeeOther)
		id2 := victim.sessionCookie()
		var n int
		if err := s.db.Reader().QueryRow(ctx, `SELECT count(*) FROM dashboard_sessions WHERE account_id = $1`, s.repo.AccountID).Scan(&n); err != nil || n != 1 {
			t.Errorf("sessions of the account after signing in twice in one browser: %d (%v), want 1", n, err)
		}

		// 32 random bytes, stored only as their SHA-256.
		raw, err := base64.RawURLEncoding.DecodeString(id2)
		if err != nil || len(raw) != 32 {
			t.Errorf("session id %q: %d bytes (%v), want 32 random bytes", id2, len(raw), err)
		}
		rows, err := s.db.Reader().Query(ctx, `SELECT id_hash, token_id, account_id, csrf FROM dashboard_sessions`)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(id2))
		found := false
		for rows.Next() {
			var hash, tok, acct, csrf string
			if err := rows.Scan(&hash, &tok, &acct, &csrf); err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{hash, tok, acct, csrf} {
				if strings.Contains(v, id2) {
					t.Errorf("the store holds the session id itself")
				}
			}
			found = found || hash == hex.EncodeToString(sum[:])
		}
		rows.Close()
		if !found {
			t.Error("no session row holds the id's SHA-256")
		}

		// The cookie is for this host's pages only, not script's, and not
		// sent on cross-site subrequests.
		res, _ = s.browser(t).post("/dashboard/sign-in", url.Values{"token": {s.token(t, s.repo)}})
		c := res.Cookies()[0]
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" || c.MaxAge <= 0 || c.MaxAge > int(DefaultSessionTTL/time.Second) {
			t.Errorf("session cookie %+v: want HttpOnly, SameSite=Lax, Path=/, no Domain, Max-Age within the TTL", c)
		}

		// The API does not take the cookie: a page cannot call it with
		// the browser's session.
		res, body = victim.get("/v1/reviews")
		wantStatus(t, res, body, http.StatusUnauthorized)
	})
}

func TestAttackNoGetChangesState(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		br := s.signedIn(t, s.repo)
		ep, _, err := webhook.Create(context.Background(), s.db.Writer(), s.repo.AccountID, "https://ci.example.com/hook", nil, "", "", s.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			for _, path := range []string{"/dashboard/sign-out", "/dashboard/webhooks/" + ep.ID + "/delete", "/dashboard/webhooks/" + ep.ID + "/disable",
				"/dashboard/webhooks/" + ep.ID + "/rotate-secret", "/dashboard/webhooks/" + ep.ID + "/ping", "/dashboard/webhooks/" + ep.ID} {
				req, _ := http.NewRequest(method, s.url+path+"?csrf="+url.QueryEscape(br.csrf()), nil)
				res, body := br.do(req)
				if (method != http.MethodGet && method != http.MethodHead) || path != "/dashboard/webhooks/"+ep.ID {
					if res.StatusCode < 400 {
						t.Errorf("%s %s: status %d, want a 4xx", method, path, res.StatusCode)
					}
				}
				_ = body
			}
		}
		got, err := webhook.Get(context.Background(), s.db.Reader(), s.repo.AccountID, ep.ID)
		if err != nil || got.Disabled || !got.UpdatedAt.Equal(ep.UpdatedAt) {
			t.Fatalf("the endpoint changed without a POST: %+v (%v)", got, err)
		}
		// A csrf in the query of a POST is not the form's.
		res, body := br.post("/dashboard/webhooks/"+ep.ID+"/disable?csrf="+url.QueryEscape(br.csrf()), url.Values{})
		wantStatus(t, res, body, http.StatusForbidden)
		if res, _ := br.get("/dashboard/repositories"); res.StatusCode != http.StatusOK {
			t.Fatalf("the session did not survive: %d", res.StatusCode)
		}
	})
}

func TestAttackEveryResponseCarriesTheHeaders(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	br := s.signedIn(t, s.repo)
	csrf := br.csrf()
	_, page := br.get("/dashboard/repositories")
	asset := regexp.MustCompile(`/dashboard/assets/dashboard\.[0-9a-f]+\.css`).FindString(page)
	type check struct {
		method, path string
		form         url.Values
		noStore      bool
	}
	for _, c := range []check{
		{"GET", asset, nil, false},
		{"GET", "/dashboard/assets/nope.js", nil, true},
		{"GET", "/dashboard/reviews/rev_nope", nil, true},
		{"GET", "/dashboard/reviews?pr=x", nil, true},
		{"POST", "/dashboard/webhooks", url.Values{"csrf": {csrf}, "url": {"https://e.example/h"}}, true}, // the secret page
		{"POST", "/dashboard/webhooks", url.Values{"csrf": {"wrong"}}, true},
		{"POST", "/dashboard/sign-in", url.Values{"token": {"qrm_nope"}}, true},
	} {
		res, _ := br.postOrGet(c.method, c.path, c.form)
		h := res.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s (%d): CSP %q, X-Frame-Options %q, nosniff %q", c.method, c.path, res.StatusCode, h.Get("Content-Security-Policy"), h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"))
		}
		if c.noStore && h.Get("Cache-Control") != "no-store" && res.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s (%d): Cache-Control %q, want no-store", c.method, c.path, res.StatusCode, h.Get("Cache-Control"))
		}
	}
	// Redirects too: to sign in, and after it.
	res, _ := s.browser(t).get("/dashboard/webhooks")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Content-Security-Policy") == "" || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("redirect to sign in: %d, CSP %q, Cache-Control %q", res.StatusCode, res.Header.Get("Content-Security-Policy"), res.Header.Get("Cache-Control"))
	}
	res, _ = s.browser(t).post("/dashboard/sign-in", url.Values{"token": {s.token(t, s.repo)}})
	if res.Header.Get("Content-Security-Policy") == "" || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("redirect after sign-in: CSP %q, Cache-Control %q", res.Header.Get("Content-Security-Policy"), res.Header.Get("Cache-Control"))
	}
}

func (b *browser) postOrGet(method, path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	if method == http.MethodPost {
		return b.post(path, form)
	}
	return b.get(path)
}

func TestAttackHostileEndpointTextIsNeverMarkup(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		br := s.signedIn(t, s.repo)
		for _, bad := range []string{"javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,<script>alert(1)</script>", " javascript:alert(1)", "//evil.example/h"} {
			res, body := br.post("/dashboard/webhooks", url.Values{"csrf": {br.csrf()}, "url": {bad}})
			wantStatus(t, res, body, http.StatusBadRequest)
			wantNoMarkup(t, "refused "+bad, body)
		}
		res, body := br.post("/dashboard/webhooks", url.Values{"csrf": {br.csrf()},
			"url": {"https://ci.example.com/" + url.PathEscape(hostile) + "?q=" + hostile}, "description": {hostile}})
		res, body = br.followed(res, body)
		wantStatus(t, res, body, http.StatusOK)
		wantNoMarkup(t, "secret page", body)
		eid := regexp.MustCompile(`href="/dashboard/webhooks/(hook_[0-9A-Za-z]+)"`).FindStringSubmatch(body)
		if eid == nil {
			t.Fatalf("no endpoint link on the secret page:\n%s", body)
		}
		for _, path := range []string{"/dashboard/webhooks", "/dashboard/webhooks/" + eid[1], "/dashboard/webhooks/" + eid[1] + "/deliveries", "/dashboard/insights"} {
			res, body := br.get(path)
			wantStatus(t, res, body, http.StatusOK)
			wantNoMarkup(t, path, body)
		}
		// A refused edit shows what was typed back in the form, escaped.
		res, body = br.post("/dashboard/webhooks/"+eid[1], url.Values{"csrf": {br.csrf()}, "url": {"ftp://" + hostile}, "description": {hostile}})
		wantStatus(t, res, body, http.StatusBadRequest)
		wantNoMarkup(t, "refused edit", body)
	})
}

// TestAttackSignInIsRateLimitedAndNeverLogsTheToken guesses tokens at the
// sign-in form as fast as it can: the API's per-address limit stops it,
// and no log line holds a token tried or used.
func TestAttackSignInIsRateLimitedAndNeverLogsTheToken(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	s := newSite(t, db)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dash, err := New(Config{}, db, s.tokens, log, s.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(context.Background(), api.Config{RateLimit: 5, RateWindow: time.Hour, Dashboard: dash}, db, s.tokens, log, s.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	s.url = hs.URL
	good := s.token(t, s.repo)
	guesses := []string{"qrm_" + strings.Repeat("A", 36), good[:len(good)-1] + "x", good}
	limited := false
	for i := range 8 {
		res, body := s.browser(t).post("/dashboard/sign-in", url.Values{"token": {guesses[i%len(guesses)]}})
		if res.StatusCode == http.StatusTooManyRequests {
			limited = true
			break
		}
		if strings.Contains(body, guesses[i%len(guesses)]) {
			t.Errorf("the sign-in page echoes the token tried")
		}
	}
	if !limited {
		t.Error("8 sign-ins from one address within a limit of 5 were all answered")
	}
	for _, g := range guesses {
		if strings.Contains(logs.String(), g[4:]) {
			t.Errorf("a log line holds a token:\n%s", logs.String())
		}
	}
}
