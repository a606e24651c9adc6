package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

// site is the dashboard behind the real API server, over a real database
// and real HTTP: acme/widgets belongs to account acme, globex/gadgets to
// globex, whose data acme's sessions must never see.
type site struct {
	db     *store.DB
	clock  *storetest.Clock
	tokens *token.Store
	url    string
	repo   account.Repository
	other  account.Repository
}

func newSite(t *testing.T, db *store.DB, change ...func(*Config)) *site {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	s := &site{db: db, clock: clock, tokens: token.NewStore(db, clock.Now)}
	s.repo = storetest.Repo(t, db, "acme", "acme", "widgets")
	s.other = storetest.Repo(t, db, "globex", "globex", "gadgets")
	log := slog.New(slog.DiscardHandler)
	cfg := Config{
		DocsURL:       "https://quorum.example.com/docs",
		Version:       "test",
		PlatformURLs:  map[string]string{account.PlatformGitHub: "https://github.com"},
		WebhookPolicy: webhook.Policy{AllowPrivate: true},
	}
	for _, c := range change {
		c(&cfg)
	}
	dash, err := New(cfg, db, s.tokens, log, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(context.Background(), api.Config{RateLimit: 100000, RateWindow: time.Hour, Dashboard: dash}, db, s.tokens, log, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

// token issues a token of repo's account with scopes (every scope when
// none are given).
func (s *site) token(t *testing.T, repo account.Repository, scopes ...string) string {
	t.Helper()
	if len(scopes) == 0 {
		scopes = token.AllScopes
	}
	_, secret, err := s.tokens.Create(context.Background(), repo.AccountID, "dashboard test", scopes, 0)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// browser is an HTTP client that keeps cookies and does not follow
// redirects, so a test sees each one; it sends what a browser sends on a
// same-origin form (Sec-Fetch-Site).
type browser struct {
	t      *testing.T
	site   *site
	client *http.Client
}

func (s *site) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, site: s, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// signedIn is a browser signed in with a new token of repo's account.
func (s *site) signedIn(t *testing.T, repo account.Repository, scopes ...string) *browser {
	t.Helper()
	b := s.browser(t)
	res, _ := b.post("/dashboard/sign-in", url.Values{"token": {s.token(t, repo, scopes...)}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: status %d, want 303", res.StatusCode)
	}
	return b
}

// do sends a request and returns the response with its body read.
func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return res, string(body)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.site.url+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post sends a form as the dashboard's own page would (same origin).
func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	return b.postFrom(path, form, "same-origin")
}

// postFrom sends a form with Sec-Fetch-Site set as a browser would for a
// form on a page of that relation to the dashboard ("same-origin",
// "cross-site").
func (b *browser) postFrom(path string, form url.Values, fetchSite string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.site.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", fetchSite)
	return b.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of a signed-in page.
func (b *browser) csrf() string {
	b.t.Helper()
	_, body := b.get("/dashboard/repositories")
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no CSRF field on the page:\n%s", body)
	}
	return m[1]
}

// wantStatus fails unless res has status want.
func wantStatus(t *testing.T, res *http.Response, body string, want int) {
	t.Helper()
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d; body:\n%s", res.Request.Method, res.Request.URL.Path, res.StatusCode, want, body)
	}
}

// followed checks that res is the 303 a form answers with and follows it,
// as a browser does, returning the page it leads to.
func (b *browser) followed(res *http.Response, body string) (*http.Response, string) {
	b.t.Helper()
	wantStatus(b.t, res, body, http.StatusSeeOther)
	loc, err := res.Location()
	if err != nil {
		b.t.Fatal(err)
	}
	return b.get(loc.RequestURI())
}
