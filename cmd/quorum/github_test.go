package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/github/githubtest"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

const testWebhookSecret = "whsec-of-the-test-app"

// appKey writes a new RSA private key, as GitHub hands an App's out, and
// returns its path and PEM.
func appKey(t *testing.T) (string, []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	path := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(path, p, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, p
}

// postWebhook sends a GitHub delivery signed with secret.
func postWebhook(t *testing.T, url, secret, name, delivery string, body []byte) (int, string) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, url+"/github/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", name)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type") + " " + string(raw)
}

func webhookExample(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "github", "intake", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServeWithoutGitHubApp: without the App's flags the webhook path is
// the API's 404, and everything else serves as before.
func TestServeWithoutGitHubApp(t *testing.T) {
	t.Parallel()
	url := serve(t, env(), "--data-dir", storetest.SQLiteDir(t))
	status, body := postWebhook(t, url, testWebhookSecret, "ping", "d-1", webhookExample(t, "ping.json"))
	if status != http.StatusNotFound || !strings.HasPrefix(body, "application/problem+json") {
		t.Errorf("POST /github/webhook without the App: %d %s, want 404 problem+json", status, body)
	}
	if status, _ := get(t, url+"/healthz", ""); status != http.StatusOK {
		t.Errorf("/healthz = %d", status)
	}
}

// TestServeGitHubAppFlags: the App's three settings go together.
func TestServeGitHubAppFlags(t *testing.T) {
	t.Parallel()
	keyFile, _ := appKey(t)
	for _, args := range [][]string{
		{"--github-app-id", "12345"},
		{"--github-app-id", "12345", "--github-private-key-file", keyFile},
		{"--github-webhook-secret", "s"},
		{"--github-app-id", "12345", "--github-private-key-file", filepath.Join(t.TempDir(), "missing.pem"), "--github-webhook-secret", "s"},
		{"--github-app-id", "12345", "--github-private-key-file", keyFile, "--github-webhook-secret", "s", "--github-max-comments", "0"},
	} {
		_, _, err := quorum(t, env(), append([]string{"serve", "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0"}, args...)...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("serve %v: %v, want a usage error", args, err)
		}
	}
}

// TestServeGitHubCacheDir: --github-cache-dir (or its variable) names the
// fetch cache; without it the cache is beside the SQLite database, or in
// the user's cache directory on PostgreSQL, where there is no data
// directory. serve --help explains it.
func TestServeGitHubCacheDir(t *testing.T) {
	t.Parallel()
	keyFile, _ := appKey(t)
	userCache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("the default on PostgreSQL needs a user cache directory: %v", err)
	}
	dataDir, flagDir, envDir := t.TempDir(), t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		name   string
		getenv func(string) string
		args   []string
		want   string
	}{
		{"flag", env("QUORUM_GITHUB_CACHE_DIR", envDir), []string{"--data-dir", dataDir, "--github-cache-dir", flagDir}, flagDir},
		{"environment", env("QUORUM_GITHUB_CACHE_DIR", envDir), []string{"--data-dir", dataDir}, envDir},
		{"sqlite", env(), []string{"--data-dir", dataDir}, filepath.Join(dataDir, "github-cache")},
		{"postgres", env(), []string{"--database-url", "postgres://quorum@db.invalid/quorum"}, filepath.Join(userCache, "quorum", "github")},
	} {
		c := newCommand("serve", "quorum serve [flags]", "")
		db := addDBFlags(c, tc.getenv)
		f := addGitHubFlags(c)
		args := append([]string{"--github-app-id", "12345", "--github-private-key-file", keyFile, "--github-webhook-secret", "s"}, tc.args...)
		if err := c.parse(args, tc.getenv, io.Discard); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cfg, _, err := f.config(tc.getenv, db, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := cfg.CacheDir; got != tc.want {
			t.Errorf("%s: cache directory %q, want %q", tc.name, got, tc.want)
		}
	}

	out, _, _ := quorum(t, env(), "serve", "--help")
	for _, want := range []string{"--github-cache-dir", "QUORUM_GITHUB_CACHE_DIR", "<data-dir>/github-cache"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %s", want)
		}
	}
}

// TestServeGitHubIntake: with the App configured (key from the
// environment), serve takes signed deliveries at /github/webhook and its
// workers handle them.
func TestServeGitHubIntake(t *testing.T) {
	t.Parallel()
	_, keyPEM := appKey(t)
	dir := storetest.SQLiteDir(t)
	url := serve(t, env("QUORUM_GITHUB_PRIVATE_KEY", string(keyPEM), "QUORUM_GITHUB_WEBHOOK_SECRET", testWebhookSecret),
		"--data-dir", dir, "--github-app-id", "12345")

	if status, body := postWebhook(t, url, testWebhookSecret, "ping", "d-ping", webhookExample(t, "ping.json")); status != http.StatusOK {
		t.Errorf("ping: %d %s, want 200", status, body)
	}
	if status, body := postWebhook(t, url, "wrong", "installation", "d-bad", webhookExample(t, "installation.created.json")); status != http.StatusUnauthorized ||
		!strings.Contains(body, url+"/docs/api/errors#unauthorized") {
		t.Errorf("badly signed: %d %s, want 401 problem linking the server's docs", status, body)
	}
	status, body := postWebhook(t, url, testWebhookSecret, "installation", "d-created", webhookExample(t, "installation.created.json"))
	if status != http.StatusAccepted {
		t.Fatalf("installation created: %d %s, want 202", status, body)
	}

	db, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitJobCompleted(t, db, "github.delivery")
	inst, err := account.FindInstallation(context.Background(), db.Reader(), account.PlatformGitHub, 957387)
	if err != nil {
		t.Fatalf("installation not recorded: %v", err)
	}
	var events []string
	rows, err := db.Reader().Query(context.Background(), `SELECT name FROM events WHERE account_id = $1`, inst.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		events = append(events, name)
	}
	if len(events) != 1 || events[0] != "installation.created" {
		t.Errorf("events %v, want installation.created", events)
	}
}

// receiver is a customer's webhook endpoint: it records each envelope.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	envs []map[string]any
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env map[string]any
		if err := json.NewDecoder(r.Body).Decode(&env); err == nil {
			rc.mu.Lock()
			rc.envs = append(rc.envs, env)
			rc.mu.Unlock()
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

// wait returns the first envelope received that match accepts, polling
// until one arrives.
func (rc *receiver) wait(t *testing.T, what string, match func(env map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		rc.mu.Lock()
		for _, env := range rc.envs {
			if match(env) {
				rc.mu.Unlock()
				return env
			}
		}
		rc.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("%s not received within 120 s", what)
		}
		time.Sleep(50 * time.Millisecond) // polling another goroutine's progress
	}
}

// register registers the receiver as an endpoint of the account whose
// token tok is, through quorum's API at url.
func (rc *receiver) register(t *testing.T, url, tok string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/webhooks", strings.NewReader(`{"url":"`+rc.URL+`"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("register endpoint: %d", res.StatusCode)
	}
}

func eventOf(name string, pr int) func(map[string]any) bool {
	return func(env map[string]any) bool {
		data, _ := env["data"].(map[string]any)
		return env["event"] == name && (pr == 0 || data["pr_number"] == float64(pr))
	}
}

// pullRequestOpened is the example pull_request.opened delivery of
// Codertocat/Hello-World made pull request number of head over base, from
// installation inst.
func pullRequestOpened(t *testing.T, number int, head, base string, inst int64) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(webhookExample(t, "pull_request.opened.json"), &m); err != nil {
		t.Fatal(err)
	}
	m["number"] = number
	m["installation"] = map[string]any{"id": inst}
	pr := m["pull_request"].(map[string]any)
	pr["number"] = number
	pr["head"].(map[string]any)["sha"] = head
	pr["base"].(map[string]any)["sha"] = base
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reviewRequest is the example issue_comment.created delivery made a
// comment by login on pull request number of Codertocat/Hello-World, from
// installation inst.
func reviewRequest(t *testing.T, number int, inst int64, login, body string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(webhookExample(t, "issue_comment.created.json"), &m); err != nil {
		t.Fatal(err)
	}
	m["installation"] = map[string]any{"id": inst}
	issue := m["issue"].(map[string]any)
	issue["number"] = number
	issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/" + strconv.Itoa(number)}
	c := m["comment"].(map[string]any)
	c["body"] = body
	c["user"].(map[string]any)["login"] = login
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGitHubEndToEnd: a signed pull_request.opened is all it takes for a
// review to be posted on GitHub (the double) with inline comments on the
// right lines, listed by the API, and announced to a registered webhook
// endpoint; and a push while a review runs gets nothing posted and
// review.failed stale_head.
func TestGitHubEndToEnd(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		dir := storetest.SQLiteDir(t)
		gitHubEndToEnd(t, store.Config{DataDir: dir}, "--data-dir", dir)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := storetest.PostgresURL(t)
		gitHubEndToEnd(t, store.Config{URL: url}, "--database-url", url)
	})
}

// gitHubEndToEnd runs the end-to-end test on the database dbCfg, which
// quorum's commands reach with dbArgs.
func gitHubEndToEnd(t *testing.T, dbCfg store.Config, dbArgs ...string) {
	const owner, name, inst = "Codertocat", "Hello-World", 957387

	// A real repository whose head adds a printf mistake on app.go:8.
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n", "app.go": "package app\n\nfunc Hello() string { return \"hi\" }\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"app.go": "package app\n\nimport \"fmt\"\n\nfunc Hello() string { return \"hi\" }\n\nfunc Greet(name string) string {\n\treturn fmt.Sprintf(\"hello %d\", name)\n}\n"})
	head := r.Commit("head")

	gh := githubtest.New(t)
	gh.AddRepo(owner, name, r.Dir)
	gh.AddPull(owner, name, githubtest.Pull{Number: 2, Head: head, Base: base})
	customer := newReceiver(t)

	url := serve(t, env("QUORUM_GITHUB_PRIVATE_KEY", string(gh.PrivateKeyPEM()), "QUORUM_GITHUB_WEBHOOK_SECRET", testWebhookSecret),
		append(dbArgs, "--github-app-id", strconv.Itoa(githubtest.AppID), "--github-api-url", gh.APIURL(), "--webhook-allow-private")...)

	// The App is installed; the customer registers an endpoint.
	if status, body := postWebhook(t, url, testWebhookSecret, "installation", "e2e-install", webhookExample(t, "installation.created.json")); status != http.StatusAccepted {
		t.Fatalf("installation: %d %s", status, body)
	}
	db, err := store.Open(context.Background(), dbCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitJobCompleted(t, db, "github.delivery")
	tok, _, err := quorum(t, env(), append([]string{"token", "create", "--account", owner, "--scope", "reviews:read,webhooks:write"}, dbArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	tok = strings.TrimSpace(tok)
	customer.register(t, url, tok)

	// The pull request is opened: reviewed and posted.
	if status, body := postWebhook(t, url, testWebhookSecret, "pull_request", "e2e-pr-2", pullRequestOpened(t, 2, head, base, inst)); status != http.StatusAccepted {
		t.Fatalf("pull_request: %d %s", status, body)
	}
	completed := customer.wait(t, "review.completed", eventOf("review.completed", 2))
	if data := completed["data"].(map[string]any); data["head_sha"] != head || data["owner"] != owner {
		t.Errorf("review.completed %v", data)
	}
	customer.wait(t, "finding.created", eventOf("finding.created", 0))

	var posted []githubtest.Review
	deadline := time.Now().Add(60 * time.Second)
	for len(posted) == 0 && time.Now().Before(deadline) {
		posted = gh.Reviews(owner, name, 2)
		time.Sleep(50 * time.Millisecond) // polling the posting job
	}
	if len(posted) != 1 {
		t.Fatalf("%d reviews posted on #2, want 1", len(posted))
	}
	onLine := false
	for _, c := range posted[0].Comments {
		onLine = onLine || c.Path == "app.go" && c.Line == 8
	}
	if posted[0].CommitID != head || !onLine {
		t.Errorf("posted review on %s with comments %+v; want %s with one on app.go:8", posted[0].CommitID, posted[0].Comments, head)
	}
	status, list := get(t, url+"/v1/reviews?owner="+owner+"&repo="+name+"&pr=2", tok)
	if reviews, _ := list["reviews"].([]any); status != http.StatusOK || len(reviews) != 1 || reviews[0].(map[string]any)["head_sha"] != head {
		t.Errorf("GET /v1/reviews: %d %v", status, list)
	}

	// Someone who may push asks for another look: the same head is
	// reviewed again (a review.run job unique by the comment, which the
	// review worker reads as any other).
	gh.SetPermission(owner, name, "Codertocat", "write")
	if status, body := postWebhook(t, url, testWebhookSecret, "issue_comment", "e2e-comment", reviewRequest(t, 2, inst, "Codertocat", "@quorum review")); status != http.StatusAccepted {
		t.Fatalf("issue_comment: %d %s", status, body)
	}
	deadline = time.Now().Add(120 * time.Second)
	for {
		_, list := get(t, url+"/v1/reviews?owner="+owner+"&repo="+name+"&pr=2", tok)
		if reviews, _ := list["reviews"].([]any); len(reviews) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the review asked for in a comment was not stored within 120 s: %v", list)
		}
		time.Sleep(50 * time.Millisecond) // polling the review job
	}

	// Pull request 3 is pushed to on GitHub while its review runs (the
	// push's own webhook has not come yet): nothing is posted.
	gh.AddPull(owner, name, githubtest.Pull{Number: 3, Head: head, Base: base})
	gh.SetHead(owner, name, 3, base)
	if status, body := postWebhook(t, url, testWebhookSecret, "pull_request", "e2e-pr-3", pullRequestOpened(t, 3, head, base, inst)); status != http.StatusAccepted {
		t.Fatalf("pull_request 3: %d %s", status, body)
	}
	failed := customer.wait(t, "review.failed of #3", eventOf("review.failed", 3))
	if data := failed["data"].(map[string]any); data["reason"] != "stale_head" || data["head_sha"] != head {
		t.Errorf("review.failed %v, want stale_head of %s", data, head)
	}
	if got := gh.Reviews(owner, name, 3); len(got) != 0 {
		t.Errorf("posted on a stale head: %+v", got)
	}
	if got := gh.IssueComments(owner, name, 3); len(got) != 0 {
		t.Errorf("commented on a stale head: %+v", got)
	}
}
