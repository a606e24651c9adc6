package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

func TestSignInExchangesTheTokenForASession(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		br := s.browser(t)

		// Signed out, a page leads to the sign-in form and back.
		res, _ := br.get("/dashboard/repositories?after=acme%2Fa")
		wantStatus(t, res, "", http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/dashboard/sign-in?next=%2Fdashboard%2Frepositories%3Fafter%3Dacme%252Fa" {
			t.Fatalf("signed out: Location %q", loc)
		}
		res, body := br.get("/dashboard/sign-in?next=" + url.QueryEscape("/dashboard/repositories?after=acme%2Fa"))
		wantStatus(t, res, body, http.StatusOK)
		if !strings.Contains(body, `<label for="token">Token</label>`) {
			t.Fatalf("the sign-in form has no field labelled Token:\n%s", body)
		}

		secret := s.token(t, s.repo)
		res, body = br.post("/dashboard/sign-in", url.Values{"token": {secret}, "next": {"/dashboard/repositories?after=acme%2Fa"}})
		wantStatus(t, res, body, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/dashboard/repositories?after=acme%2Fa" {
			t.Fatalf("after sign-in: Location %q, want the page asked for", loc)
		}
		cookies := res.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("sign-in set %d cookies, want 1", len(cookies))
		}
		c := cookies[0]
		if c.Name != "quorum_session" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure {
			t.Fatalf("session cookie %+v: want quorum_session, HttpOnly, SameSite=Lax, Path=/, not Secure over plain HTTP", c)
		}
		if c.Value == secret || strings.Contains(c.Value, "qrm_") {
			t.Fatal("the cookie carries the token itself")
		}
		if c.MaxAge != int(DefaultSessionTTL.Seconds()) {
			t.Fatalf("cookie Max-Age %d, want %v", c.MaxAge, DefaultSessionTTL)
		}
		// The store keeps the id's hash only.
		var n int
		if err := s.db.Reader().QueryRow(context.Background(), `SELECT count(*) FROM dashboard_sessions WHERE id_hash = $1`, hashID(c.Value)).Scan(&n); err != nil || n != 1 {
			t.Fatalf("sessions stored under the id's hash: %d (%v), want 1", n, err)
		}
		if err := s.db.Reader().QueryRow(context.Background(), `SELECT count(*) FROM dashboard_sessions WHERE id_hash = $1`, c.Value).Scan(&n); err != nil || n != 0 {
			t.Fatalf("a session is stored under the raw id: %d (%v)", n, err)
		}

		res, body = br.get("/dashboard/repositories")
		wantStatus(t, res, body, http.StatusOK)
		if !strings.Contains(body, "acme/widgets") || strings.Contains(body, "globex") {
			t.Fatalf("acme's repositories page shows the wrong accounts' repositories:\n%s", body)
		}
	})
}

func TestSignInRefusesBadTokensWithoutEchoingThem(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	br := s.browser(t)
	revoked := s.token(t, s.repo)
	toks, err := s.tokens.List(context.Background(), s.repo.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.tokens.Revoke(context.Background(), toks[0].ID); err != nil {
		t.Fatal(err)
	}
	unknown, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, token, want string }{
		{"malformed", "hunter2", "not a quorum token"},
		{"unknown", unknown, "does not exist or was revoked"},
		{"revoked", revoked, "does not exist or was revoked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := br.post("/dashboard/sign-in", url.Values{"token": {tc.token}})
			wantStatus(t, res, body, http.StatusUnauthorized)
			if !strings.Contains(body, tc.want) {
				t.Fatalf("the page does not say %q:\n%s", tc.want, body)
			}
			if strings.Contains(body, tc.token) {
				t.Fatal("the page echoes the token that was sent")
			}
			if len(res.Cookies()) != 0 {
				t.Fatal("a refused sign-in set a cookie")
			}
		})
	}
}

func TestSignInNeverRedirectsOffSite(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	for _, next := range []string{"https://evil.example/", "//evil.example/dashboard/", "/dashboard/\\evil", "/v1/reviews", ""} {
		br := s.browser(t)
		res, body := br.post("/dashboard/sign-in", url.Values{"token": {s.token(t, s.repo)}, "next": {next}})
		wantStatus(t, res, body, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/dashboard/" {
			t.Errorf("next=%q: Location %q, want /dashboard/", next, loc)
		}
	}
}

func TestPagesCarrySecurityHeaders(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	br := s.signedIn(t, s.repo)
	for _, path := range []string{"/dashboard/sign-in", "/dashboard/repositories", "/dashboard/nope"} {
		res, _ := br.get(path)
		h := res.Header
		csp := h.Get("Content-Security-Policy")
		if csp == "" || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		for name, want := range map[string]string{
			"X-Content-Type-Options": "nosniff",
			"X-Frame-Options":        "DENY",
			"Referrer-Policy":        "same-origin",
			"Cache-Control":          "no-store",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("%s: %s %q, want %q", path, name, got, want)
			}
		}
	}
}

func TestFormsNeedTheSessionsCSRFTokenAndTheSameOrigin(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		br := s.signedIn(t, s.repo)
		csrf := br.csrf()

		// Without the token, with another session's, and from another
		// site with the right one: refused, and the session lives on.
		other := s.signedIn(t, s.repo).csrf()
		for _, tc := range []struct {
			name      string
			form      url.Values
			fetchSite string
		}{
			{"no token", url.Values{}, "same-origin"},
			{"another session's token", url.Values{"csrf": {other}}, "same-origin"},
			{"cross-site", url.Values{"csrf": {csrf}}, "cross-site"},
		} {
			res, body := br.postFrom("/dashboard/sign-out", tc.form, tc.fetchSite)
			wantStatus(t, res, body, http.StatusForbidden)
			if res, body := br.get("/dashboard/repositories"); res.StatusCode != http.StatusOK {
				t.Fatalf("%s: a refused sign-out ended the session: %d\n%s", tc.name, res.StatusCode, body)
			}
		}

		// A cross-site sign-in (login CSRF) is refused too.
		res, body := s.browser(t).postFrom("/dashboard/sign-in", url.Values{"token": {s.token(t, s.repo)}}, "cross-site")
		wantStatus(t, res, body, http.StatusForbidden)
		if len(res.Cookies()) != 0 {
			t.Fatal("a cross-site sign-in set a cookie")
		}

		res, body = br.post("/dashboard/sign-out", url.Values{"csrf": {csrf}})
		wantStatus(t, res, body, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/dashboard/sign-in?signed-out=1" {
			t.Fatalf("sign-out: Location %q", loc)
		}
		if res, _ := br.get("/dashboard/repositories"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("after sign-out a page answers %d, want 303 to sign in", res.StatusCode)
		}
		var n int
		if err := s.db.Reader().QueryRow(context.Background(), `SELECT count(*) FROM dashboard_sessions`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("sessions left after one of two signed out: %d (%v), want 1", n, err)
		}
	})
}

func TestSessionEndsWithItsToken(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := newSite(t, b.Open(t))

		// Revoked: the next page asks to sign in again.
		br := s.signedIn(t, s.repo)
		toks, err := s.tokens.List(ctx, s.repo.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.tokens.Revoke(ctx, toks[0].ID); err != nil {
			t.Fatal(err)
		}
		if res, _ := br.get("/dashboard/repositories"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("with its token revoked a session still answers %d", res.StatusCode)
		}
		res, body := br.post("/dashboard/sign-out", url.Values{})
		wantStatus(t, res, body, http.StatusUnauthorized)

		// A token that expires in an hour gives a session of an hour.
		_, secret, err := s.tokens.Create(ctx, s.repo.AccountID, "short", token.AllScopes, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		br = s.browser(t)
		res, body = br.post("/dashboard/sign-in", url.Values{"token": {secret}})
		wantStatus(t, res, body, http.StatusSeeOther)
		if c := res.Cookies()[0]; c.MaxAge != 3600 {
			t.Fatalf("cookie of a session on a one-hour token has Max-Age %d, want 3600", c.MaxAge)
		}
		s.clock.Advance(time.Hour)
		if res, _ := br.get("/dashboard/repositories"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("past its token's expiry a session still answers %d", res.StatusCode)
		}

		// And past the session's own limit.
		br = s.signedIn(t, s.repo)
		s.clock.Advance(DefaultSessionTTL)
		if res, _ := br.get("/dashboard/repositories"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("past its TTL a session still answers %d", res.StatusCode)
		}
	})
}

func TestScopesDecideWhatIsShown(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	br := s.signedIn(t, s.repo, token.ScopeWebhooksRead)
	res, body := br.get("/dashboard/repositories")
	wantStatus(t, res, body, http.StatusForbidden)
	if !strings.Contains(body, `lacks the &#34;reviews:read&#34; scope`) || !strings.Contains(body, "https://quorum.example.com/docs/api/errors#forbidden") {
		t.Fatalf("the 403 page does not name the scope and the problem type:\n%s", body)
	}
	if strings.Contains(body, `href="/dashboard/repositories"`) {
		t.Fatal("a token without reviews:read is shown the Repositories link")
	}
	res, _ = br.get("/dashboard/")
	if loc := res.Header.Get("Location"); loc != "/dashboard/webhooks" {
		t.Fatalf("home of a webhooks-only token: Location %q, want /dashboard/webhooks", loc)
	}
	res, body = s.signedIn(t, s.repo, token.ScopeFindingsRead).get("/dashboard/")
	wantStatus(t, res, body, http.StatusForbidden)
}

func TestSecureCookiesOverTLS(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t), func(c *Config) { c.SecureCookies = true })
	res, body := s.browser(t).post("/dashboard/sign-in", url.Values{"token": {s.token(t, s.repo)}})
	wantStatus(t, res, body, http.StatusSeeOther)
	c := res.Cookies()[0]
	if c.Name != "__Host-quorum_session" || !c.Secure || c.Path != "/" || c.Domain != "" {
		t.Fatalf("cookie behind TLS %+v: want __Host-quorum_session, Secure, Path=/, no Domain", c)
	}
}

func TestAssetsAreHashedAndCachedForGood(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	br := s.browser(t)
	_, page := br.get("/dashboard/sign-in")
	css := assetPath("dashboard.css")
	if !strings.Contains(page, css) || !strings.Contains(page, assetPath("dashboard.js")) {
		t.Fatalf("the page does not link the hashed assets %s:\n%s", css, page)
	}
	res, body := br.get(css)
	wantStatus(t, res, "", http.StatusOK)
	if res.Header.Get("Content-Type") != "text/css; charset=utf-8" || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") || !strings.Contains(body, ":root") {
		t.Fatalf("stylesheet served as %q, %q", res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
	}
	if res, _ := br.get("/dashboard/assets/dashboard.css"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("an unhashed asset name answers %d, want 404", res.StatusCode)
	}
}

func TestRootLeadsToTheDashboard(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	res, _ := s.browser(t).get("/")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/dashboard/" {
		t.Fatalf("GET /: %d to %q, want 302 to /dashboard/", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestSessionsWorkAcrossReplicas signs in on one server and uses the
// session on another over the same database, as replicas behind a load
// balancer do; signing out on the second ends it on the first.
func TestSessionsWorkAcrossReplicas(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		one, two := newSite(t, db), newSite(t, db)
		u1, _ := url.Parse(one.url)
		signedIn := one.signedIn(t, one.repo)
		cookies := signedIn.client.Jar.Cookies(u1)
		// A fresh browser holding only that cookie, on the other replica.
		onTwo := func() *browser {
			br := two.browser(t)
			br.client.Jar.SetCookies(u1, cookies)
			return br
		}
		br := onTwo()
		res, body := br.get("/dashboard/repositories")
		wantStatus(t, res, body, http.StatusOK)
		res, body = br.post("/dashboard/sign-out", url.Values{"csrf": {br.csrf()}})
		wantStatus(t, res, body, http.StatusSeeOther)
		replay := one.browser(t)
		replay.client.Jar.SetCookies(u1, cookies)
		if res, _ := replay.get("/dashboard/repositories"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("signed out on one replica, the session still answers %d on the other", res.StatusCode)
		}
	})
}

// TestRoutesAreDocumented: every dashboard route is named in the OpenAPI
// document's description and in docs/dashboard.md, so neither can drift
// from the code.
func TestRoutesAreDocumented(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	dash, err := New(Config{}, s.db, s.tokens, slog.New(slog.DiscardHandler), s.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	var openapi struct {
		Info struct{ Description string } `json:"info"`
	}
	if err := json.Unmarshal(doc, &openapi); err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../../docs/dashboard.md")
	if err != nil {
		t.Fatal(err)
	}
	routes := dash.Routes()
	if len(routes) < 20 {
		t.Fatalf("only %d routes: %v", len(routes), routes)
	}
	for _, r := range routes {
		if !strings.Contains(openapi.Info.Description, "`"+r+"`") {
			t.Errorf("api/openapi.yaml's description does not name the dashboard route `%s`", r)
		}
		if !strings.Contains(string(guide), "`"+r+"`") {
			t.Errorf("docs/dashboard.md does not name the route `%s`", r)
		}
	}
}

// TestTheAPIsOwnErrorsArePages: the rate limit the API's middleware
// answers a dashboard request with is a page with the dashboard's headers,
// not JSON.
func TestTheAPIsOwnErrorsArePages(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	clock := storetest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	tokens := token.NewStore(db, clock.Now)
	log := slog.New(slog.DiscardHandler)
	dash, err := New(Config{DocsURL: "https://quorum.example.com/docs"}, db, tokens, log, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(context.Background(), api.Config{RateLimit: 1, RateWindow: time.Hour, Dashboard: dash}, db, tokens, log, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		res, err := http.Get(hs.URL + "/dashboard/sign-in")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("request %d: status %d, want %d", i, res.StatusCode, want)
		}
		if want != http.StatusTooManyRequests {
			continue
		}
		if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || !strings.Contains(string(body), "rate limit exceeded") {
			t.Errorf("the rate limit on a dashboard page is %s:\n%s", ct, body)
		}
		if res.Header.Get("Retry-After") == "" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("the rate-limit page lacks Retry-After or the CSP: %v", res.Header)
		}
	}
	// The API's own paths still answer JSON.
	res, err := http.Get(hs.URL + "/v1/reviews")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("an API error is %s, want problem+json", ct)
	}
}

// TestErrorPagesSayWhatHappened: a stale form and a cross-site one are
// 403s, but not a missing scope; an ended session is a 401, but no PAT
// was sent.
func TestErrorPagesSayWhatHappened(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	br := s.signedIn(t, s.repo)
	for _, tc := range []struct {
		name, fetchSite, want string
		form                  url.Values
	}{
		{"stale form", "same-origin", "form expired", url.Values{"csrf": {"stale"}}},
		{"cross-site", "cross-site", "cross-site form refused", url.Values{}},
	} {
		res, body := br.postFrom("/dashboard/sign-out", tc.form, tc.fetchSite)
		wantStatus(t, res, body, http.StatusForbidden)
		if !strings.Contains(body, tc.want) || strings.Contains(body, "missing scope") {
			t.Errorf("%s: the page does not say %q, or says missing scope:\n%s", tc.name, tc.want, body)
		}
	}
	res, body := s.browser(t).post("/dashboard/sign-out", url.Values{})
	wantStatus(t, res, body, http.StatusUnauthorized)
	if !strings.Contains(body, "not signed in") || strings.Contains(body, "PAT") {
		t.Errorf("a form without a session: the page does not say not signed in:\n%s", body)
	}
}
