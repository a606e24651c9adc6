package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

// docsURL is the problem type base the test servers use.
const docsURL = "https://quorum.example.com/docs"

// logBuffer collects the server's JSON log; the server writes it from its
// own goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// entries decodes every log line.
func (b *logBuffer) entries(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b.buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, line)
		}
		out = append(out, e)
	}
	return out
}

// bundle is one API server over a real database, served over real HTTP.
type bundle struct {
	db     *store.DB
	clock  *storetest.Clock
	tokens *token.Store
	srv    *Server
	url    string
	logs   *logBuffer
	// repo is acme/widgets of account acme, and other is globex/gadgets of
	// account globex, which acme's tokens must never see.
	repo, other account.Repository
	// cover, when set, records every validated response (conformance test).
	cover *coverage
}

// setup opens a database, seeds two accounts' repositories and serves an
// API over it; change adjusts the default configuration.
func setup(t *testing.T, open func(testing.TB) *store.DB, change ...func(*Config)) *bundle {
	t.Helper()
	db := open(t)
	b := &bundle{
		db:    db,
		clock: storetest.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)),
		repo:  storetest.Repo(t, db, "acme", "acme", "widgets"),
		other: storetest.Repo(t, db, "globex", "globex", "gadgets"),
	}
	b.tokens = token.NewStore(db, b.clock.Now)
	b.serve(t, change...)
	return b
}

// serve (re)starts the bundle's API server with its own log.
func (b *bundle) serve(t *testing.T, change ...func(*Config)) {
	t.Helper()
	cfg := Config{DocsURL: docsURL, RateLimit: 10000, RateWindow: time.Hour, Version: "test"}
	for _, c := range change {
		c(&cfg)
	}
	b.logs = &logBuffer{}
	log := slog.New(slog.NewJSONHandler(b.logs, nil))
	srv, err := New(context.Background(), cfg, b.db, b.tokens, log, b.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	b.srv, b.url = srv, ts.URL
}

// token issues a token of account accountID with scopes, valid for ttl
// (0: forever), and returns its record and secret.
func (b *bundle) token(t *testing.T, accountID string, ttl time.Duration, scopes ...string) (token.Token, string) {
	t.Helper()
	tok, secret, err := b.tokens.Create(context.Background(), accountID, "test", scopes, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return tok, secret
}

// reader issues a forever token of acme with both read scopes.
func (b *bundle) reader(t *testing.T) string {
	t.Helper()
	_, secret := b.token(t, b.repo.AccountID, 0, token.ScopeReviewsRead, token.ScopeFindingsRead)
	return secret
}

// response is what the server answered.
type response struct {
	status int
	header http.Header
	body   []byte
}

// get sends GET path with the bearer secret (none when empty).
func (b *bundle) get(t *testing.T, path, secret string) response {
	t.Helper()
	var hdr []string
	if secret != "" {
		hdr = []string{"Authorization", "Bearer " + secret}
	}
	return b.do(t, http.MethodGet, path, hdr...)
}

// do sends a request with headers given as name, value pairs and checks the
// response against the OpenAPI document.
func (b *bundle) do(t *testing.T, method, path string, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, b.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	r := response{status: res.StatusCode, header: res.Header, body: body}
	key, err := conform(res.Request, r, nil)
	if err != nil {
		t.Errorf("%s %s: response does not conform to api/openapi.yaml: %v\nbody: %s", method, path, err, body)
	}
	b.cover.add(key)
	return r
}

// want fails the test unless the response has status code.
func (r response) want(t *testing.T, code int) response {
	t.Helper()
	if r.status != code {
		t.Fatalf("status %d, want %d; body: %s", r.status, code, r.body)
	}
	return r
}

// json decodes the body into v, refusing unknown fields.
func (r response) json(t *testing.T, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// problem decodes a problem+json body and checks its type matches its status.
func (r response) problem(t *testing.T, anchor string) problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json; body: %s", ct, r.body)
	}
	var p problem
	r.json(t, &p)
	if want := docsURL + "/api/errors#" + anchor; p.Type != want {
		t.Errorf("type %q, want %q", p.Type, want)
	}
	if p.Status != r.status {
		t.Errorf("body status %d, response status %d", p.Status, r.status)
	}
	if p.RequestID == "" || p.RequestID != r.header.Get("X-Request-Id") {
		t.Errorf("request_id %q, X-Request-Id %q: want the same, not empty", p.RequestID, r.header.Get("X-Request-Id"))
	}
	return p
}

// paramNames lists the names in a 400's invalid_params.
func paramNames(p problem) string {
	var names []string
	for _, ip := range p.InvalidParams {
		names = append(names, ip.Name)
	}
	return strings.Join(names, ",")
}

// listPath is GET /v1/reviews of repo with extra query parameters.
func listPath(repo account.Repository, extra string) string {
	p := fmt.Sprintf("/v1/reviews?owner=%s&repo=%s", repo.Owner, repo.Name)
	if extra != "" {
		p += "&" + extra
	}
	return p
}
