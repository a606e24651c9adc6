package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/github"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine to write while
// the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env makes a getenv from pairs.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// quorum runs the CLI as main would and returns its output.
func quorum(t *testing.T, getenv func(string) string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, getenv, &out, &errb)
	return out.String(), errb.String(), err
}

var servingRE = regexp.MustCompile(`quorum serving on (http://\S+)`)

// serve starts `quorum serve` on a free port and returns its base URL once
// /healthz answers. The server stops at test end, and must stop cleanly.
func serve(t *testing.T, getenv func(string) string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...), getenv, &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v; stderr:\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("serve did not stop within 30 s")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v; stderr:\n%s", err, stderr.String())
		default:
		}
		if m := servingRE.FindStringSubmatch(stdout.String()); m != nil {
			resp, err := http.Get(m[1] + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return m[1]
				}
			}
		}
		time.Sleep(10 * time.Millisecond) // polling for readiness, not waiting on time
	}
	t.Fatalf("serve not ready within 30 s; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	return ""
}

func get(t *testing.T, url, tok string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: decode: %v", url, err)
	}
	return resp.StatusCode, body
}

// TestEndToEnd serves on each backend, issues a token through the CLI,
// reads a stored review over real HTTP, and revokes the token.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var dbArgs []string
			cfg := store.Config{}
			if backend == "postgres" {
				cfg.URL = storetest.PostgresURL(t)
				dbArgs = []string{"--database-url", cfg.URL}
			} else {
				cfg.DataDir = t.TempDir()
				dbArgs = []string{"--data-dir", cfg.DataDir}
			}
			base := serve(t, env(), dbArgs...)

			tokOut, tokErr, err := quorum(t, env(), append([]string{"token", "create", "--account", "acme", "--scope", "reviews:read", "--scope", "findings:read", "--name", "e2e"}, dbArgs...)...)
			if err != nil {
				t.Fatalf("token create: %v\n%s", err, tokErr)
			}
			lines := strings.Split(strings.TrimRight(tokOut, "\n"), "\n")
			tok := lines[0]
			if len(lines) != 1 || !strings.HasPrefix(tok, "qrm_") {
				t.Fatalf("token create stdout = %q, want the token alone on one line", tokOut)
			}
			if strings.Contains(tokErr, tok) {
				t.Errorf("token create printed the secret on stderr too")
			}

			// The pipeline of a later issue writes reviews; here the test
			// writes one through the store, as another process would.
			db, err := store.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			repo := storetest.Repo(t, db, "acme", "acme", "widgets")
			rev := storetest.Review(t, db, repo, 7, 20, time.Now())

			status, body := get(t, base+"/v1/reviews?owner=acme&repo=widgets&pr=7", tok)
			if status != http.StatusOK {
				t.Fatalf("list: status %d: %v", status, body)
			}
			reviews := body["reviews"].([]any)
			if len(reviews) != 1 || reviews[0].(map[string]any)["id"] != rev.ID || body["next_cursor"] != nil {
				t.Fatalf("list = %v, want the one review %s", body, rev.ID)
			}
			status, body = get(t, base+"/v1/reviews/"+rev.ID, tok)
			if status != http.StatusOK || len(body["findings"].([]any)) != 20 {
				t.Fatalf("get review: %d %v", status, body)
			}
			fid := rev.Findings[0].ID
			status, body = get(t, base+"/v1/findings/"+fid, tok)
			if status != http.StatusOK || body["review_id"] != rev.ID {
				t.Fatalf("get finding: %d %v", status, body)
			}

			// Revocation through the CLI takes effect on the next request.
			listOut, _, err := quorum(t, env(), append([]string{"token", "list", "--json"}, dbArgs...)...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(listOut, tok) {
				t.Fatalf("token list shows the secret")
			}
			var listed []struct {
				ID, Status string
			}
			if err := json.Unmarshal([]byte(listOut), &listed); err != nil || len(listed) != 1 || listed[0].Status != "active" {
				t.Fatalf("token list --json = %s (%v)", listOut, err)
			}
			if _, stderr, err := quorum(t, env(), append([]string{"token", "revoke", listed[0].ID}, dbArgs...)...); err != nil {
				t.Fatalf("token revoke: %v %s", err, stderr)
			}
			status, body = get(t, base+"/v1/reviews/"+rev.ID, tok)
			if status != http.StatusUnauthorized || body["title"] != "invalid PAT" {
				t.Fatalf("after revoke: %d %v, want 401 invalid PAT", status, body)
			}

			// serve started River: its periodic maintenance job is worked.
			waitJobCompleted(t, db, "store.optimize")
		})
	}
}

func TestServeReadsEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := serve(t, env("QUORUM_DATA_DIR", dir, "QUORUM_DOCS_URL", "https://docs.example.test/quorum", "QUORUM_RATE_LIMIT", "7"))
	if _, err := os.Stat(filepath.Join(dir, "quorum.db")); err != nil {
		t.Fatalf("QUORUM_DATA_DIR not used: %v", err)
	}
	resp, err := http.Get(base + "/v1/reviews")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct{ Type string }
	json.NewDecoder(resp.Body).Decode(&p)
	if p.Type != "https://docs.example.test/quorum/api/errors#unauthorized" {
		t.Errorf("problem type = %q, want QUORUM_DOCS_URL's", p.Type)
	}
	if got := resp.Header.Get("RateLimit-Limit"); got != "7" {
		t.Errorf("RateLimit-Limit = %q, want QUORUM_RATE_LIMIT's 7", got)
	}
}

func TestFlagBeatsEnvironment(t *testing.T) {
	t.Parallel()
	envDir, flagDir := t.TempDir(), t.TempDir()
	if _, _, err := quorum(t, env("QUORUM_DATA_DIR", envDir), "migrate", "--data-dir", flagDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(flagDir, "quorum.db")); err != nil {
		t.Errorf("--data-dir not used: %v", err)
	}
	if _, err := os.Stat(filepath.Join(envDir, "quorum.db")); err == nil {
		t.Errorf("environment used although the flag was given")
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out1, _, err := quorum(t, env(), "migrate", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out1, "applied 0001_init") {
		t.Errorf("first migrate output = %q, want it to apply 0001_init", out1)
	}
	out2, _, err := quorum(t, env(), "migrate", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out2, "applied") {
		t.Errorf("second migrate applied something: %q", out2)
	}
}

// TestHelp checks every command explains itself and every flag it has.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"serve", "--help"}, {"migrate", "--help"}, {"token", "create", "--help"},
		{"token", "list", "--help"}, {"token", "revoke", "--help"}, {"token", "--help"}, {"--help"}, {"backup", "--help"},
		{"version", "--help"},
	} {
		out, _, err := quorum(t, env(), args...)
		if err != nil && !errors.Is(err, errHelp) {
			t.Errorf("%v: %v", args, err)
		}
		if !strings.Contains(out, "Usage: quorum") {
			t.Errorf("%v: no usage on stdout: %q", args, out)
		}
	}
	out, _, _ := quorum(t, env(), "serve", "--help")
	for _, want := range []string{"--data-dir", "QUORUM_DATA_DIR", "--database-url", "QUORUM_DATABASE_URL", "--addr", "QUORUM_ADDR",
		"--public-url", "--docs-url", "--rate-limit", "--rate-limit-window", "--role", "--log-level"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %s", want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := storetest.SQLiteDir(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"serve", "--no-such-flag"}, "no-such-flag"},
		{[]string{"serve", "--role", "api", "--data-dir", dir}, "needs --database-url"},
		{[]string{"serve", "--data-dir", dir, "--webhook-concurrency", "-1"}, "--webhook-concurrency"},
		{[]string{"serve", "--data-dir", dir, "--workers", "0"}, "--workers"},
		{[]string{"serve", "--data-dir", dir, "--dashboard-session-ttl", "-1h"}, "--dashboard-session-ttl must be at least 1m"},
		{[]string{"serve", "--data-dir", dir, "--review-memory", "lots"}, `--review-memory: "lots" is not a size`},
		{[]string{"serve", "--data-dir", dir, "--review-memory", "4XB"}, `--review-memory: "4XB" is not a size`},
		{[]string{"serve", "--data-dir", dir, "--review-memory", "0"}, "--review-memory: \"0\": a size must be at least 1 byte"},
		{[]string{"serve", "--data-dir", dir, "--review-memory", "-2GiB"}, "a size must be at least 1 byte"},
		{[]string{"token", "create", "--data-dir", dir, "--scope", "reviews:read"}, "--account is required"},
		{[]string{"token", "create", "--data-dir", dir, "--account", "a"}, "at least one --scope"},
		{[]string{"token", "create", "--data-dir", dir, "--account", "a", "--scope", "admin"}, `unknown scope "admin"`},
		{[]string{"token", "create", "--data-dir", dir, "--account", "a", "--scope", "reviews:read", "--expires", "soon"}, "--expires"},
		{[]string{"token", "revoke", "--data-dir", dir}, "exactly one token id"},
		{[]string{"token", "revoke", "--data-dir", dir, "tok_a", "tok_b"}, "unexpected argument"},
		// An id that names nothing is a mistake on the command line too.
		{[]string{"token", "revoke", "--data-dir", dir, "tok_nope"}, "no token tok_nope"},
		{[]string{"token", "list", "--data-dir", dir, "--account", "nobody-here"}, "no account"},
		{[]string{"version", "extra"}, "unexpected argument"},
		{[]string{"backup", "--data-dir", dir}, "--to is required"},
		{[]string{"backup", "--to", filepath.Join(dir, "b.db"), "--database-url", "postgres://x@127.0.0.1/db"}, "pg_dump"},
	} {
		_, _, err := quorum(t, env(), tc.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
		if code := exitCode(err, &bytes.Buffer{}); code != 2 {
			t.Errorf("%v: exit code %d, want 2", tc.args, code)
		}
	}
	_, _, err := quorum(t, env("QUORUM_REVIEW_MEMORY", "2 gigs"), "serve", "--data-dir", dir)
	if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), `--review-memory: "2 gigs" is not a size`) {
		t.Errorf("QUORUM_REVIEW_MEMORY=2 gigs: err = %v, want a usage error naming --review-memory", err)
	}
	// A bad environment value is reported with the variable's name.
	_, _, err = quorum(t, env("QUORUM_RATE_LIMIT", "many"), "serve", "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "QUORUM_RATE_LIMIT") {
		t.Errorf("bad env: err = %v, want it to name QUORUM_RATE_LIMIT", err)
	}
}

func TestTokenCreateJSONAndExpiry(t *testing.T) {
	t.Parallel()
	dir := storetest.SQLiteDir(t)
	out, _, err := quorum(t, env(), "token", "create", "--data-dir", dir, "--account", "acme", "--scope", "reviews:read,findings:read", "--expires", "30d", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Token     string    `json:"token"`
		ID        string    `json:"id"`
		Scopes    []string  `json:"scopes"`
		ExpiresAt time.Time `json:"expires_at"`
		Status    string    `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output %q: %v", out, err)
	}
	if !strings.HasPrefix(got.Token, "qrm_") || !strings.HasPrefix(got.ID, "tok_") || len(got.Scopes) != 2 || got.Status != "active" {
		t.Errorf("--json = %+v", got)
	}
	if d := time.Until(got.ExpiresAt); d < 29*24*time.Hour || d > 31*24*time.Hour {
		t.Errorf("expires in %s, want 30 days", d)
	}
	// The stored database has no trace of the secret.
	raw, err := os.ReadFile(filepath.Join(dir, "quorum.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(filepath.Join(dir, "quorum.db-wal"))
	if bytes.Contains(raw, []byte(got.Token)) || bytes.Contains(wal, []byte(got.Token)) {
		t.Errorf("the token secret is stored in the database file")
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, _, err := quorum(t, env(), "version")
	if err != nil || !strings.HasPrefix(out, "quorum ") {
		t.Errorf("version = %q, %v", out, err)
	}
}

func TestParseTTL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"": 0, "never": 0, "90d": 90 * 24 * time.Hour, "12h": 12 * time.Hour, "1h30m": 90 * time.Minute} {
		got, err := parseTTL(in)
		if err != nil || got != want {
			t.Errorf("parseTTL(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// Zero and lifetimes too long to hold are errors, not "never" (issue
	// 10 item 8): a token that never expires is asked for by omitting
	// --expires, or with never.
	for _, in := range []string{"soon", "-1h", "0d", "1.5d", "d", "0", "0s", "1000000d", "36500001d", "99999999999h", "101y", "36501d"} {
		if _, err := parseTTL(in); err == nil {
			t.Errorf("parseTTL(%q) accepted", in)
		}
	}
}

func TestStrayArgumentsRejected(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"migrate", "extra"}, {"serve", "now"}, {"token", "list", "x"}, {"token", "revoke", "tok_a", "tok_b"}} {
		_, _, err := quorum(t, env(), append(args, "--data-dir", t.TempDir())...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

// waitJobCompleted polls until a job of kind has completed.
func waitJobCompleted(t *testing.T, db *store.DB, kind string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := db.Reader().QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'completed'`, kind).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s job completed within 30 s", kind)
		}
		time.Sleep(20 * time.Millisecond) // polling another process's progress
	}
}

// TestSplitRoles runs an api process and a worker process on one
// PostgreSQL: the api serves, the worker works jobs and answers probes only.
func TestSplitRoles(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	api := serve(t, env(), "--database-url", url, "--role", "api")
	worker := serve(t, env(), "--database-url", url, "--role", "worker")

	if status, body := get(t, api+"/v1/reviews?owner=a&repo=b", ""); status != http.StatusUnauthorized {
		t.Errorf("api role: %d %v, want 401 from the API", status, body)
	}
	resp, err := http.Get(worker + "/v1/reviews?owner=a&repo=b")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("worker role served the API: %d", resp.StatusCode)
	}
	if status, _ := get(t, worker+"/readyz", ""); status != http.StatusOK {
		t.Errorf("worker /readyz = %d", status)
	}
	db, err := store.Open(context.Background(), store.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitJobCompleted(t, db, "store.optimize")
}

// TestServeWorksReviewJobs enqueues a review as the GitHub intake will, and
// the serving process's worker reviews the head with the built-in
// specialists and stores it for the API.
func TestServeWorksReviewJobs(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n", "app.go": "package app\n\nfunc Hello() string { return \"hi\" }\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"app.go": "package app\n\nimport \"fmt\"\n\nfunc Hello() string { return \"hi\" }\n\nfunc Greet(name string) string {\n\treturn fmt.Sprintf(\"hello %d\", name)\n}\n"})
	head := r.Commit("head")

	full := serveReview(t, env(), r.Dir, base, head)
	// go vet's printf check finds %d with a string on the added line.
	if !hasFinding(full, "logic", "app.go", 8) {
		t.Errorf("no logic finding on app.go:8 in %v", full["findings"])
	}
}

// hasFinding reports whether a review as the API shows it has a finding of
// the specialist on path:line.
func hasFinding(full map[string]any, specialist, path string, line int) bool {
	for _, f := range full["findings"].([]any) {
		f := f.(map[string]any)
		if f["specialist"] == specialist && f["path"] == path && f["line"] == float64(line) {
			return true
		}
	}
	return false
}

// serveReview starts quorum serve with getenv and args, enqueues a review
// of repoDir's base..head as the GitHub intake does, and returns the stored
// review as GET /v1/reviews/{id} shows it, each finding with the provenance
// GET /v1/findings/{id} shows under "provenance".
func serveReview(t *testing.T, getenv func(string) string, repoDir, base, head string, args ...string) map[string]any {
	t.Helper()
	return serveReviews(t, getenv, repoDir, base, []string{head}, args...)[0]
}

// serveReviews is serveReview of pushes to one pull request: it enqueues
// the review of each head once the previous head's review is stored, and
// returns the stored reviews in order.
func serveReviews(t *testing.T, getenv func(string) string, repoDir, base string, heads []string, args ...string) []map[string]any {
	t.Helper()
	dir := storetest.SQLiteDir(t)
	base_ := serve(t, getenv, append([]string{"--data-dir", dir}, args...)...)
	db, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ConfigureJobs(store.JobsConfig{}); err != nil { // insert-only, as an api process
		t.Fatal(err)
	}
	repo := storetest.Repo(t, db, "acme", "acme", "app")
	tok, _, err := quorum(t, env(), "token", "create", "--data-dir", dir, "--account", "acme", "--scope", "reviews:read,findings:read")
	if err != nil {
		t.Fatal(err)
	}
	tok = strings.TrimSpace(tok)
	var out []map[string]any
	for _, head := range heads {
		err = db.InTx(context.Background(), func(tx store.Tx) error {
			return pipeline.Enqueue(context.Background(), tx, pipeline.ReviewArgs{AccountID: repo.AccountID, RepositoryID: repo.ID,
				Owner: "acme", Repo: "app", PR: 3, Base: base, Head: head, Source: "local", Location: repoDir}, time.Now())
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, storedReview(t, base_, tok, head))
	}
	return out
}

// storedReview waits for the review of head to be stored and returns it
// as serveReview does.
func storedReview(t *testing.T, base, tok, head string) map[string]any {
	t.Helper()
	// A bound for a review that hangs, wide enough for the real model
	// server on a busy machine.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		status, body := get(t, base+"/v1/reviews?owner=acme&repo=app&pr=3", tok)
		if status != http.StatusOK {
			t.Fatalf("list: %d %v", status, body)
		}
		for _, r := range body["reviews"].([]any) {
			rev := r.(map[string]any)
			if rev["head_sha"] != head {
				continue
			}
			status, full := get(t, base+"/v1/reviews/"+rev["id"].(string), tok)
			if status != http.StatusOK {
				t.Fatal(full)
			}
			fs, _ := full["findings"].([]any)
			for _, f := range fs {
				f := f.(map[string]any)
				status, d := get(t, base+"/v1/findings/"+f["id"].(string), tok)
				if status != http.StatusOK {
					t.Fatalf("finding %v: %d %v", f["id"], status, d)
				}
				f["provenance"] = d["context"].(map[string]any)["provenance"]
			}
			return full
		}
		if time.Now().After(deadline) {
			t.Fatalf("the review of %s was not stored within 3 minutes", head)
		}
		time.Sleep(50 * time.Millisecond) // polling another goroutine's progress
	}
}

// TestSafeRescueAfter: by default a job is presumed lost a minute after
// the longest time limit of the kinds serve works, never before River's
// default job timeout (plus the minute), and flags that lengthen a kind's
// limit lengthen it.
func TestSafeRescueAfter(t *testing.T) {
	t.Parallel()
	withApp := &platform{jobLimits: []time.Duration{github.PostTimeout}}
	for _, tc := range []struct {
		name                   string
		specialist, webhookLim time.Duration
		gh                     *platform
		want                   time.Duration
	}{
		// Reviews: 2×2m + 1m; posts: 5m; deliveries: 10s + 30s.
		{"defaults", pipeline.DefaultTimeout, webhook.DefaultTimeout, nil, 6 * time.Minute},
		{"defaults with the App", pipeline.DefaultTimeout, webhook.DefaultTimeout, withApp, 6 * time.Minute},
		{"long specialists", 10 * time.Minute, webhook.DefaultTimeout, withApp, 22 * time.Minute},
		{"long webhook attempts", time.Second, 20 * time.Minute, nil, 20*time.Minute + 30*time.Second + time.Minute},
		// Short reviews: the App's 5-minute posts are the longest.
		{"short reviews with the App", time.Second, time.Second, withApp, 6 * time.Minute},
		{"short reviews", time.Second, time.Second, nil, 2*time.Minute + 2*time.Second},
		{"everything short", time.Millisecond, time.Millisecond, nil, 2*time.Minute + 2*time.Millisecond},
	} {
		if got := safeRescueAfter(jobLimits(tc.specialist, tc.webhookLim, tc.gh)...); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := safeRescueAfter(); got != river.JobTimeoutDefault+rescueMargin {
		t.Errorf("no limits: %v, want River's default job timeout + the margin", got)
	}
}

// TestWarnsOfReadableDatabase: opening a database that others can read
// logs a warning naming it (issue 10 item 15).
func TestWarnsOfReadableDatabase(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	url := ""
	d, err := dbConfig{dataDir: &dir, url: &url}.open(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"database readable by other users`) || !strings.Contains(logs.String(), dir+" (-rwxr-xr-x)") {
		t.Errorf("no warning for the 0755 data directory:\n%s", logs.String())
	}
}

// TestSmallCLIDefects: one default in --job-rescue-after's help; a login
// GitHub would not allow is a usage error; creating a token for an
// account nobody had says so on stderr (issue 10 item 8).
func TestSmallCLIDefects(t *testing.T) {
	t.Parallel()
	help, _, err := quorum(t, env(), "serve", "--help")
	if !errors.Is(err, errHelp) {
		t.Fatal(err)
	}
	_, rescue, _ := strings.Cut(help, "--job-rescue-after")
	rescue, _, _ = strings.Cut(rescue, "\n  --")
	if n := strings.Count(rescue, "(default"); n != 1 {
		t.Errorf("--job-rescue-after's help says default %d times:\n%s", n, rescue)
	}

	dir := storetest.SQLiteDir(t)
	for _, args := range [][]string{
		{"token", "create", "--account", "ac me/../x", "--scope", "reviews:read"},
		{"webhook", "create", "--account", "ac me/../x", "--url", "https://example.com/h"},
	} {
		_, _, err := quorum(t, env(), append(args, "--data-dir", dir)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "GitHub logins are") {
			t.Errorf("%v: %v, want a usage error naming GitHub's login rules", args, err)
		}
	}
	_, errOut, err := quorum(t, env(), "token", "create", "--account", "acmee", "--scope", "reviews:read", "--data-dir", dir)
	if err != nil || !strings.Contains(errOut, "created account acmee") {
		t.Errorf("a token for a new account: %v, stderr %q; want it to say the account was created", err, errOut)
	}
	_, errOut, err = quorum(t, env(), "token", "create", "--account", "ACMEE", "--scope", "reviews:read", "--data-dir", dir)
	if err != nil || strings.Contains(errOut, "created account") {
		t.Errorf("a token for a known account: %v, stderr %q; want no account created", err, errOut)
	}
}

// TestLogDurationsHaveUnits: durations in the JSON log carry their unit
// (issue 10 item 8: they were unitless nanoseconds).
func TestLogDurationsHaveUnits(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log, err := newLogger(&b, "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("x", "duration", 1500*time.Millisecond, slog.Duration("wait", 250*time.Microsecond))
	if !strings.Contains(b.String(), `"duration":"1.5s"`) || !strings.Contains(b.String(), `"wait":"250µs"`) {
		t.Errorf("log line %s, want durations with units", b.String())
	}
}

// TestTokenListShowsRecentUse: a token used a moment ago by a running
// server shows its last use in token list within the flush interval
// (issue 10 item 8: it showed "-" for up to 30 s).
func TestTokenListShowsRecentUse(t *testing.T) {
	t.Parallel()
	dir := storetest.SQLiteDir(t)
	base := serve(t, env(), "--data-dir", dir)
	tok, errOut, err := quorum(t, env(), "token", "create", "--account", "acme", "--scope", "reviews:read", "--data-dir", dir)
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, errOut)
	}
	if status, body := get(t, base+"/v1/reviews?owner=acme&repo=widgets", strings.TrimSpace(tok)); status != 404 { // authenticated: no such repository
		t.Fatalf("GET reviews: %d %v", status, body)
	}
	used := time.Now()
	for {
		out, _, err := quorum(t, env(), "token", "list", "--json", "--data-dir", dir)
		if err != nil {
			t.Fatal(err)
		}
		var list []struct {
			LastUsedAt *time.Time `json:"last_used_at"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
			t.Fatalf("token list --json = %q (%v)", out, err)
		}
		if list[0].LastUsedAt != nil {
			break
		}
		if time.Since(used) > token.FlushInterval+3*time.Second {
			t.Fatalf("no last use %s after the token was used", time.Since(used).Round(time.Second))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestMigrateRebuildsRollups: `quorum migrate --rebuild-rollups` counts a
// review an older replica saved without its rollup.
func TestMigrateRebuildsRollups(t *testing.T) {
	t.Parallel()
	data := storetest.SQLiteDir(t)
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	repo := storetest.Repo(t, db, "acme", "acme", "widgets")
	storetest.Review(t, db, repo, 1, 2, time.Now())
	if _, err := db.Writer().Exec(ctx, `DELETE FROM review_days`); err != nil {
		t.Fatal(err)
	}
	out := quorumOK(t, "migrate", "--rebuild-rollups", "--data-dir", data)
	if !strings.Contains(out, "recounted the daily rollups") {
		t.Errorf("migrate --rebuild-rollups printed:\n%s", out)
	}
	var reviews int
	if err := db.Reader().QueryRow(ctx, `SELECT COALESCE(SUM(approve + comment + request_changes), 0) FROM review_days`).Scan(&reviews); err != nil || reviews != 1 {
		t.Fatalf("the rollups count %d reviews (%v), want the one stored", reviews, err)
	}
	db.Close()
}
