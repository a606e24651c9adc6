package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/polyglot"
)

// analyzersDir is where the tests find the real analyzers: where
// scripts/test and .ci/run install them ($QUORUM_ANALYZERS_DIR, else the
// default).
func analyzersDir() string {
	if d := os.Getenv("QUORUM_ANALYZERS_DIR"); d != "" {
		return d
	}
	return polyglot.DefaultDir()
}

// polyglotRepo's change adds a typical bug in each language beside Go.
func polyglotRepo(t *testing.T) (dir, base, head string) {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"README.md": "# demo\n", "go.mod": goanalysistest.GoMod("example.com/app"), "app.go": "package app\n\nfunc One() int { return 1 }\n"})
	base = r.Commit("base")
	r.Write(map[string]string{
		"tools/report.py": "import sqlite3\n\n\ndef rows(db, who):\n    return db.execute(\"SELECT * FROM audit WHERE user = '%s'\" % who)\n",
		"web/total.ts":    "export function total(xs: number[]): number {\n  let t = 0;\n  for (const x of xs) {\n    if (x === NaN) {\n      continue;\n    }\n    t += x;\n  }\n  return t;\n}\n",
		"ci/deploy.sh":    "#!/bin/bash\nmkdir -p out\ncd $1\n./build.sh\n",
		"app.go":          "package app\n\nfunc One() int { return 1 }\n\nfunc Two() int { return 2 }\n",
		"Dockerfile":      "FROM debian:12\nRUN curl -fsSL https://example.com/get.sh | sh\n",
	})
	head = r.Commit("head")
	return r.Dir, base, head
}

// The analyzers of every language find their bugs through quorum review,
// with the rule in the provenance, and the summary names each language's
// engine.
func TestReviewAnalysesEveryLanguage(t *testing.T) {
	t.Parallel()
	dir, base, head := polyglotRepo(t)
	out, errOut, code := reviewRun(t, "--repo", dir, "--base", base, "--head", head, "--format", "json", "--analyzers-dir", analyzersDir())
	if code != 0 && code != 1 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var full map[string]any
	if err := json.Unmarshal([]byte(out), &full); err != nil {
		t.Fatal(err)
	}
	// The review's JSON is the API's, which names the rule in the
	// finding's provenance (GET /v1/findings/{id}); the body says it too.
	found := map[string]bool{}
	for _, f := range full["findings"].([]any) {
		f := f.(map[string]any)
		found[f["path"].(string)+" "+f["body"].(string)] = true
	}
	for _, want := range [][2]string{
		{"tools/report.py", "Found by ruff 0.17.6 (rule S608 hardcoded-sql-expression)"},
		{"web/total.ts", "Found by oxlint 1.94.0 (rule eslint/use-isnan)"},
		{"ci/deploy.sh", "Found by shellcheck 0.11.0 (rule SC2164)"},
		{"Dockerfile", "Found by hadolint 2.15.1 (rule DL4006)"},
	} {
		ok := false
		for k := range found {
			ok = ok || strings.HasPrefix(k, want[0]+" ") && strings.Contains(k, want[1])
		}
		if !ok {
			t.Errorf("no finding on %s by %q; findings: %v", want[0], want[1], found)
		}
	}
	summary := full["summary"].(string)
	for _, want := range []string{"Python (ruff)", "TypeScript (oxlint)", "shell (shellcheck)", "Dockerfile (hadolint)", "Go (Go analyzers)"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(summary, "Not analysed") {
		t.Errorf("summary says something was not analysed:\n%s", summary)
	}
}

// Without the analyzers, their languages are named as not analysed and
// the change is not approved.
func TestReviewWithoutAnalyzersSaysSo(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(git)+string(os.PathListSeparator)+filepath.Dir(goCmd))
	dir, base, head := polyglotRepo(t)
	out, errOut, code := reviewRun(t, "--repo", dir, "--base", base, "--head", head, "--format", "json", "--analyzers-dir", t.TempDir())
	if code != 3 {
		t.Fatalf("exit %d, want 3: source was not analysed; stderr:\n%s", code, errOut)
	}
	var full map[string]any
	if err := json.Unmarshal([]byte(out), &full); err != nil {
		t.Fatal(err)
	}
	summary := full["summary"].(string)
	for _, want := range []string{"tools/report.py: ruff is not installed (quorum analyzers install)", "Python (not analysed)", "Dockerfile (not analysed)"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if full["verdict"] == "approve" {
		t.Errorf("unanalysed source approved:\n%s", summary)
	}
}

// A file that crashes ruff is named as not analysed, the other Python
// files' findings are reported, and the review does not pass a CI gate.
func TestReviewHostileFileDoesNotPass(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"README.md": "# demo\n"}, map[string]string{
		"tools/crash.py": "x = 1" + strings.Repeat("+1", 500_000) + "\n",
		"tools/run.py":   "import subprocess\n\n\ndef run(cmd):\n    subprocess.call(cmd, shell=True)\n",
		"tools/ok.py":    "def one():\n    return 1\n",
	})
	out, errOut, code := reviewRun(t, "--repo", dir, "--analyzers-dir", analyzersDir(), "--fail-on", "critical")
	if code != 3 {
		t.Fatalf("exit %d, want 3; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"Not analysed: 1 file of changed source", "- tools/crash.py: ruff failed: killed (signal: aborted", "tools/run.py:5", "Verdict: request changes"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// serve's review job runs the analyzers too.
func TestServeReviewAnalysesEveryLanguage(t *testing.T) {
	t.Parallel()
	dir, base, head := polyglotRepo(t)
	full := serveReview(t, env("QUORUM_ANALYZERS_DIR", analyzersDir()), dir, base, head)
	if !hasFinding(full, "security", "tools/report.py", 5) || !hasFinding(full, "logic", "ci/deploy.sh", 3) || !hasFinding(full, "logic", "web/total.ts", 4) {
		t.Errorf("findings %v", full["findings"])
	}
	if s := full["summary"].(string); !strings.Contains(s, "Python (ruff)") {
		t.Errorf("summary:\n%s", s)
	}
}

// analyzers list says what is found and exits 1 when something is missing.
func TestAnalyzersList(t *testing.T) {
	t.Parallel()
	out, _, err := quorum(t, env(), "analyzers", "list", "--dir", analyzersDir())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"ruff", "0.17.6", "shellcheck", "0.11.0", "hadolint", "2.15.1", "oxlint", "1.94.0", "JavaScript, TypeScript", "type-aware rules: oxlint-tsgolint " + polyglot.TsgolintVersion} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	aligned(t, out)
	// Missing analyzers' rows stay in the columns too.
	missing, _, _ := quorum(t, env(), "analyzers", "list", "--dir", t.TempDir())
	aligned(t, missing)
	out, _, err = quorum(t, env(), "analyzers", "list", "--json", "--dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("err %v with nothing installed", err)
	}
	var list []analyzerJSON
	if jerr := json.Unmarshal([]byte(out), &list); jerr != nil || len(list) != 4 {
		t.Fatalf("%v: %s", jerr, out)
	}
}

// aligned checks that each analyzer's row of list's table starts its
// columns where the header's do.
func aligned(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	header := lines[0]
	var cols []int
	for _, name := range []string{"VERSION", "LANGUAGES", "PATH OR PROBLEM"} {
		i := strings.Index(header, name)
		if i < 0 {
			t.Fatalf("no %s column: %q", name, header)
		}
		cols = append(cols, i)
	}
	for _, l := range lines[1:5] {
		for _, c := range cols {
			if len(l) <= c || l[c-1] != ' ' || l[c] == ' ' {
				t.Errorf("row %q does not start a column at %d, as the header %q does", l, c, header)
			}
		}
	}
}
