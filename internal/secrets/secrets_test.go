package secrets_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/secrets"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/token"
)

// scanner is the process's one scanner, as in quorum; every test shares
// it, in parallel, which is itself a test of Scan's safety for concurrent
// use under -race.
var scanner = secrets.New

func setup(t *testing.T) *secrets.Scanner {
	t.Helper()
	s, err := scanner()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// Secrets are made up at run time from a seeded generator rather than
// written out, so this file holds nothing a secret scanner (quorum's own
// included) would report, and every run plants the same values.
const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	base64Chars = alnum + "+/"
)

func fake(seed uint64, alphabet string, n int) string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func awsKeyID(seed uint64) string  { return "AKIA" + fake(seed, upperDigits, 16) }
func awsSecret(seed uint64) string { return fake(seed, base64Chars, 40) }
func githubPAT(seed uint64) string { return "ghp_" + fake(seed, alnum, 36) }

func slackWebhook(seed uint64) string {
	return "https://hooks.slack.com/services/T" + fake(seed, upperDigits, 8) + "/B" +
		fake(seed+1, upperDigits, 8) + "/" + fake(seed+2, alnum, 24)
}

// privateKey returns a PEM private key block of made-up bytes, and its
// base64 lines (the part that is secret).
func privateKey(seed uint64) (block string, body []string) {
	raw := []byte(fake(seed, alnum, 600))
	enc := base64.StdEncoding.EncodeToString(raw)
	for len(enc) > 64 {
		body, enc = append(body, enc[:64]), enc[64:]
	}
	body = append(body, enc)
	block = "-----BEGIN " + "RSA PRIVATE KEY-----\n" + strings.Join(body, "\n") + "\n-----END RSA PRIVATE KEY-----"
	return block, body
}

// repoChange commits base, then applies head (a nil value deletes the
// file) and commits again, in a fresh git repository, and returns the
// change between the two commits as the local source builds it.
func repoChange(t testing.TB, base, head map[string]*string) *change.Change {
	t.Helper()
	dir := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_AUTHOR_NAME=Quorum Test", "GIT_AUTHOR_EMAIL=test@quorum.invalid",
		"GIT_COMMITTER_NAME=Quorum Test", "GIT_COMMITTER_EMAIL=test@quorum.invalid",
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	apply := func(files map[string]*string) string {
		t.Helper()
		for path, content := range files {
			full := filepath.Join(dir, filepath.FromSlash(path))
			if content == nil {
				if err := os.Remove(full); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(*content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A")
		git("commit", "-q", "--allow-empty", "-m", "commit")
		return git("rev-parse", "HEAD")
	}
	git("init", "-q", "-b", "main")
	baseSHA := apply(base)
	headSHA := apply(head)
	c, err := change.NewLocal(dir).Change(context.Background(), change.Ref{Base: baseSHA, Head: headSHA})
	if err != nil {
		t.Fatalf("build change: %v", err)
	}
	return c
}

func text(lines ...string) *string {
	s := strings.Join(lines, "\n") + "\n"
	return &s
}

// scan runs the shared scanner over the change and checks what every
// finding must be, whatever it found: valid, builtin, security, no patch,
// and none of the planted secrets in any field.
func scan(t *testing.T, c *change.Change, planted ...string) []specialist.Finding {
	t.Helper()
	fs, err := setup(t).Scan(context.Background(), c)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	for _, f := range fs {
		if err := f.Validate(); err != nil {
			t.Errorf("invalid finding %+v: %v", f, err)
		}
		if f.Category != specialist.CategorySecurity || f.Engine != specialist.EngineBuiltin || f.SuggestedPatch != "" {
			t.Errorf("finding %s: category %q, engine %q, patch %q", f.Rule, f.Category, f.Engine, f.SuggestedPatch)
		}
		assertRedacted(t, f, planted...)
	}
	return fs
}

// assertRedacted fails when any text of the finding holds a planted secret,
// or any 8-character piece of one (a partial leak is a leak).
func assertRedacted(t *testing.T, f specialist.Finding, planted ...string) {
	t.Helper()
	v := reflect.ValueOf(f)
	for i := range v.NumField() {
		field, ok := v.Field(i).Interface().(string)
		if !ok {
			continue
		}
		for _, secret := range planted {
			for j := 4; j+8 <= len(secret); j++ {
				if piece := secret[j : j+8]; strings.Contains(field, piece) {
					t.Errorf("finding %s: field %s holds %q, part of a planted secret", f.Rule, v.Type().Field(i).Name, piece)
					break
				}
			}
		}
	}
}

type want struct {
	rule          string
	line, endLine int
	severity      string
}

func assertFindings(t *testing.T, fs []specialist.Finding, path string, wants ...want) {
	t.Helper()
	var got []want
	for _, f := range fs {
		if f.Path != path {
			t.Errorf("finding on %s, want only %s: %+v", f.Path, path, f)
			continue
		}
		got = append(got, want{f.Rule, f.Line, f.EndLine, f.Severity})
	}
	if !reflect.DeepEqual(got, wants) {
		t.Errorf("findings on %s:\n got %+v\nwant %+v\n%s", path, got, wants, headlines(fs))
	}
}

func headlines(fs []specialist.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s:%d %s %s\n", f.Path, f.Line, f.Rule, f.Headline)
	}
	return b.String()
}

func TestAWSKeyInYAML(t *testing.T) {
	t.Parallel()
	id, secret, password := awsKeyID(1), awsSecret(2), fake(25, alnum, 16)
	c := repoChange(t,
		map[string]*string{"deploy/config.yaml": text("service: api", "region: eu-west-1")},
		map[string]*string{"deploy/config.yaml": text(
			"service: api",
			"region: eu-west-1",
			"aws:",
			"  access_key_id: "+id,
			"  secret_access_key: "+secret,
			"db:",
			"  password: "+password,
		)},
	)
	fs := scan(t, c, id, secret, password)
	// The secret access key, which only gitleaks' generic rule finds, is as
	// critical as the key ID beside it; a password nearby is not its pair.
	assertFindings(t, fs, "deploy/config.yaml",
		want{"gitleaks:aws-access-token", 4, 4, specialist.SeverityCritical},
		want{"gitleaks:generic-api-key", 5, 5, specialist.SeverityCritical},
		want{"gitleaks:generic-api-key", 7, 7, specialist.SeverityHigh},
	)
	if len(fs) == 3 {
		if got := fs[0].Headline; got != "Hard-coded AWS access key ID" {
			t.Errorf("headline %q", got)
		}
		if !strings.Contains(fs[0].Body, "AKIA****") {
			t.Errorf("body does not show the redacted key ID AKIA****:\n%s", fs[0].Body)
		}
		for _, word := range []string{"Revoke or rotate", "secret store", "filter-repo"} {
			if !strings.Contains(fs[0].Body, word) {
				t.Errorf("body does not say %q:\n%s", word, fs[0].Body)
			}
		}
		if !strings.Contains(fs[1].Headline, "AWS access key ID") {
			t.Errorf("secret's headline %q does not name the key it pairs with", fs[1].Headline)
		}
	}
}

// TestShapeOnlyMatchInTestCodeIsLow: in test code a value that only
// gitleaks' generic rule matches is most often a fixture, so it is low
// (reported, not blocking); an issuer's format keeps its severity there.
func TestShapeOnlyMatchInTestCodeIsLow(t *testing.T) {
	t.Parallel()
	id, password := awsKeyID(3), fake(26, alnum, 16)
	body := text("package app", "", "const (", "\tkeyID    = \""+id+"\"", ")", "", "var db = map[string]string{", "\t\"password\": \""+password+"\",", "}")
	for _, path := range []string{"app/app_test.go", "internal/x/testdata/config.go", "web/src/login.spec.go"} {
		c := repoChange(t, map[string]*string{"README.md": text("# app")}, map[string]*string{path: body})
		fs := scan(t, c, id, password)
		assertFindings(t, fs, path,
			want{"gitleaks:aws-access-token", 4, 4, specialist.SeverityCritical},
			want{"gitleaks:generic-api-key", 8, 8, specialist.SeverityLow},
		)
		if len(fs) == 2 && !strings.HasSuffix(fs[1].Headline, "(in test code)") {
			t.Errorf("%s: headline %q does not say it is in test code", path, fs[1].Headline)
		}
	}
	c := repoChange(t, map[string]*string{"README.md": text("# app")}, map[string]*string{"app/app.go": body})
	assertFindings(t, scan(t, c, id, password), "app/app.go",
		want{"gitleaks:aws-access-token", 4, 4, specialist.SeverityCritical},
		want{"gitleaks:generic-api-key", 8, 8, specialist.SeverityHigh},
	)
}

func TestPrivateKey(t *testing.T) {
	t.Parallel()
	block, body := privateKey(3)
	goSource := "package tlsfix\n\n// serverKey signs the test server's certificate.\nconst serverKey = `" + block + "`\n"
	c := repoChange(t,
		map[string]*string{"README.md": text("# service")},
		map[string]*string{
			"certs/server.pem":       text(block),
			"internal/tlsfix/key.go": &goSource,
			"internal/tlsfix/inline.go": text("package tlsfix", "",
				"var clientKey = "+strconv.Quote(block+"\n")),
		},
	)
	fs := scan(t, c, body...)
	lines := len(body) + 2
	byPath := map[string][]specialist.Finding{}
	for _, f := range fs {
		byPath[f.Path] = append(byPath[f.Path], f)
	}
	assertFindings(t, byPath["certs/server.pem"], "certs/server.pem", want{"gitleaks:private-key", 1, lines, specialist.SeverityCritical})
	assertFindings(t, byPath["internal/tlsfix/key.go"], "internal/tlsfix/key.go", want{"gitleaks:private-key", 4, 3 + lines, specialist.SeverityCritical})
	assertFindings(t, byPath["internal/tlsfix/inline.go"], "internal/tlsfix/inline.go", want{"gitleaks:private-key", 3, 3, specialist.SeverityCritical})
	for _, f := range fs {
		if f.Headline != "Hard-coded private key" {
			t.Errorf("headline %q", f.Headline)
		}
	}
}

func TestGitHubPATInDotEnv(t *testing.T) {
	t.Parallel()
	pat := githubPAT(4)
	c := repoChange(t,
		map[string]*string{".env": text("PORT=8080", "LOG_LEVEL=info")},
		map[string]*string{".env": text("PORT=8080", "GITHUB_TOKEN="+pat, "LOG_LEVEL=info")},
	)
	fs := scan(t, c, pat)
	assertFindings(t, fs, ".env", want{"gitleaks:github-pat", 2, 2, specialist.SeverityCritical})
	if len(fs) == 1 && fs[0].Headline != "Hard-coded GitHub personal access token" {
		t.Errorf("headline %q", fs[0].Headline)
	}
}

func TestSlackWebhook(t *testing.T) {
	t.Parallel()
	hook := slackWebhook(5)
	c := repoChange(t,
		map[string]*string{"notify.py": text("import requests", "")},
		map[string]*string{"notify.py": text("import requests", "", "WEBHOOK = \""+hook+"\"", "", "def send(msg):", "    requests.post(WEBHOOK, json={\"text\": msg})")},
	)
	fs := scan(t, c, hook)
	assertFindings(t, fs, "notify.py", want{"gitleaks:slack-webhook-url", 3, 3, specialist.SeverityCritical})
}

func TestQuorumPAT(t *testing.T) {
	t.Parallel()
	tok, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	// A look-alike: the same shape with the checksum's last character
	// changed, so only the checksum tells them apart.
	last := tok[len(tok)-1]
	lookalike := tok[:len(tok)-1] + string("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[(strings.IndexByte(alnum, last)+1)%len(alnum)])
	if token.WellFormed(lookalike) {
		t.Fatalf("look-alike %q is well formed", lookalike)
	}
	c := repoChange(t,
		map[string]*string{"scripts/ci.sh": text("#!/bin/sh", "set -eu")},
		map[string]*string{"scripts/ci.sh": text(
			"#!/bin/sh",
			"set -eu",
			"export QUORUM_TOKEN="+tok,
			"export QUORUM_OLD_TOKEN="+lookalike,
			`curl -H "Authorization: Bearer $QUORUM_TOKEN" https://quorum.example/v1/reviews`,
		)},
	)
	fs := scan(t, c, tok[len(token.Prefix):], lookalike[len(token.Prefix):])
	assertFindings(t, fs, "scripts/ci.sh", want{"gitleaks:quorum-pat", 3, 3, specialist.SeverityCritical})
	if len(fs) == 1 {
		if fs[0].Headline != "Hard-coded quorum personal access token" {
			t.Errorf("headline %q", fs[0].Headline)
		}
		if !strings.Contains(fs[0].Body, "qrm_****") {
			t.Errorf("body does not show qrm_****:\n%s", fs[0].Body)
		}
	}
}

// TestNotSecrets holds the look-alikes a reviewer would be annoyed to see
// reported: documented example keys, placeholders, templates, hashes and
// identifiers, each on an added line where a real secret would be found.
func TestNotSecrets(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"aws_example_test.go": {
			"package aws",
			"",
			"// AWS's documented example credentials, as in its SDK docs.",
			`const exampleKeyID = "AKIAIOSFODNN7EXAMPLE"`,
			`const exampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`,
		},
		"config.example.yaml": {
			"api_key: YOUR_API_KEY",
			"github_token: ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			"secret_key: xxxxxxxxxxxxxxxxxxxx",
			"password: ${DB_PASSWORD}",
			"auth_token: <token>",
			"slack_token: {{ .Values.slackToken }}",
			"access_token: changeme-access-token-1234",
			"stripe_key: sk_live_" + "EXAMPLE" + fake(6, alnum, 17),
		},
		"fixtures.py": {
			`API_KEY = "sk-test-` + fake(16, "0123456789abcdef", 20) + `"`,
			`next_page_token = "` + fake(17, alnum, 40) + `"`,
			`ssl_key = "certs/` + fake(18, "abcdefghijklmnopqrstuvwxyz0123456789", 12) + `.key.pem"`,
		},
		"pemtypes.go": {
			"package pemtypes",
			"",
			"// headers lists the PEM blocks a linter recognises; it holds no key.",
			"var headers = []string{",
			`	"-----BEGIN RSA PRIVATE KEY-----",`,
			`	"-----BEGIN DSA PRIVATE KEY-----",`,
			`	"-----BEGIN EC PRIVATE KEY-----",`,
			`	"-----BEGIN OPENSSH PRIVATE KEY-----",`,
			"}",
		},
		"checksums.env": {
			"ARTIFACT_KEY=" + fake(7, "0123456789abcdef", 64),
			"CACHE_KEY=" + fake(8, "0123456789abcdef", 40),
			"SESSION_TOKEN_ID=" + fake(9, "0123456789abcdef", 32),
			"API_KEY_UUID=123e4567-e89b-42d3-a456-426614174000",
			"AUTH_TOKEN=f47ac10b-58cc-4372-a567-0e02b2c3d479",
		},
	}
	head := map[string]*string{}
	for path, lines := range cases {
		head[path] = text(lines...)
	}
	c := repoChange(t, map[string]*string{"README.md": text("# service")}, head)
	if fs := scan(t, c); len(fs) > 0 {
		t.Errorf("reported %d look-alikes:\n%s", len(fs), headlines(fs))
	}
}

func TestOnlyAddedLines(t *testing.T) {
	t.Parallel()
	old, oldKey := githubPAT(10), awsKeyID(11)
	gone := githubPAT(12)
	c := repoChange(t,
		map[string]*string{
			"app/settings.ini": text("[github]", "token = "+old, "timeout = 5", "[aws]", "key = "+oldKey),
			"app/legacy.env":   text("GITHUB_TOKEN=" + gone),
		},
		map[string]*string{
			// The secrets stay, unchanged, in the hunk's context; the
			// lines around them change.
			"app/settings.ini": text("[github]", "token = "+old, "timeout = 10", "[aws]", "key = "+oldKey, "retries = 3"),
			"app/legacy.env":   nil,
		},
	)
	if f := c.Files; len(f) != 2 {
		t.Fatalf("change has %d files, want 2", len(f))
	}
	if fs := scan(t, c, old, oldKey, gone); len(fs) > 0 {
		t.Errorf("reported secrets the change did not add:\n%s", headlines(fs))
	}
}

// TestSecretBesideChangedLine checks the other side of TestOnlyAddedLines:
// a secret added among unchanged lines is found on its own line.
func TestSecretBesideChangedLine(t *testing.T) {
	t.Parallel()
	pat := githubPAT(13)
	lines := make([]string, 20)
	for i := range lines {
		lines[i] = fmt.Sprintf("setting_%d = %d", i+1, i)
	}
	headLines := append(append(append([]string{}, lines[:10]...), "token = "+pat), lines[10:]...)
	c := repoChange(t,
		map[string]*string{"app.ini": text(lines...)},
		map[string]*string{"app.ini": text(headLines...)},
	)
	assertFindings(t, scan(t, c, pat), "app.ini", want{"gitleaks:github-pat", 11, 11, specialist.SeverityCritical})
}

func TestScanHonoursCancellation(t *testing.T) {
	t.Parallel()
	c := repoChange(t,
		map[string]*string{"a.env": text("A=1")},
		map[string]*string{"a.env": text("A=1", "GITHUB_TOKEN="+githubPAT(14))},
	)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fs, err := setup(t).Scan(ctx, c)
	if err == nil || fs != nil {
		t.Errorf("Scan on a cancelled context = %d findings, %v; want nil and an error", len(fs), err)
	}
}

// TestConcurrentScans runs one scanner over several changes at once and
// checks each result against the same scan run alone.
func TestConcurrentScans(t *testing.T) {
	t.Parallel()
	s := setup(t)
	var changes []*change.Change
	for i := range 4 {
		seed := uint64(100 + 10*i)
		changes = append(changes, repoChange(t,
			map[string]*string{"x.txt": text("x")},
			map[string]*string{
				"x.txt":      text("x", "token: "+githubPAT(seed)),
				"key.pem":    text(func() string { b, _ := privateKey(seed + 1); return b }()),
				"aws.yaml":   text("id: "+awsKeyID(seed+2), "secret_key: "+awsSecret(seed+3)),
				"notify.cfg": text("url = " + slackWebhook(seed+4)),
			},
		))
	}
	alone := make([][]specialist.Finding, len(changes))
	for i, c := range changes {
		fs, err := s.Scan(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) < 4 {
			t.Fatalf("change %d: %d findings, want at least 4:\n%s", i, len(fs), headlines(fs))
		}
		alone[i] = fs
	}
	var wg sync.WaitGroup
	together := make([][][]specialist.Finding, 8)
	errs := make([]error, len(together))
	for g := range together {
		wg.Go(func() {
			together[g] = make([][]specialist.Finding, len(changes))
			for i := range changes {
				c := changes[(g+i)%len(changes)]
				fs, err := s.Scan(context.Background(), c)
				if err != nil {
					errs[g] = err
					return
				}
				together[g][(g+i)%len(changes)] = fs
			}
		})
	}
	wg.Wait()
	for g := range together {
		if errs[g] != nil {
			t.Fatalf("goroutine %d: %v", g, errs[g])
		}
		if !reflect.DeepEqual(together[g], alone) {
			t.Errorf("goroutine %d found other findings than the scans run alone", g)
		}
	}
}

func TestSeverity(t *testing.T) {
	t.Parallel()
	for rule, want := range map[string]string{
		"aws-access-token":        specialist.SeverityCritical,
		"private-key":             specialist.SeverityCritical,
		"github-pat":              specialist.SeverityCritical,
		"slack-webhook-url":       specialist.SeverityCritical,
		secrets.RuleQuorumPAT:     specialist.SeverityCritical,
		"generic-api-key":         specialist.SeverityHigh,
		"jwt":                     specialist.SeverityHigh,
		"curl-auth-header":        specialist.SeverityHigh,
		"easypost-test-api-token": specialist.SeverityHigh,
		"asana-client-id":         specialist.SeverityMedium,
		"lob-pub-api-key":         specialist.SeverityMedium,
		"flutterwave-public-key":  specialist.SeverityMedium,
	} {
		if got := secrets.Severity(rule); got != want {
			t.Errorf("Severity(%q) = %q, want %q", rule, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ rule, secret, want string }{
		{"github-pat", githubPAT(20), "ghp_****"},
		{"aws-access-token", awsKeyID(21), "AKIA****"},
		{"generic-api-key", awsSecret(22), "****"},
		{"private-key", "-----BEGIN RSA PRIVATE KEY-----\n" + awsSecret(23), "****"},
		{"twitter-api-key", fake(24, alnum, 12), "****"},
	} {
		if got := secrets.Redact(tc.rule, tc.secret); got != tc.want {
			t.Errorf("Redact(%s, …) = %q, want %q", tc.rule, got, tc.want)
		}
	}
}

func TestKind(t *testing.T) {
	t.Parallel()
	for rule, want := range map[string]string{
		"aws-access-token":    "AWS access key ID",
		"github-pat":          "GitHub personal access token",
		"slack-webhook-url":   "Slack webhook URL",
		"gitlab-pat":          "GitLab personal access token",
		"stripe-access-token": "Stripe access token",
	} {
		if got := secrets.Kind(rule); got != want {
			t.Errorf("Kind(%q) = %q, want %q", rule, got, want)
		}
	}
}

// BenchmarkScan scans a change of about 500 added lines over 20 files of
// configuration and code, a few of them with secrets.
func BenchmarkScan(b *testing.B) {
	s, err := scanner()
	if err != nil {
		b.Fatal(err)
	}
	c := benchChange(b)
	for b.Loop() {
		if _, err := s.Scan(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew measures building the scanner, which is on quorum's
// start-up path (once per process: New shares the one it built).
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := secrets.BuildForTest(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchChange builds a change that adds 25 lines to each of 20 files (Go
// code, YAML and .env files), with a secret in every fifth file.
func benchChange(b *testing.B) *change.Change {
	b.Helper()
	base, head := map[string]*string{}, map[string]*string{}
	for i := range 20 {
		var path string
		var baseLines, headLines []string
		switch i % 3 {
		case 0:
			path = fmt.Sprintf("internal/pkg%d/handler.go", i)
			baseLines = []string{fmt.Sprintf("package pkg%d", i), ""}
			headLines = append(headLines, baseLines...)
			for j := range 25 {
				headLines = append(headLines, fmt.Sprintf("func handle%d(ctx context.Context, key string, n int) error { return process(ctx, key, n*%d) }", j, j))
			}
		case 1:
			path = fmt.Sprintf("deploy/service%d.yaml", i)
			baseLines = []string{"service:", "  name: api"}
			headLines = append(headLines, baseLines...)
			for j := range 25 {
				headLines = append(headLines, fmt.Sprintf("  setting_%d: value-%d # timeout and retry budget for the api token cache", j, j))
			}
		default:
			path = fmt.Sprintf("env/service%d.env", i)
			baseLines = []string{"PORT=8080", "LOG_LEVEL=info"}
			headLines = append(headLines, baseLines...)
			for j := range 25 {
				headLines = append(headLines, fmt.Sprintf("FEATURE_%d_ENABLED=true", j))
			}
		}
		if i%5 == 0 {
			headLines[len(headLines)-1] = "github_token: " + githubPAT(uint64(1000+i))
		}
		base[path], head[path] = text(baseLines...), text(headLines...)
	}
	return repoChange(b, base, head)
}

// TestEncodedSecret checks that gitleaks' decoding is on, as in its CLI: a
// token written base64-encoded is found, and its redacted form shows
// nothing of the encoded text either.
func TestEncodedSecret(t *testing.T) {
	t.Parallel()
	pat := githubPAT(15)
	encoded := base64.StdEncoding.EncodeToString([]byte(pat))
	c := repoChange(t,
		map[string]*string{"k8s/secret.yaml": text("apiVersion: v1", "kind: ConfigMap")},
		map[string]*string{"k8s/secret.yaml": text("apiVersion: v1", "kind: ConfigMap", "binaryData:", "  bootstrap: "+encoded)},
	)
	fs := scan(t, c, pat, encoded)
	assertFindings(t, fs, "k8s/secret.yaml", want{"gitleaks:github-pat", 4, 4, specialist.SeverityCritical})
}
