package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/quorum-review/quorum/internal/browsertest"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/webhook/verify"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the dashboard test's screenshots to docs/dashboard/ for docs/dashboard.md")

// signedReceiver is a loopback webhook endpoint that keeps what it is sent,
// with the secrets each body verified against.
type signedReceiver struct {
	mu      sync.Mutex
	secrets []string
	got     []received
	arrived chan struct{}
}

type received struct {
	event    string
	verified []string // the secrets it verified with
}

func newSignedReceiver(t *testing.T) (*signedReceiver, string) {
	r := &signedReceiver{arrived: make(chan struct{}, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var env struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal(body, &env)
		got := received{event: env.Event}
		r.mu.Lock()
		for _, s := range r.secrets {
			clone := req.Clone(req.Context())
			clone.Body = io.NopCloser(bytes.NewReader(body))
			if _, err := verify.Verify(clone, s, 5*time.Minute); err == nil {
				got.verified = append(got.verified, s)
			}
		}
		r.got = append(r.got, got)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		r.arrived <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *signedReceiver) trust(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secret)
}

// next waits for the next request and returns it.
func (r *signedReceiver) next(t *testing.T) received {
	t.Helper()
	select {
	case <-r.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the receiver got nothing within 60 s")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[len(r.got)-1]
}

// TestDashboardInTheBrowser drives the dashboard in Debian's Chromium, as
// a person would, against the real `quorum serve` over a database that
// `quorum review --save` wrote, with a real loopback webhook receiver.
func TestDashboardInTheBrowser(t *testing.T) {
	t.Parallel()
	data := storetest.SQLiteDir(t)
	dbArgs := []string{"--data-dir", data}
	_, errOut, code := reviewRun(t, "--repo", leakRepo(t), "--save", "--data-dir", data, "--owner", "acme", "--name", "widgets", "--pr", "7")
	if code != 1 || !strings.Contains(errOut, "saved review rev_") {
		t.Fatalf("quorum review --save: exit %d; stderr:\n%s", code, errOut)
	}
	base := serve(t, env(), append(dbArgs, "--webhook-allow-private")...)
	full := createToken(t, dbArgs, "browser", "reviews:read", "findings:read", "webhooks:read", "webhooks:write")
	readOnly := createToken(t, dbArgs, "read-only", "reviews:read", "webhooks:read")
	rcv, rcvURL := newSignedReceiver(t)

	shots := t.TempDir()
	if *updateScreenshots {
		shots = filepath.Join("..", "..", "docs", "dashboard")
	}
	shot := func(b *browsertest.Browser, name string) {
		t.Helper()
		path := filepath.Join(shots, name+".png")
		b.Screenshot(path)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := png.Decode(f); err != nil {
			t.Fatalf("screenshot %s is not a PNG: %v", name, err)
		}
	}

	b := browsertest.New(t)

	// Signed out, / leads to the sign-in form. It is used from the
	// keyboard alone: Tab reaches the skip link first, then the Token
	// field, with a visible focus ring; Enter signs in.
	b.Open(base+"/", "#token")
	if got := b.Tab(); got != "skip" {
		t.Errorf("the first Tab focuses %q, want the skip link", got)
	}
	if outline := browsertest.Eval[string](b, "getComputedStyle(document.activeElement).outlineStyle"); outline == "none" {
		t.Error("the focused skip link has no visible outline")
	}
	for i := 0; ; i++ {
		if got := b.Tab(); got == "token" {
			break
		}
		if i == 5 {
			t.Fatal("Tab never reaches the Token field")
		}
	}
	if outline := browsertest.Eval[string](b, "getComputedStyle(document.activeElement).outlineStyle"); outline == "none" {
		t.Error("the focused Token field has no visible outline")
	}
	if label := b.Text(`label[for="token"]`); label != "Token" {
		t.Errorf("the token field's label is %q", label)
	}
	shot(b, "sign-in")
	b.Fill("#token", full)
	b.Press(kb.Enter)

	// The review quorum review --save made, and its finding.
	b.WaitVisible("table")
	if got := b.Text("main"); !strings.Contains(got, "acme/widgets") || !strings.Contains(got, "#7") || !strings.Contains(got, "request_changes") {
		t.Fatalf("the repositories page does not show the saved review:\n%s", got)
	}
	shot(b, "repositories")
	b.Open(base+"/dashboard/reviews?repo=acme/widgets&verdict=request_changes", "#reviews")
	shot(b, "reviews")
	b.Open(base+"/dashboard/repositories", "table")
	b.Click(`a[href^="/dashboard/reviews/rev_"]`)
	b.WaitVisible("#review-verdict")
	if got := b.Text("#review-verdict"); !strings.Contains(got, "request_changes") {
		t.Errorf("the review's verdict reads %q", got)
	}
	if got := b.Text("#findings"); !strings.Contains(got, "config/app.ini") {
		t.Errorf("the findings do not name the file with the leaked key:\n%s", got)
	}
	shot(b, "review")
	b.SetViewport(360, 740)
	if w := browsertest.Eval[float64](b, "document.documentElement.scrollWidth"); w > 360 {
		t.Errorf("at 360 px wide the review page is %v px wide: it scrolls sideways", w)
	}
	shot(b, "review-360px")
	b.SetViewport(1280, 800)
	b.Click(`a[id$="-link"][href^="/dashboard/findings/"]`)
	b.WaitVisible("#finding-headline")
	if got := b.Text("#finding-rule"); got == "" {
		t.Error("the finding page names no rule")
	}
	shot(b, "finding")

	// An endpoint: created, its secret shown once.
	b.Open(base+"/dashboard/webhooks", "#create-endpoint")
	b.Click("#create-endpoint")
	b.Fill("#url", rcvURL+"/hook")
	b.Click("#register-endpoint")
	b.WaitVisible("#endpoint-secret")
	secret := b.Text("#endpoint-secret")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the new endpoint's secret reads %q", secret)
	}
	// The copy button (the page's own script) copies it, or selects it
	// where the clipboard is not allowed, and says which.
	b.Click(`button[data-copy="endpoint-secret"]`)
	b.WaitFor("#endpoint-secret-status:not(:empty)")
	shot(b, "endpoint-created")
	rcv.trust(secret)
	b.Click("#endpoint-link")
	b.WaitVisible("#send-ping")
	if strings.Contains(b.Text("body"), secret) {
		t.Fatal("the endpoint's page shows the secret again")
	}
	shot(b, "endpoint")

	// A ping reaches the loopback signedReceiver, signed with that secret; the
	// delivery is on the endpoint's deliveries page, and redelivered.
	b.Click("#send-ping")
	if got := rcv.next(t); got.event != "ping" || len(got.verified) != 1 {
		t.Fatalf("the receiver got %+v, want a ping signed with the shown secret", got)
	}
	b.WaitVisible(`tr[id^="delivery-"]`)
	deliveries := b.Location()
	for i := 0; !strings.Contains(b.Text(`tr[id^="delivery-"]`), "succeeded"); i++ {
		if i == 100 {
			t.Fatalf("the ping's delivery is not shown succeeded: %s", b.Text(`tr[id^="delivery-"]`))
		}
		time.Sleep(100 * time.Millisecond) // the worker records the attempt after the signedReceiver answers
		b.Open(deliveries, `tr[id^="delivery-"]`)
	}
	shot(b, "deliveries")
	b.Click(`tr[id^="delivery-"] a`)
	b.WaitVisible("#attempt-1")
	if got := b.Text("#attempt-1"); !strings.Contains(got, "204") {
		t.Errorf("the first attempt does not show the signedReceiver's 204: %q", got)
	}
	b.Click("#redeliver")
	b.WaitVisible("#notice")
	if got := rcv.next(t); got.event != "ping" || len(got.verified) != 1 {
		t.Fatalf("the redelivery reached the signedReceiver as %+v", got)
	}
	shot(b, "delivery")

	// Rotating the secret shows the new one once, and the overlap during
	// which deliveries carry both signatures.
	b.Open(base+"/dashboard/webhooks", `tr[id^="endpoint-"] a`)
	b.Click(`tr[id^="endpoint-"] a`)
	b.Click("#rotate-secret")
	b.WaitVisible("#previous-secret-expires")
	if d := b.Dialogs(); len(d) != 1 || !strings.Contains(d[0], "new secret") {
		t.Errorf("rotating asked %q, want one confirmation", d)
	}
	rotated := b.Text("#endpoint-secret")
	if rotated == secret || !strings.HasPrefix(rotated, "whsec_") {
		t.Fatalf("the rotated secret reads %q", rotated)
	}
	shot(b, "secret-rotated")
	rcv.trust(rotated)
	b.Click("#endpoint-link")
	b.Click("#send-ping")
	b.WaitVisible(`tr[id^="delivery-"]`)
	if got := rcv.next(t); len(got.verified) != 2 {
		t.Fatalf("a ping during the overlap verified with %d of the two secrets, want both", len(got.verified))
	}

	// Signing out ends the session.
	b.Click("#sign-out")
	b.WaitVisible("#sign-in-notice")
	b.Open(base+"/dashboard/webhooks", "#token")

	// Charts of the repository: SVG with a table behind each.
	b.Fill("#token", full)
	b.Click("#sign-in")
	b.WaitVisible("#create-endpoint")
	b.Open(base+"/dashboard/insights?repo=acme/widgets", "figure.chart svg")
	if n := browsertest.Eval[float64](b, `document.querySelectorAll("figure.chart table").length`); n < 1 {
		t.Error("the charts have no table behind them")
	}
	shot(b, "insights")

	// Revoking the token ends the session at the next page.
	quorumOK(t, append([]string{"token", "revoke", tokenID(t, dbArgs, "browser")}, dbArgs...)...)
	b.Open(base+"/dashboard/webhooks", "#token")

	// A token without webhooks:write sees no create button, and its
	// session's form POST is refused.
	b.Fill("#token", readOnly)
	b.Click("#sign-in")
	b.WaitVisible("#sign-out") // signed in: the sign-in page has no sign-out button
	b.Open(base+"/dashboard/webhooks", "main h1")
	if n := browsertest.Eval[float64](b, `document.querySelectorAll("#create-endpoint").length`); n != 0 {
		t.Error("a token without webhooks:write is shown the New endpoint link")
	}
	csrf := browsertest.Eval[string](b, `document.querySelector('input[name="csrf"]').value`)
	cookie := sessionCookie(t, b)
	res := postForm(t, base+"/dashboard/webhooks", cookie, "same-origin", url.Values{"csrf": {csrf}, "url": {rcvURL}})
	if res != http.StatusForbidden {
		t.Errorf("the create form's POST with a read-only token: %d, want 403", res)
	}
	// A cross-site POST, even with the session's cookie, is refused.
	if res := postForm(t, base+"/dashboard/sign-out", cookie, "cross-site", url.Values{}); res != http.StatusForbidden {
		t.Errorf("a cross-site POST without the CSRF token: %d, want 403", res)
	}

	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the pages logged errors (CSP violations among them): %v", errs)
	}
}

// createToken issues a token through the CLI and returns it.
func createToken(t *testing.T, dbArgs []string, name string, scopes ...string) string {
	t.Helper()
	args := []string{"token", "create", "--account", "acme", "--name", name}
	for _, s := range scopes {
		args = append(args, "--scope", s)
	}
	out := quorumOK(t, append(args, dbArgs...)...)
	return strings.TrimSpace(strings.Split(out, "\n")[0])
}

// tokenID is the id of the token named name.
func tokenID(t *testing.T, dbArgs []string, name string) string {
	t.Helper()
	var listed []struct{ ID, Name string }
	if err := json.Unmarshal([]byte(quorumOK(t, append([]string{"token", "list", "--json"}, dbArgs...)...)), &listed); err != nil {
		t.Fatal(err)
	}
	for _, tok := range listed {
		if tok.Name == name {
			return tok.ID
		}
	}
	t.Fatalf("no token named %s", name)
	return ""
}

func quorumOK(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := quorum(t, env(), args...)
	if err != nil {
		t.Fatalf("quorum %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

var cookieRE = regexp.MustCompile(`^quorum_session=`)

// sessionCookie is the browser's session cookie, as a Cookie header.
func sessionCookie(t *testing.T, b *browsertest.Browser) string {
	t.Helper()
	for _, c := range browsertest.Cookies(b) {
		if cookieRE.MatchString(c.Name + "=") {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatal("the browser holds no session cookie")
	return ""
}

// postForm posts a form with a session cookie, as a page of fetchSite's
// relation to the dashboard would, and returns the status.
func postForm(t *testing.T, target, cookie, fetchSite string, form url.Values) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", cookie)
	req.Header.Set("Sec-Fetch-Site", fetchSite)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
