package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/webhook"
)

// webhookDB opens the data directory's database, as the CLI left it.
func webhookDB(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestWebhookCreateListDelete(t *testing.T) {
	t.Parallel()
	dir := storetest.SQLiteDir(t)
	ctx := context.Background()

	secret, details, err := quorum(t, env(), "webhook", "create", "--data-dir", dir, "--account", "acme",
		"--url", "https://ci.example.com/hooks", "--event", "review.completed", "--event", "review.failed", "--description", "CI")
	if err != nil {
		t.Fatal(err)
	}
	secret = strings.TrimSpace(secret)
	if !strings.HasPrefix(secret, webhook.SecretPrefix) || strings.Contains(secret, "\n") {
		t.Errorf("stdout %q, want the secret alone", secret)
	}
	if !strings.Contains(details, "hook_") || !strings.Contains(details, "not shown again") {
		t.Errorf("stderr %q lacks the endpoint id or the warning", details)
	}

	out, _, err := quorum(t, env(), "webhook", "create", "--data-dir", dir, "--account", "globex", "--url", "http://globex.example.com/h", "--secret", "It's a Secret to Everybody", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var globex struct {
		ID      string   `json:"id"`
		Account string   `json:"account"`
		Secret  string   `json:"secret"`
		Events  []string `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &globex); err != nil {
		t.Fatalf("--json output %q: %v", out, err)
	}
	if globex.Account != "globex" || globex.Secret != "It's a Secret to Everybody" || len(globex.Events) != len(event.Names) {
		t.Errorf("--json = %+v", globex)
	}

	// The secret is stored for signing, and list never shows it.
	db := webhookDB(t, dir)
	acme, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, "acme")
	if err != nil {
		t.Fatal(err)
	}
	endpoints, err := webhook.ListAll(ctx, db.Reader(), acme.ID)
	if err != nil || len(endpoints) != 1 || endpoints[0].Secret != secret || endpoints[0].Description != "CI" {
		t.Fatalf("acme's endpoints %+v, %v", endpoints, err)
	}
	acmeHook := endpoints[0].ID

	table, _, err := quorum(t, env(), "webhook", "list", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ID", "ACCOUNT", acmeHook, globex.ID, "acme", "globex", "review.completed,review.failed", "all", "https://ci.example.com/hooks"} {
		if !strings.Contains(table, want) {
			t.Errorf("list lacks %q:\n%s", want, table)
		}
	}
	out, _, err = quorum(t, env(), "webhook", "list", "--data-dir", dir, "--account", "acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secret, globex.Secret, `"secret"`} {
		if strings.Contains(table, s) || strings.Contains(out, s) {
			t.Errorf("list shows a secret (%q)", s)
		}
	}
	var listed []struct {
		ID      string `json:"id"`
		Account string `json:"account"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 1 || listed[0].ID != acmeHook || listed[0].Account != "acme" {
		t.Errorf("list --account acme --json = %s (%v)", out, err)
	}
	if _, _, err := quorum(t, env(), "webhook", "list", "--data-dir", dir, "--account", "nobody"); err == nil || !strings.Contains(err.Error(), `no account "nobody"`) {
		t.Errorf("list of an unknown account: %v", err)
	}

	out, _, err = quorum(t, env(), "webhook", "deliveries", "--data-dir", dir, acmeHook)
	if err != nil || !strings.Contains(out, "STATUS") {
		t.Errorf("deliveries of a new endpoint: %q, %v", out, err)
	}
	out, _, err = quorum(t, env(), "webhook", "deliveries", "--data-dir", dir, "--json", "--status", "dead_lettered", acmeHook)
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("deliveries --json of a new endpoint: %q, %v", out, err)
	}

	out, _, err = quorum(t, env(), "webhook", "delete", "--data-dir", dir, acmeHook)
	if err != nil || !strings.Contains(out, "deleted "+acmeHook) {
		t.Fatalf("delete: %q, %v", out, err)
	}
	if _, err := webhook.Get(ctx, db.Reader(), acme.ID, acmeHook); !errors.Is(err, webhook.ErrNotFound) {
		t.Errorf("after delete, Get = %v, want ErrNotFound", err)
	}
	if _, _, err := quorum(t, env(), "webhook", "delete", "--data-dir", dir, acmeHook); err == nil || !strings.Contains(err.Error(), "no endpoint") {
		t.Errorf("second delete: %v", err)
	}
	if _, _, err := quorum(t, env(), "webhook", "deliveries", "--data-dir", dir, acmeHook); err == nil || !strings.Contains(err.Error(), "no endpoint") {
		t.Errorf("deliveries of a deleted endpoint: %v", err)
	}
	if _, _, err := quorum(t, env(), "webhook", "redeliver", "--data-dir", dir, "wh_01J9Z6Q3W8K5T2M4N7P0R1S3VX"); err == nil || !strings.Contains(err.Error(), "no delivery") {
		t.Errorf("redeliver of a missing delivery: %v", err)
	}
	table, _, _ = quorum(t, env(), "webhook", "list", "--data-dir", dir)
	if strings.Contains(table, acmeHook) || !strings.Contains(table, globex.ID) {
		t.Errorf("list after delete:\n%s", table)
	}
}

func TestWebhookRedeliver(t *testing.T) {
	t.Parallel()
	dir := storetest.SQLiteDir(t)
	ctx := context.Background()
	out, _, err := quorum(t, env(), "webhook", "create", "--data-dir", dir, "--account", "acme", "--url", "https://ci.example.com/hooks", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var hook struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &hook); err != nil {
		t.Fatal(err)
	}
	// A ping makes a delivery; mark it dead, as the worker would after the
	// fifth retry.
	db := webhookDB(t, dir)
	if _, err := db.ConfigureJobs(store.JobsConfig{}); err != nil {
		t.Fatal(err)
	}
	e, err := webhook.GetAny(ctx, db.Reader(), hook.ID)
	if err != nil {
		t.Fatal(err)
	}
	d, err := webhook.Ping(ctx, db, e.AccountID, e.ID, e.CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec(ctx, `UPDATE webhook_deliveries SET status = 'dead_lettered', next_attempt_at = NULL WHERE id = $1`, d.ID); err != nil {
		t.Fatal(err)
	}
	// Its last attempt, as the worker records one.
	if _, err := db.Writer().Exec(ctx, `UPDATE webhook_deliveries SET attempts = 1 WHERE id = $1`, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, number, attempted_at, status_code, latency_us, error)
		VALUES ($1, 1, $2, 503, 1200, 'the receiver answered 503 Service Unavailable')`, d.ID, time.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
	out, _, err = quorum(t, env(), "webhook", "deliveries", "--data-dir", dir, "--status", "dead_lettered", hook.ID)
	if err != nil || !strings.Contains(out, d.ID) || !strings.Contains(out, "dead_lettered") {
		t.Fatalf("dead letters: %q, %v", out, err)
	}
	if !strings.Contains(out, "LAST ATTEMPT") || !strings.Contains(out, "HTTP 503: the receiver answered 503") {
		t.Errorf("deliveries does not say why the delivery failed:\n%s", out)
	}
	out, _, err = quorum(t, env(), "webhook", "redeliver", "--data-dir", dir, d.ID)
	if err != nil || !strings.Contains(out, d.ID) {
		t.Fatalf("redeliver: %q, %v", out, err)
	}
	got, _, err := webhook.GetDelivery(ctx, db.Reader(), e.AccountID, d.ID)
	if err != nil || got.Status != webhook.StatusPending {
		t.Errorf("after redeliver: %+v, %v; want the same delivery pending", got, err)
	}
}

// An endpoint on a non-public address is registered (an operator may run
// serve with --webhook-allow-private), with a warning that deliveries to
// it are otherwise refused.
func TestWebhookCreateWarnsOfANonPublicURL(t *testing.T) {
	t.Parallel()
	dir := storetest.SQLiteDir(t)
	for url, class := range map[string]string{
		"http://127.0.0.1:9/hooks":     "loopback",
		"http://localhost:9/hooks":     "loopback",
		"https://10.1.2.3/hooks":       "private",
		"https://ci.example.com/hooks": "",
	} {
		_, stderr, err := quorum(t, env(), "webhook", "create", "--data-dir", dir, "--account", "acme", "--url", url)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		warned := strings.Contains(stderr, "warning: the URL's host is "+class+": quorum serve refuses to deliver to it unless started with --webhook-allow-private")
		if class != "" && !warned || class == "" && strings.Contains(stderr, "warning") {
			t.Errorf("%s: stderr %q", url, stderr)
		}
	}
}

func TestWebhookHelpAndUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"webhook", "--help"}, {"webhook", "help"}, {"webhook", "create", "--help"}, {"webhook", "list", "--help"},
		{"webhook", "delete", "--help"}, {"webhook", "deliveries", "--help"}, {"webhook", "redeliver", "--help"},
	} {
		out, _, err := quorum(t, env(), args...)
		if err != nil && !errors.Is(err, errHelp) {
			t.Errorf("%v: %v", args, err)
		}
		if !strings.Contains(out, "Usage: quorum webhook") {
			t.Errorf("%v: no usage on stdout: %q", args, out)
		}
	}
	out, _, _ := quorum(t, env(), "webhook", "create", "--help")
	for _, want := range []string{"--account", "--url", "--event", "--description", "--secret", "--json", "--data-dir", "review.completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("webhook create --help lacks %s", want)
		}
	}
	if out, _, _ := quorum(t, env(), "--help"); !strings.Contains(out, "webhook") {
		t.Error("quorum --help does not list webhook")
	}

	dir := storetest.SQLiteDir(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"webhook"}, "no subcommand"},
		{[]string{"webhook", "frobnicate"}, `unknown subcommand "frobnicate"`},
		{[]string{"webhook", "create", "--data-dir", dir, "--url", "https://x.example.com/"}, "--account is required"},
		{[]string{"webhook", "create", "--data-dir", dir, "--account", "a"}, "--url is required"},
		{[]string{"webhook", "create", "--data-dir", dir, "--account", "a", "--url", "ftp://x.example.com/"}, "url: must be an http or https URL"},
		{[]string{"webhook", "create", "--data-dir", dir, "--account", "a", "--url", "https://u:p@x.example.com/"}, "user name or password"},
		{[]string{"webhook", "create", "--data-dir", dir, "--account", "a", "--url", "https://x.example.com/", "--event", "review.exploded"}, `unknown event "review.exploded"`},
		{[]string{"webhook", "create", "--data-dir", dir, "--account", "a", "--url", "https://x.example.com/", "--secret", "short"}, "secret"},
		{[]string{"webhook", "create", "--nope"}, "nope"},
		{[]string{"webhook", "delete", "--data-dir", dir}, "exactly one endpoint id"},
		{[]string{"webhook", "delete", "--data-dir", dir, "hook_a", "hook_b"}, "unexpected argument"},
		{[]string{"webhook", "deliveries", "--data-dir", dir}, "exactly one endpoint id"},
		{[]string{"webhook", "deliveries", "--data-dir", dir, "--status", "lost", "hook_a"}, `unknown --status "lost"`},
		{[]string{"webhook", "deliveries", "--data-dir", dir, "--limit", "0", "hook_a"}, "--limit"},
		{[]string{"webhook", "redeliver", "--data-dir", dir}, "exactly one delivery id"},
		// An id that names nothing is a mistake on the command line too.
		{[]string{"webhook", "delete", "--data-dir", dir, "hook_nope"}, "no endpoint hook_nope"},
		{[]string{"webhook", "deliveries", "--data-dir", dir, "hook_nope"}, "no endpoint hook_nope"},
		{[]string{"webhook", "redeliver", "--data-dir", dir, "dlv_nope"}, "no delivery dlv_nope"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), tc.args, env(), &bytes.Buffer{}, &stderr)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
		if code := exitCode(err, &bytes.Buffer{}); code != 2 {
			t.Errorf("%v: exit code %d, want 2", tc.args, code)
		}
	}
	// Nothing was created by the refused commands.
	db := webhookDB(t, dir)
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if all, err := webhook.ListAll(context.Background(), db.Reader(), ""); err != nil || len(all) != 0 {
		t.Errorf("after refused creates: %d endpoints, %v", len(all), err)
	}
}
