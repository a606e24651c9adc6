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
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/store"
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
	url := serve(t, env(), "--data-dir", t.TempDir())
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

// TestServeGitHubIntake: with the App configured (key from the
// environment), serve takes signed deliveries at /github/webhook and its
// workers handle them.
func TestServeGitHubIntake(t *testing.T) {
	t.Parallel()
	_, keyPEM := appKey(t)
	dir := t.TempDir()
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
