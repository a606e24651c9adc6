package polyglot_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/sandbox"
	"github.com/quorum-review/quorum/internal/specialist"
)

var (
	engineOnce sync.Once
	engine     *polyglot.Engine
)

// installed returns an engine over the analyzers `quorum analyzers
// install` put in the default directory (scripts/test and .ci/run install
// them); a test of the real analyzers fails without them, saying how to
// install them.
func installed(t *testing.T) *polyglot.Engine {
	t.Helper()
	engineOnce.Do(func() {
		engine = polyglot.New(context.Background(), polyglot.Config{Dir: os.Getenv("QUORUM_ANALYZERS_DIR")})
		// Its tests run in parallel: one's change is not forgotten, and
		// analysed again, while it asks for another specialist's findings.
		engine.KeepRunsForTest(64)
	})
	for _, f := range engine.Found() {
		if !f.Usable() {
			t.Fatalf("%s; run `go run ./cmd/quorum analyzers install` (scripts/test does)", f.Why())
		}
	}
	return engine
}

// review runs the engine for every specialist, as the pipeline does,
// collecting coverage.
func review(t *testing.T, e *polyglot.Engine, r *changetest.Repo, base, head string, rules specialist.Rules) (map[string][]specialist.Finding, map[string]specialist.Coverage) {
	t.Helper()
	c := r.Change(base, head)
	var mu sync.Mutex
	cov := map[string]specialist.Coverage{}
	ctx := specialist.WithCoverage(specialist.WithRules(context.Background(), rules), func(cv specialist.Coverage) {
		mu.Lock()
		defer mu.Unlock()
		cov[cv.Path] = cv
	})
	out := map[string][]specialist.Finding{}
	for _, name := range []string{specialist.Logic, specialist.Security, specialist.Performance} {
		fs, err := e.Findings(ctx, c, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range fs {
			if err := f.Validate(); err != nil {
				t.Errorf("invalid finding %+v: %v", f, err)
			}
		}
		out[name] = fs
	}
	return out, cov
}

func rulesOf(fs []specialist.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s:%d", f.Rule, f.Path, f.Line))
	}
	slices.Sort(out)
	return out
}

const basePy = `import sqlite3


def user(db, name):
    return db.execute("SELECT * FROM users WHERE name = ?", (name,))
`

const headPy = `import os
import sqlite3
import subprocess


def user(db, name):
    return db.execute("SELECT * FROM users WHERE name = '%s'" % name)


def archive(path):
    os.system("tar czf backup.tgz " + path)
    subprocess.call("ls -l", shell=True)


def items(x=[]):
    unused = 1
    return x
`

const headSh = `#!/bin/sh
dir=$1
cd $dir
rm -rf $dir/cache
cp $dir/a $dir/b
echo $dir
`

const headJS = `export function check(x) {
  if (x === NaN) {
    return false;
  }
  try {
    return typeof x == "strnig";
  } finally {
    return true;
  }
}
`

const headDockerfile = `FROM debian:12
RUN curl -fsSL https://example.com/install.sh | sh
RUN apt-get update && apt-get install -y curl
USER root
`

// Every language's typical bugs are found on the lines the change added,
// by the specialist of their kind, with the rule in the provenance; what
// the repository already had is not reported; style is not reported.
func TestEngineFindsEachLanguagesBugs(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"app/db.py": basePy, "README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"app/db.py": headPy, "scripts/clean.sh": headSh, "web/check.js": headJS, "Dockerfile": headDockerfile})
	head := r.Commit("head")

	got, cov := review(t, e, r, base, head, specialist.Rules{})
	want := map[string][]string{
		specialist.Security: {
			"hadolint:DL3002 Dockerfile:4",
			"hadolint:DL4006 Dockerfile:2",
			"ruff:S605 app/db.py:11",
			"ruff:S608 app/db.py:7",
		},
		specialist.Logic: {
			"oxlint:eslint/no-unsafe-finally web/check.js:8",
			"oxlint:eslint/use-isnan web/check.js:2",
			"oxlint:eslint/valid-typeof web/check.js:6",
			"ruff:B006 app/db.py:15",
			"shellcheck:SC2086 scripts/clean.sh:4",
			"shellcheck:SC2164 scripts/clean.sh:3",
		},
	}
	for _, name := range []string{specialist.Security, specialist.Logic, specialist.Performance} {
		if g := rulesOf(got[name]); !slices.Equal(g, want[name]) {
			t.Errorf("%s findings:\n  %s\nwant\n  %s", name, strings.Join(g, "\n  "), strings.Join(want[name], "\n  "))
		}
	}
	for _, p := range []string{"app/db.py", "scripts/clean.sh", "web/check.js", "Dockerfile"} {
		if cv := cov[p]; !cv.Analysed {
			t.Errorf("%s not reported analysed: %+v", p, cv)
		}
	}
	if _, ok := cov["README.md"]; ok {
		t.Errorf("README.md has coverage %+v; it is not source", cov["README.md"])
	}
	// The shell fix is a patch git applies.
	for _, f := range got[specialist.Logic] {
		if f.Rule == "shellcheck:SC2164" && (f.SuggestedPatch == "" || !strings.Contains(f.Body, "shellcheck 0.11.0")) {
			t.Errorf("SC2164 without a patch or provenance: %+v", f)
		}
	}
}

// A long script is checked too (without shellcheck's slow data-flow
// analysis), and $* unquoted is said once.
func TestEngineChecksALongScript(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	long := "#!/bin/bash\n" + strings.Repeat("echo \"step\"\n", 4500) + "exec \"$tool\" $*\n"
	r.Write(map[string]string{"long.sh": long})
	head := r.Commit("head")
	got, cov := review(t, e, r, base, head, specialist.Rules{})
	if !cov["long.sh"].Analysed {
		t.Fatalf("long.sh not analysed: %+v", cov["long.sh"])
	}
	if g := rulesOf(got[specialist.Logic]); len(g) != 1 || !strings.HasSuffix(g[0], "long.sh:4502") {
		t.Errorf("logic findings %v, want one on the unquoted $* of line 4502", g)
	}
}

// One mistake repeated is one comment: an undefined name used three
// times is reported on its first use, naming the others.
func TestEngineSaysARepeatedReportOnce(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"pages.py": "def go(w):\n    w.show(CREATE_PAGE)\n    w.back(CREATE_PAGE)\n    return CREATE_PAGE\n"})
	head := r.Commit("head")
	got, _ := review(t, e, r, base, head, specialist.Rules{})
	fs := got[specialist.Logic]
	if g := rulesOf(fs); !slices.Equal(g, []string{"ruff:F821 pages.py:2"}) {
		t.Fatalf("logic findings %v, want one F821 on line 2", g)
	}
	if !strings.Contains(fs[0].Body, "The same on lines 3 and 4.") {
		t.Errorf("body does not name the other uses:\n%s", fs[0].Body)
	}
}

// A repeat of the same report in another hunk of the diff is read there,
// apart from the first: it gets its own comment (modman's rm -rf $dest,
// 15 lines below its [ -L $dest ]). Repeats within a hunk are named in the
// first's body. An undefined name is defined once, however far apart its
// uses: one comment.
func TestEngineSaysARepeatInAnotherHunk(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	filler := strings.Repeat("echo step\n", 15)
	script := func(q string) string {
		return "#!/bin/sh\ndest=$1\nif [ -L " + q + " ]; then\n  rm " + q + "\nfi\n" + filler + "rm -rf " + q + "\n"
	}
	pyFiller := strings.Repeat("    print(w)\n", 15)
	py := func(page string) string {
		return "MAIN_PAGE = 1\n\n\ndef go(w):\n    w.show(" + page + ")\n" + pyFiller + "    w.back(" + page + ")\n"
	}
	r.Write(map[string]string{"link.sh": script(`"$dest"`), "pages.py": py("MAIN_PAGE")})
	base := r.Commit("base")
	r.Write(map[string]string{"link.sh": script("$dest"), "pages.py": py("CREATE_PAGE")})
	head := r.Commit("head")
	got, _ := review(t, e, r, base, head, specialist.Rules{})
	fs := got[specialist.Logic]
	if g := rulesOf(fs); !slices.Equal(g, []string{"ruff:F821 pages.py:5", "shellcheck:SC2086 link.sh:21", "shellcheck:SC2086 link.sh:3"}) {
		t.Fatalf("logic findings %v, want F821 on line 5, SC2086 on lines 3 and 21", g)
	}
	fs = slices.DeleteFunc(fs, func(f specialist.Finding) bool {
		if f.Path == "pages.py" && !strings.HasSuffix(f.Body, "The same on line 21.") {
			t.Errorf("body of the undefined name:\n%s", f.Body)
		}
		return f.Path == "pages.py"
	})
	for _, f := range fs {
		if (f.Line == 3) != strings.HasSuffix(f.Body, "The same on line 4.") || (f.Line == 21) == strings.Contains(f.Body, "The same on") {
			t.Errorf("body of line %d:\n%s", f.Line, f.Body)
		}
	}
}

// Promises of different calls left floating are different mistakes, each
// its own comment, however close; the same call left floating twice is
// one (tv2/v-connection's reverted awaits of two checks).
func TestEngineTellsDifferentCallsApart(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"rundown.ts": `export class Rundown {
  async checkBuilt(): Promise<void> {}
  async assertAbsent(id: string): Promise<void> {
    if (id === "") throw new Error("empty");
  }
  create(id: string): string {
    this.checkBuilt();
    this.assertAbsent(id);
    this.checkBuilt();
    return id;
  }
}
`})
	head := r.Commit("head")
	got, _ := review(t, e, r, base, head, specialist.Rules{})
	want := []string{"oxlint:typescript/no-floating-promises rundown.ts:7", "oxlint:typescript/no-floating-promises rundown.ts:8"}
	fs := got[specialist.Logic]
	if g := rulesOf(fs); !slices.Equal(g, want) {
		t.Fatalf("logic findings %v, want %v", g, want)
	}
	if !strings.HasSuffix(fs[0].Body, "The same on line 9.") || strings.Contains(fs[1].Body, "The same on") {
		t.Errorf("bodies:\n%s\n--\n%s", fs[0].Body, fs[1].Body)
	}
}

// The engine tells what each analyzer did: how many files, how long.
func TestEngineTellsWhatEachAnalyzerDid(t *testing.T) {
	t.Parallel()
	installed(t)
	var mu sync.Mutex
	ran := map[string]int{}
	e := polyglot.New(context.Background(), polyglot.Config{Dir: os.Getenv("QUORUM_ANALYZERS_DIR"), Ran: func(tool string, files int, took time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil || took <= 0 {
			t.Errorf("%s: took %s, err %v", tool, took, err)
		}
		ran[tool] += files
	}})
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.py": "x = 1\n", "b.py": "y = 2\n", "c.sh": "#!/bin/sh\necho hi\n"})
	head := r.Commit("head")
	review(t, e, r, base, head, specialist.Rules{})
	if want := map[string]int{"ruff": 2, "shellcheck": 1}; !maps.Equal(ran, want) {
		t.Errorf("ran %v, want %v (once per change, whichever specialist asks)", ran, want)
	}
}

// A report on a line the change only moved is the base's, not new.
func TestEngineDropsWhatTheBaseHad(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"run.py": "import os\n\n\ndef go(cmd):\n    os.system(\"sh -c \" + cmd)\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"run.py": "import os\n\n\ndef go(cmd):\n    \"\"\"Run cmd.\"\"\"\n    if cmd:\n        os.system(\"sh -c \" + cmd)\n"})
	head := r.Commit("head")
	got, _ := review(t, e, r, base, head, specialist.Rules{})
	if fs := got[specialist.Security]; len(fs) != 0 {
		t.Errorf("reported what the base had: %v", rulesOf(fs))
	}
}

// A line the change adds that repeats a report the base had elsewhere in
// the file is new: the base's report is the one on the line left as it
// was.
func TestEngineReportsARepeatOfWhatTheBaseHad(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"a.js": "export function f(json) {\n  try {\n    return JSON.parse(json);\n  } catch (e) {\n    return eval(json);\n  }\n}\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.js": "export function f(json) {\n  if (json.startsWith(\"(\")) {\n    return eval(json);\n  }\n  try {\n    return JSON.parse(json);\n  } catch (e) {\n    return eval(json);\n  }\n}\n"})
	head := r.Commit("head")
	got, _ := review(t, e, r, base, head, specialist.Rules{})
	if g := rulesOf(got[specialist.Security]); !slices.Equal(g, []string{"oxlint:eslint/no-eval a.js:3"}) {
		t.Errorf("security findings %v, want the added eval of line 3", g)
	}
}

// A repository's .quorum.yaml turns rules on and off.
func TestEngineFollowsTheRepositorysRules(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.py": "import random\n\n\ndef token(db, n):\n    db.execute(\"DELETE FROM t WHERE id = %s\" % n)\n    return random.random()\n"})
	head := r.Commit("head")
	got, _ := review(t, e, r, base, head, specialist.Rules{Enable: []string{"ruff:S311"}, Disable: []string{"ruff:S608"}})
	if g := rulesOf(got[specialist.Security]); !slices.Equal(g, []string{"ruff:S311 a.py:6"}) {
		t.Errorf("security findings %v, want only the enabled S311", g)
	}
}

// A missing analyzer is that language's note, not a silent pass; a file
// an analyzer cannot parse is not analysed, and says why.
func TestEngineSaysWhatItDidNotAnalyse(t *testing.T) {
	installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.py": "def f(:\n", "b.sh": "#!/bin/sh\nif [ x; then\n", "c.zsh": "echo $x\n", "t.ts": "export const a = 1;\n"})
	head := r.Commit("head")

	_, cov := review(t, installed(t), r, base, head, specialist.Rules{})
	for p, want := range map[string]string{"a.py": "ruff could not parse it", "b.sh": "shellcheck could not parse it", "c.zsh": "shellcheck does not check zsh"} {
		if cv := cov[p]; cv.Analysed || !strings.Contains(cv.Reason, want) {
			t.Errorf("%s: %+v, want not analysed because %q", p, cv, want)
		}
	}
	if !cov["t.ts"].Analysed {
		t.Errorf("t.ts: %+v", cov["t.ts"])
	}

	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(git))
	bare := polyglot.New(context.Background(), polyglot.Config{Dir: t.TempDir()})
	_, cov = review(t, bare, r, base, head, specialist.Rules{})
	if cv := cov["a.py"]; cv.Analysed || cv.Reason != "ruff is not installed (quorum analyzers install)" {
		t.Errorf("without ruff a.py has %+v", cv)
	}
}

// A hanging analyzer is stopped at the time limit and its files are not
// analysed; the review goes on.
func TestEngineStopsAnAnalyzerThatHangs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'ShellCheck\nversion: 0.11.0'; exit 0; fi\nsleep 60\n"
	if err := sandbox.WriteExecutable(filepath.Join(bin, "shellcheck"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Fatal(err)
	}
	e := polyglot.New(context.Background(), polyglot.Config{Dir: dir, Timeout: 300e6})
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.sh": "#!/bin/sh\necho $1\n"})
	head := r.Commit("head")
	_, cov := review(t, e, r, base, head, specialist.Rules{})
	if cv := cov["a.sh"]; cv.Analysed || !strings.Contains(cv.Reason, "did not finish within 300ms") {
		t.Errorf("a.sh: %+v", cv)
	}
}

// An analyzer that a file makes want more memory than its sandbox allows
// is stopped, and the review says so for that file: the file is not
// analysed, and why names the limit (issue 17 item 3). The analyzer here is
// a stand-in for ruff that tries to allocate 1 GiB under a 256 MiB limit.
func TestEngineSaysAnAnalyzerRanOutOfMemory(t *testing.T) {
	dir, err := os.MkdirTemp("", "quorum-analyzers-oom-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := `#!/usr/bin/python3
import sys
if "--version" in sys.argv:
    print("ruff ` + polyglot.Ruff.Version + `")
    sys.exit(0)
b = bytearray(1 << 30)
print("[]")
`
	if err := sandbox.WriteExecutable(filepath.Join(bin, "ruff"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	defer polyglot.SetLimitsForTest(sandbox.Limits{Memory: 256 << 20, CPU: 30 * time.Second, FileSize: 16 << 20, OpenFiles: 256, Processes: 256})()
	e := polyglot.New(context.Background(), polyglot.Config{Dir: dir})
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"app.py": "x = 1\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"app.py": "import os\nos.system(input())\n"})
	head := r.Commit("head")
	_, cov := review(t, e, r, base, head, specialist.Rules{})
	got := cov["app.py"]
	if got.Analysed || !strings.Contains(got.Reason, "memory") || !strings.Contains(got.Reason, "limits") {
		t.Errorf("app.py: %+v; want it not analysed, the memory limit named", got)
	}
}

// A report that spans a whole large file costs no more than one on a
// line: a 0.9 MB Python file whose S608 string runs 300,000 lines is
// reviewed in seconds, not the minutes a line lookup from the file's start
// per line took.
func TestEngineReportSpanningAHugeFileIsCheap(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	big := "def find(cur, name):\n    cur.execute(\"\"\"SELECT * FROM users WHERE name = '%s'\n" +
		strings.Repeat("xx\n", 300_000) + "\"\"\" % name)\n"
	r.Write(map[string]string{"big.py": big})
	head := r.Commit("head")
	start := time.Now()
	got, cov := review(t, e, r, base, head, specialist.Rules{})
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("review took %s", took)
	}
	if !cov["big.py"].Analysed {
		t.Fatalf("big.py not analysed: %+v", cov["big.py"])
	}
	if g := rulesOf(got[specialist.Security]); !slices.Equal(g, []string{"ruff:S608 big.py:2"}) {
		t.Errorf("security findings %v, want S608 on line 2", g)
	}
}

// Source known by its first line or by a name the docs list is given to
// its analyzer: an extension-less Python or bash script (through env, with
// flags, or from /usr/local), direnv's .envrc, an upper-case extension and
// a *.Dockerfile of any case.
func TestEngineAnalysesScriptsByShebangAndName(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{
		"bin/py":         "#!/usr/bin/env python3\nimport os\nos.system(input())\n",
		"bin/local":      "#!/usr/local/bin/bash\ndir=$1\ncd $dir\n",
		"bin/env-s":      "#!/usr/bin/env -S bash\ndir=$1\ncd $dir\n",
		".envrc":         "dir=$1\ncd $dir\n",
		"x.PY":           "import os\nos.system(input())\n",
		"app.Dockerfile": "FROM debian:12\nUSER root\n",
	})
	head := r.Commit("head")
	got, cov := review(t, e, r, base, head, specialist.Rules{})
	for p, tool := range map[string]string{"bin/py": "ruff", "bin/local": "shellcheck", "bin/env-s": "shellcheck", ".envrc": "shellcheck", "x.PY": "ruff", "app.Dockerfile": "hadolint"} {
		if cv := cov[p]; !cv.Analysed || cv.Engine != tool {
			t.Errorf("%s: coverage %+v, want analysed by %s", p, cv, tool)
		}
	}
	all := append(rulesOf(got[specialist.Security]), rulesOf(got[specialist.Logic])...)
	for _, want := range []string{"ruff:S605 bin/py:3", "shellcheck:SC2164 bin/local:3", "shellcheck:SC2164 bin/env-s:3", "shellcheck:SC2164 .envrc:2", "ruff:S605 x.PY:2", "hadolint:DL3002 app.Dockerfile:2"} {
		if !slices.Contains(all, want) {
			t.Errorf("no %s in %v", want, all)
		}
	}
}

// Source that is not UTF-8 is analysed in the encoding it declares (a
// Python file's PEP 263 line), on its own line numbers, or named as not
// analysed; never passed over as clean, and never reported of a path ".".
func TestEngineNonUTF8Source(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{
		"declared.py":   "# -*- coding: latin-1 -*-\nimport os\n# caf\xe9\nos.system(input())\n",
		"undeclared.py": "import os\n# caf\xe9\nos.system(input())\n",
		"unknown.py":    "# coding: klingon\nimport os\n# caf\xe9\nos.system(input())\n",
		"web/latin.js":  "// caf\xe9\neval(location.hash)\n",
		"web/fine.js":   "eval(location.hash)\n",
		"latin.sh":      "#!/bin/sh\n# caf\xe9\ndir=$1\ncd $dir\n",
	})
	head := r.Commit("head")
	got, cov := review(t, e, r, base, head, specialist.Rules{})
	for p, want := range map[string]string{
		"declared.py":   "",
		"undeclared.py": "it is not valid UTF-8 and declares no other encoding (PEP 263)",
		"unknown.py":    "it is not valid UTF-8, and quorum does not know the encoding it declares (klingon)",
		"web/latin.js":  "it is not valid UTF-8, the only encoding oxlint reads",
		"web/fine.js":   "",
		"latin.sh":      "",
	} {
		cv, ok := cov[p]
		if !ok || cv.Analysed != (want == "") || cv.Reason != want {
			t.Errorf("%s: coverage %+v, want analysed %v, reason %q", p, cv, want == "", want)
		}
	}
	if cv, ok := cov["."]; ok {
		t.Errorf("coverage of a path \".\": %+v", cv)
	}
	sec := rulesOf(got[specialist.Security])
	for _, want := range []string{"ruff:S605 declared.py:4", "oxlint:eslint/no-eval web/fine.js:1"} {
		if !slices.Contains(sec, want) {
			t.Errorf("no %s in %v", want, sec)
		}
	}
	for _, f := range got[specialist.Security] {
		if f.Path == "declared.py" && f.SuggestedPatch != "" {
			t.Errorf("a patch of the transcoded copy, not the file: %s", f.SuggestedPatch)
		}
	}
	if !slices.Contains(rulesOf(got[specialist.Logic]), "shellcheck:SC2164 latin.sh:4") {
		t.Errorf("latin-1 shell not checked: %v", rulesOf(got[specialist.Logic]))
	}
}

// One hostile file does not hide its language: a file that crashes ruff,
// one whose report is over the output limit, and one whose name is too
// long to copy are each named as not analysed, and the others' findings
// are reported.
func TestEngineIsolatesAFileTheAnalyzerFailsOn(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{
		"app/a.py":     "import os\nos.system(input())\n",
		"app/b.py":     "import subprocess\nsubprocess.call(input(), shell=True)\n",
		"app/crash.py": "x = 1" + strings.Repeat("+1", 500_000) + "\n",
		"app/noisy.py": strings.Repeat("x == 1\n", 100_000),
		"app/c.py":     "import os\nos.system(input())\n",
	})
	r.Git("add", "-A")
	// A 15,000-character path: git keeps it, no file system can copy it.
	long := strings.Repeat(strings.Repeat("d", 249)+"/", 60) + "x.py"
	blob := r.Git("hash-object", "-w", filepath.Join(r.Dir, "app/a.py"))
	r.Git("update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
	r.Git("commit", "-q", "-m", "head")
	head := r.Git("rev-parse", "HEAD")

	got, cov := review(t, e, r, base, head, specialist.Rules{})
	for p, want := range map[string]string{
		"app/a.py":     "",
		"app/b.py":     "",
		"app/c.py":     "",
		"app/crash.py": "ruff failed: killed (signal: aborted",
		"app/noisy.py": "ruff failed: printed more than 64 MiB",
		long:           "its name is too long to copy it",
	} {
		cv := cov[p]
		if cv.Analysed != (want == "") || !strings.Contains(cv.Reason, want) {
			t.Errorf("%.40s: coverage analysed %v, reason %q; want %q", p, cv.Analysed, cv.Reason, want)
		}
	}
	sec := rulesOf(got[specialist.Security])
	for _, want := range []string{"ruff:S605 app/a.py:2", "ruff:S602 app/b.py:2", "ruff:S605 app/c.py:2"} {
		if !slices.Contains(sec, want) {
			t.Errorf("no %s in %v", want, sec)
		}
	}
}

// A report repeated on thousands of lines is one finding whose body names
// a few of them and counts the rest, with its patch.
func TestEngineRepeatedReportIsBounded(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"many.sh": "#!/bin/sh\n" + strings.Repeat("cd /tmp/x\n", 1000)})
	head := r.Commit("head")
	got, _ := review(t, e, r, base, head, specialist.Rules{})
	var f *specialist.Finding
	for i := range got[specialist.Logic] {
		if got[specialist.Logic][i].Rule == "shellcheck:SC2164" {
			f = &got[specialist.Logic][i]
		}
	}
	if f == nil || f.Line != 2 {
		t.Fatalf("no SC2164 on line 2: %v", rulesOf(got[specialist.Logic]))
	}
	if !strings.Contains(f.Body, "The same on lines 3, 4, 5,") || !strings.Contains(f.Body, ", 22 and 979 more.") || len(f.Body) > 2000 {
		t.Errorf("body of %d bytes:\n%.3000s", len(f.Body), f.Body)
	}
	if !strings.Contains(f.SuggestedPatch, "+cd /tmp/x || exit") {
		t.Errorf("patch:\n%s", f.SuggestedPatch)
	}
}
