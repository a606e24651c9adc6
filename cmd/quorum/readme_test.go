package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// readmeQueryGo is the change the README's example finding comes from: it
// adds fmt.Sprintf("SELECT … WHERE id = '%s'", id) passed to db.Query.
const readmeQueryGo = `package db

import (
	"database/sql"
	"fmt"
)

// find loads one row.
func find(db *sql.DB, id string) error {
	q := fmt.Sprintf("SELECT name FROM users WHERE id = '%s'", id)
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	return rows.Close()
}
`

// TestReadmeExamples checks the README's examples against what quorum
// answers, so they cannot drift: the finding the API serves for the
// README's change (its specialist, severity, place, headline, rule and the
// excerpt's lines the README shows), and /healthz's body.
func TestReadmeExamples(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	example := jsonBlockAfter(t, readme, "/v1/findings/fnd_01M8…")

	dir := gitRepo(t, map[string]string{"go.mod": "module example.com/db\n\ngo 1.22\n", "db/query.go": "package db\n"},
		map[string]string{"db/query.go": readmeQueryGo})
	data := t.TempDir()
	_, stderr, code := reviewRun(t, "--repo", dir, "--save", "--data-dir", data)
	if code != 1 {
		t.Fatalf("review exit %d, want 1 (request_changes):\n%s", code, stderr)
	}
	rev := regexp.MustCompile(`saved review (rev_\w+)`).FindStringSubmatch(stderr)
	if rev == nil {
		t.Fatalf("review --save did not name the review:\n%s", stderr)
	}
	base := serve(t, env(), "--data-dir", data)
	tok, _, err := quorum(t, env(), "token", "create", "--data-dir", data, "--account", "local", "--scope", "reviews:read", "--scope", "findings:read")
	if err != nil {
		t.Fatal(err)
	}
	tok = strings.TrimSpace(tok)
	status, review := get(t, base+"/v1/reviews/"+rev[1], tok)
	if status != 200 {
		t.Fatalf("GET review: %d %v", status, review)
	}
	var findingID string
	for _, f := range review["findings"].([]any) {
		if f.(map[string]any)["path"] == "db/query.go" && f.(map[string]any)["specialist"] == "security" {
			findingID = f.(map[string]any)["id"].(string)
		}
	}
	if findingID == "" {
		t.Fatalf("no security finding on db/query.go: %v", review["findings"])
	}
	status, finding := get(t, base+"/v1/findings/"+findingID, tok)
	if status != 200 {
		t.Fatalf("GET finding: %d %v", status, finding)
	}
	ctx := finding["context"].(map[string]any)
	prov := ctx["provenance"].(map[string]any)
	got := map[string]string{
		"specialist": str(finding["specialist"]), "category": str(finding["category"]), "severity": str(finding["severity"]),
		"path": str(finding["path"]), "line": str(finding["line"]), "headline": str(finding["headline"]),
		"rule": str(prov["rule"]), "engine": str(prov["engine"]),
	}
	for key, want := range got {
		shown := regexp.MustCompile(`"` + key + `":("[^"]*"|\d+)`).FindStringSubmatch(example)
		if shown == nil {
			t.Errorf("the README's example finding has no %q", key)
			continue
		}
		if v := strings.Trim(shown[1], `"`); v != want {
			t.Errorf("the README's example finding has %s %q; the API answers %q", key, v, want)
		}
	}
	lines := map[string]string{}
	for _, l := range ctx["excerpt"].(map[string]any)["lines"].([]any) {
		l := l.(map[string]any)
		lines[str(l["number"])] = str(l["text"])
	}
	for _, m := range regexp.MustCompile(`\{"number":(\d+),"text":("(?:[^"\\]|\\.)*")\}`).FindAllStringSubmatch(example, -1) {
		var text string
		if err := json.Unmarshal([]byte(m[2]), &text); err != nil {
			t.Fatalf("the README's excerpt line %s: %v", m[1], err)
		}
		if lines[m[1]] != text {
			t.Errorf("the README's excerpt line %s is %q; the API answers %q", m[1], text, lines[m[1]])
		}
	}

	// /healthz: the README's comment names the body's fields.
	healthz := regexp.MustCompile(`/healthz\s+# (\{[^}]*\})`).FindStringSubmatch(readme)
	if healthz == nil {
		t.Fatal("the README shows no /healthz body")
	}
	_, body := get(t, base+"/healthz", "")
	var shown map[string]any
	if err := json.Unmarshal([]byte(healthz[1]), &shown); err != nil {
		t.Fatalf("the README's /healthz body %s: %v", healthz[1], err)
	}
	for k, v := range body {
		if _, ok := shown[k]; !ok {
			t.Errorf("/healthz answers %q (%v), which the README does not show", k, v)
		}
	}
	for k, v := range shown {
		if _, ok := body[k]; !ok {
			t.Errorf("the README shows /healthz's %q, which it does not answer", k)
		} else if v != "…" && v != body[k] {
			t.Errorf("the README shows /healthz's %s as %v; it answers %v", k, v, body[k])
		}
	}
}

// jsonBlockAfter returns the first ```json block of md after the text
// after.
func jsonBlockAfter(t *testing.T, md, after string) string {
	t.Helper()
	i := strings.Index(md, after)
	if i < 0 {
		t.Fatalf("the README does not show %q", after)
	}
	rest := md[i:]
	start := strings.Index(rest, "```json\n")
	if start < 0 {
		t.Fatalf("no json block after %q", after)
	}
	rest = rest[start+len("```json\n"):]
	return rest[:strings.Index(rest, "```")]
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return fmt.Sprint(int(v))
	}
	return fmt.Sprint(v)
}

// TestReadmeReviewExitStatuses: the README's section on quorum review
// runs the built binary, not go run, which reports every non-zero exit
// status as 1, and lists each status the command exits with.
func TestReadmeReviewExitStatuses(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Reviewing a local repository\n")
	if !ok {
		t.Fatal("README.md has no section \"Reviewing a local repository\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "go run ") {
			t.Errorf("README.md runs quorum review with go run, which loses its exit status: %s", line)
		}
	}
	for _, err := range []error{nil, verdictError{}, usageError{errors.New("x")}, incompleteError{}} {
		if item := fmt.Sprintf("\n- %d: ", exitCode(err, io.Discard)); !strings.Contains(section, item) {
			t.Errorf("README.md's review section does not list exit status %q", strings.TrimSpace(item))
		}
	}
}
