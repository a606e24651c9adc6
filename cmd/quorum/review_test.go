package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/webhook/fanout"
)

// gitRepo makes a real git repository in a temp dir: main holds base, and
// the branch feature adds head's files on top. It returns the directory.
func gitRepo(t *testing.T, base, head map[string]string) string {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(base)
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(head)
	r.Commit("head")
	return r.Dir
}

// leakRepo's change adds an AWS access key to a config file (a critical
// security finding) and nothing else, so every specialist is quick.
func leakRepo(t *testing.T) string {
	t.Helper()
	return gitRepo(t, map[string]string{"README.md": "# demo\n"},
		map[string]string{"config/app.ini": "[aws]\nregion = eu-west-1\naccess_key_id = AKIAIOSFODNN7EXAMPLA\n"})
}

// reviewRun runs quorum review and returns its output and exit status.
func reviewRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"review"}, args...), env(), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// reviewRequestsChanges runs quorum review, which must exit 1
// (request_changes), and returns its output.
func reviewRequestsChanges(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, code := reviewRun(t, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (request_changes); stderr:\n%s", code, stderr)
	}
	return stdout, stderr
}

func TestReviewText(t *testing.T) {
	t.Parallel()
	dir := leakRepo(t)
	out, errOut := reviewRequestsChanges(t, "--repo", dir)
	wantContains(t, "output", out,
		"config/app.ini\n  config/app.ini:3 CRITICAL [security] ",
		"(gitleaks:aws-access-token)",
		"Findings by specialist: logic 0, security 1, performance 0, tests 0.",
		"Verdict: request changes\n")
	if strings.Contains(out, "AKIAIOSFODNN7EXAMPLA") {
		t.Errorf("output shows the secret:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes in output that is not a terminal:\n%q", out)
	}
	for _, want := range []string{"quorum: security    started", "quorum: security    finished in ", "1 finding", "quorum: review fails: 1 finding at or above high"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, errOut)
		}
	}

	colored, _, _ := reviewRun(t, "--repo", dir, "--color", "always")
	if !strings.Contains(colored, "\x1b[1;31mCRITICAL\x1b[0m") {
		t.Errorf("--color always does not colour the severity:\n%q", colored)
	}
}

// A real repository whose change names a file with a terminal escape and
// has an OSC 52 (clipboard) sequence in a Go string: the text output shows
// both escaped, in the file heading, the location, the headline, the
// excerpt and the summary, and writes no control character of its own.
func TestReviewTextEscapesRepository(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n"},
		map[string]string{
			"main.go":              "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"%\x1b]52;c;aGk=\x07\", 1)\n}\n",
			"conf/\x1b[2Jkeys.ini": "access_key_id = AKIAIOSFODNN7EXAMPLA\n",
		})
	out, errOut := reviewRequestsChanges(t, "--repo", dir)
	wantContains(t, "output", out,
		"conf/\\x1b[2Jkeys.ini\n  conf/\\x1b[2Jkeys.ini:1 CRITICAL ",
		"main.go:6 MEDIUM [logic] fmt.Printf format %\\x1b has unknown verb \\x1b (go-vet:printf)\n",
		"      6 │ \tfmt.Printf(\"%\\x1b]52;c;aGk=\\x07\", 1)\n",
		"(conf/\\x1b[2Jkeys.ini:1)\n")
	if strings.ContainsAny(out+errOut, "\x1b\x07") {
		t.Errorf("raw control characters in the output:\n%q\nstderr:\n%q", out, errOut)
	}
}

func TestReviewExitStatus(t *testing.T) {
	t.Parallel()
	leak := leakRepo(t)
	clean := gitRepo(t, map[string]string{"README.md": "# demo\n"}, map[string]string{"docs/guide.md": "# Guide\n\nHow to use it.\n"})
	// Vendored Python is skipped: source nobody analysed.
	skipped := gitRepo(t, map[string]string{"README.md": "# demo\n"}, map[string]string{"docs/guide.md": "# Guide\n", "vendor/lib/x.py": "import os\nos.system(input())\n"})
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"clean change approves", []string{"--repo", clean}, 0},
		{"fail-on never", []string{"--repo", leak, "--fail-on", "never"}, 0},
		{"fail-on critical", []string{"--repo", leak, "--fail-on", "critical"}, 1},
		{"unanalysed source", []string{"--repo", skipped}, 3},
		{"unanalysed source, fail-on never", []string{"--repo", skipped, "--fail-on", "never"}, 3},
		{"unanalysed source let pass", []string{"--repo", skipped, "--fail-on-unanalysed=false"}, 0},
		{"findings fail before unanalysed source", []string{"--repo", leak, "--fail-on-unanalysed"}, 1},
		{"bad format", []string{"--repo", leak, "--format", "xml"}, 2},
		{"bad fail-on", []string{"--repo", leak, "--fail-on", "severe"}, 2},
		{"not a repository", []string{"--repo", t.TempDir()}, 2},
		{"unknown base", []string{"--repo", leak, "--base", "no-such-branch"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := reviewRun(t, tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, out, errOut)
			}
			if tc.name == "clean change approves" && !strings.Contains(out, "No findings on the changed lines.\n\nFindings by specialist") {
				t.Errorf("clean review:\n%s", out)
			}
			if tc.want == 3 && (!strings.Contains(out, "- vendor/lib/x.py: skipped as vendored") ||
				!strings.Contains(errOut, "quorum: review incomplete: 1 file of changed source not analysed")) {
				t.Errorf("an incomplete review that does not say why:\nstdout:\n%s\nstderr:\n%s", out, errOut)
			}
		})
	}
}

func TestReviewJSONIsTheAPIShape(t *testing.T) {
	t.Parallel()
	dir := leakRepo(t)
	out, errOut, code := reviewRun(t, "--repo", dir, "--format", "json", "--fail-on", "never")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"id", "owner", "repo", "pr_number", "head_sha", "verdict", "summary", "findings",
		"synthesized_at", "specialists_succeeded", "findings_count"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q in %s", k, out)
		}
	}
	if !strings.HasPrefix(got["id"].(string), "rev_") || got["owner"] != "local" || got["repo"] != filepath.Base(dir) ||
		got["pr_number"] != float64(0) || got["verdict"] != "request_changes" || got["findings_count"] != float64(1) {
		t.Errorf("review = %v", got)
	}
	f := got["findings"].([]any)[0].(map[string]any)
	if !strings.HasPrefix(f["id"].(string), "fnd_") || f["specialist"] != "security" || f["severity"] != "critical" ||
		f["path"] != "config/app.ini" || f["line"] != float64(3) || f["suggested_patch"] != nil {
		t.Errorf("finding = %v", f)
	}
}

func TestReviewSARIF(t *testing.T) {
	t.Parallel()
	schema := sarifSchema(t)
	dir := leakRepo(t)
	out, errOut, code := reviewRun(t, "--repo", dir, "--format", "sarif")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errOut)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("SARIF output does not validate against the SARIF 2.1.0 schema: %v\n%s", err, out)
	}
	var log sarifLog
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "quorum" || len(log.Runs[0].Results) != 1 {
		t.Fatalf("sarif = %+v", log)
	}
	run := log.Runs[0]
	r := run.Results[0]
	loc := r.Locations[0].PhysicalLocation
	if r.RuleID != "gitleaks:aws-access-token" || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID || r.Level != "error" ||
		loc.ArtifactLocation.URI != "config/app.ini" || loc.Region == nil || loc.Region.StartLine != 3 || loc.Region.EndLine != 3 ||
		len(r.PartialFingerprints[fingerprintKey]) != 32 {
		t.Errorf("result = %+v", r)
	}
	if run.Tool.Driver.Rules[0].Properties["security-severity"] != "9.5" {
		t.Errorf("rule = %+v, want security-severity 9.5", run.Tool.Driver.Rules[0])
	}
}

// TestSARIFFix turns a one-hunk suggested patch into a SARIF fix, and the
// result, with a file-level finding too, still validates.
func TestSARIFFix(t *testing.T) {
	t.Parallel()
	schema := sarifSchema(t)
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"},
		map[string]string{"a.go": "package a\n\nfunc F() {\n\tx := 1\n\t_ = x\n}\n"})
	ch, err := change.NewLocal(dir).Change(context.Background(), change.Ref{Base: "main", Head: "feature"})
	if err != nil {
		t.Fatal(err)
	}
	patch := "--- a/a.go\n+++ b/a.go\n@@ -3,3 +3,3 @@\n func F() {\n-\tx := 1\n+\tx := 2\n \t_ = x\n"
	r := review.Full{Findings: []review.Finding{
		{Specialist: "logic", Category: "logic", Severity: "medium", Path: "a.go", Line: 4, EndLine: 4, Headline: "x is 1",
			Rule: "go-vet:x", Fingerprint: "f1", SuggestedPatch: &patch},
		{Specialist: "tests", Category: "tests", Severity: "low", Path: "a.go", Headline: "no test", Rule: "quorum:untested-change", Fingerprint: "f2"},
	}}
	// As the analyzers write it, with git's header, and without.
	withHeader := "diff --git a/a.go b/a.go\n" + patch
	r.Findings[0].SuggestedPatch = &withHeader
	if fixes := toSARIF(context.Background(), ch, r).Runs[0].Results[0].Fixes; len(fixes) != 1 {
		t.Fatalf("fixes of a patch with git's header = %+v, want one", fixes)
	}
	r.Findings[0].SuggestedPatch = &patch
	out := toSARIF(context.Background(), ch, r)
	fixes := out.Runs[0].Results[0].Fixes
	if len(fixes) != 1 {
		t.Fatalf("fixes = %+v, want one", fixes)
	}
	rep := fixes[0].ArtifactChanges[0].Replacements[0]
	if rep.DeletedRegion != (sarifRegion{StartLine: 3, StartColumn: 1, EndLine: 6, EndColumn: 1}) ||
		rep.InsertedContent.Text != "func F() {\n\tx := 2\n\t_ = x\n" {
		t.Errorf("replacement = %+v %q", rep.DeletedRegion, rep.InsertedContent.Text)
	}
	if out.Runs[0].Results[1].Locations[0].PhysicalLocation.Region != nil {
		t.Errorf("a file-level finding has a region")
	}
	body, _ := json.Marshal(out)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("SARIF with a fix does not validate: %v\n%s", err, body)
	}
}

// sarifSchema compiles the SARIF 2.1.0 JSON schema (OASIS), which gosec's
// module ships as test data; the go command fetches the module into the
// module cache if it is not there yet.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/securego/gosec/v2").Output()
	if err != nil {
		t.Fatalf("go mod download gosec (for its copy of the SARIF schema): %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download -json: %v %s", err, out)
	}
	f, err := os.Open(filepath.Join(mod.Dir, "report", "sarif", "testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReviewSaveServes saves a review with --save and reads it back from
// quorum serve: the API returns what --format json printed, and the events
// were recorded.
func TestReviewSaveServes(t *testing.T) {
	t.Parallel()
	repoDir := leakRepo(t)
	data := storetest.SQLiteDir(t)
	out, errOut, code := reviewRun(t, "--repo", repoDir, "--format", "json", "--save", "--data-dir", data,
		"--owner", "acme", "--name", "api", "--pr", "12")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errOut)
	}
	var printed map[string]any
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatal(err)
	}
	id := printed["id"].(string)
	if !strings.Contains(errOut, "saved review "+id+" of acme/api#12") {
		t.Errorf("stderr does not report the save:\n%s", errOut)
	}

	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, "acme")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := event.List(ctx, db.Reader(), acct.ID)
	if err != nil || len(evs) != 2 {
		db.Close()
		t.Fatalf("events %v, err %v; want review.completed and finding.created", evs, err)
	}
	// The review's duration is stored for the dashboard: reading the
	// repository and running the specialists take far more than 1 ms.
	var ms *int64
	err = db.Reader().QueryRow(ctx, `SELECT duration_ms FROM reviews WHERE id = $1`, id).Scan(&ms)
	db.Close()
	if err != nil || ms == nil || *ms <= 0 {
		t.Errorf("stored duration %v (err %v), want some milliseconds", ms, err)
	}

	base := serve(t, env(), "--data-dir", data)
	tok, tokErr, err := quorum(t, env(), "token", "create", "--account", "acme", "--scope", "reviews:read", "--data-dir", data)
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, tokErr)
	}
	status, served := get(t, base+"/v1/reviews/"+id, strings.TrimSpace(strings.Split(tok, "\n")[0]))
	if status != 200 {
		t.Fatalf("GET review: %d %v", status, served)
	}
	a, _ := json.Marshal(served)
	b, _ := json.Marshal(printed)
	if string(a) != string(b) {
		t.Errorf("served review differs from the printed one:\nserved  %s\nprinted %s", a, b)
	}
}

// TestReviewRateLimit: over the account's review rate limit, --save skips
// the review, records review.failed rate_limit, and exits 2.
func TestReviewRateLimit(t *testing.T) {
	t.Parallel()
	repoDir := leakRepo(t)
	data := storetest.SQLiteDir(t)
	// One review per window of about a century: no boundary falls mid-test.
	args := []string{"--repo", repoDir, "--save", "--data-dir", data, "--owner", "acme", "--name", "api",
		"--max-reviews", "1", "--review-window", "1000000h", "--fail-on", "never"}
	if _, errOut, code := reviewRun(t, args...); code != 0 {
		t.Fatalf("first review: exit %d; stderr:\n%s", code, errOut)
	}
	out, errOut, code := reviewRun(t, args...)
	if code != 2 || out != "" || !strings.Contains(errOut, "review rate limit reached: 1 of 1 reviews used") {
		t.Fatalf("second review: exit %d, stdout %q; stderr:\n%s\nwant exit 2 and the rate limit named", code, out, errOut)
	}
	if strings.Contains(errOut, "started") {
		t.Errorf("specialists ran over the rate limit:\n%s", errOut)
	}

	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	acct, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, "acme")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := event.List(ctx, db.Reader(), acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	want := []string{event.ReviewCompleted, event.FindingCreated, event.ReviewFailed}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", names, want)
	}
	var failed event.ReviewFailedData
	if err := json.Unmarshal(evs[2].Data, &failed); err != nil {
		t.Fatal(err)
	}
	if failed.Reason != event.ReasonRateLimit || failed.Owner != "acme" || failed.Repo != "api" || len(failed.HeadSHA) != 40 {
		t.Errorf("review.failed = %+v, want rate_limit for acme/api at the head", failed)
	}
}

// TestReviewSaveWithWebhook: --save on an account with a webhook endpoint
// stores the review, its events and their deliveries' jobs (issue 10 item
// 1: it failed with "job queue not configured"), on both databases.
func TestReviewSaveWithWebhook(t *testing.T) {
	t.Parallel()
	repoDir := leakRepo(t)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			cfg := store.Config{DataDir: t.TempDir()}
			dbArgs := []string{"--data-dir", cfg.DataDir}
			if backend == "postgres" {
				cfg.URL = storetest.PostgresURL(t)
				dbArgs = []string{"--database-url", cfg.URL}
			}
			if _, errOut, err := quorum(t, env(), append([]string{"webhook", "create", "--account", "acme", "--url", "http://127.0.0.1:18909/h"}, dbArgs...)...); err != nil {
				t.Fatalf("webhook create: %v\n%s", err, errOut)
			}
			_, errOut, code := reviewRun(t, append([]string{"--repo", repoDir, "--save", "--owner", "acme", "--name", "widgets", "--pr", "42"}, dbArgs...)...)
			if code != 1 || !strings.Contains(errOut, "saved review rev_") {
				t.Fatalf("exit %d, want 1 (a critical finding) and the review saved; stderr:\n%s", code, errOut)
			}
			ctx := context.Background()
			db, err := store.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var jobs int
			if err := db.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = $1`, (fanout.DeliverArgs{}).Kind()).Scan(&jobs); err != nil {
				t.Fatal(err)
			}
			if jobs != 2 {
				t.Errorf("%d delivery jobs, want 2 (review.completed and finding.created)", jobs)
			}
		})
	}
}

// TestReviewNothing: on the default branch without --base there is
// nothing to review, which is said, with how to pick a change, and exits
// 2 (issue 10 item 6: it printed "Reviewed 0 files" and approved).
func TestReviewNothing(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"README.md": "# demo\n"})
	r.Commit("base")
	r.Write(map[string]string{"config/app.ini": "[aws]\naccess_key_id = AKIAIOSFODNN7EXAMPLA\n"}) // uncommitted
	for _, args := range [][]string{
		{"--repo", r.Dir},
		{"--repo", r.Dir, "--base", "HEAD"},
	} {
		out, errOut, code := reviewRun(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "nothing to review") || !strings.Contains(errOut, "--base") || !strings.Contains(errOut, "--uncommitted") {
			t.Errorf("review %v: exit %d, stdout %q; stderr:\n%s\nwant exit 2 and nothing to review, naming --base and --uncommitted", args, code, out, errOut)
		}
		if strings.Contains(errOut, "started") {
			t.Errorf("review %v ran specialists on nothing:\n%s", args, errOut)
		}
	}
}

// TestReviewUncommitted: --uncommitted reviews the work tree's changes
// against HEAD, untracked files included.
func TestReviewUncommitted(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"README.md": "# demo\n"})
	r.Commit("base")
	r.Write(map[string]string{"config/app.ini": "[aws]\nregion = eu-west-1\naccess_key_id = AKIAIOSFODNN7EXAMPLA\n"})
	out, errOut, code := reviewRun(t, "--repo", r.Dir, "--uncommitted")
	if code != 1 || !strings.Contains(out, "config/app.ini:3 CRITICAL") {
		t.Fatalf("exit %d, want 1 and the key in the untracked file found; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	r.Git("add", "config/app.ini")
	r.Commit("head")
	if _, errOut, code := reviewRun(t, "--repo", r.Dir, "--uncommitted"); code != 2 || !strings.Contains(errOut, "no uncommitted changes") ||
		strings.Contains(errOut, "review the work tree's uncommitted changes with --uncommitted") || !strings.Contains(errOut, "drop --uncommitted") {
		t.Errorf("a clean work tree: exit %d, stderr:\n%s\nwant exit 2, no uncommitted changes, and the way out not --uncommitted itself", code, errOut)
	}
	if _, errOut, code := reviewRun(t, "--repo", r.Dir, "--uncommitted", "--head", "HEAD~1"); code != 2 || !strings.Contains(errOut, "no --head") {
		t.Errorf("--uncommitted with --head: exit %d, stderr:\n%s", code, errOut)
	}
}
