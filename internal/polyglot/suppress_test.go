package polyglot_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/specialist"
)

// suppressionCase is a change to one language's files: what the base has
// (its suppressions are the team's), what the change makes of it, the
// findings the change must get, each with the suppression it added named
// in its body.
type suppressionCase struct {
	base, head map[string]string
	want       map[string][]string // specialist: "rule path:line"
	adds       map[string]string   // "rule path:line": the added directive its body names
}

func testSuppressions(t *testing.T, tc suppressionCase) {
	t.Helper()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(tc.base)
	base := r.Commit("base")
	r.Write(tc.head)
	head := r.Commit("head")
	var notes []string
	ctx := specialist.WithNotes(context.Background(), func(n string) { notes = append(notes, n) })
	got := map[string][]specialist.Finding{}
	for _, name := range []string{specialist.Logic, specialist.Security, specialist.Performance} {
		fs, err := e.Findings(specialist.WithRules(ctx, specialist.Rules{}), r.Change(base, head), name)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = fs
	}
	for _, name := range []string{specialist.Logic, specialist.Security, specialist.Performance} {
		if g := rulesOf(got[name]); !slices.Equal(g, tc.want[name]) {
			t.Errorf("%s findings:\n  %s\nwant\n  %s", name, strings.Join(g, "\n  "), strings.Join(tc.want[name], "\n  "))
		}
		for _, f := range got[name] {
			id := rulesOf([]specialist.Finding{f})[0]
			if d, ok := tc.adds[id]; ok && (!strings.Contains(f.Body, "The change adds `"+d+"`") || f.SuggestedPatch != "") {
				t.Errorf("%s does not name the suppression the change added (%s), or suggests the fix it silenced:\n%s", id, d, f.Body)
			}
		}
	}
	if len(tc.adds) > 0 && (len(notes) != 1 || !strings.Contains(notes[0], "not obeyed") || strings.Contains(notes[0], "SC2034")) {
		t.Errorf("notes %q, want one naming the suppressions the change added of rules that run", notes)
	}
}

// A Python change's "# noqa" and "# ruff: noqa" are not obeyed; the
// base's are, on the lines the change moves and in the files where the
// base turned a rule off.
func TestEngineDoesNotObeyPythonSuppressionsTheChangeAdds(t *testing.T) {
	t.Parallel()
	testSuppressions(t, suppressionCase{
		base: map[string]string{
			"run.py":   "import subprocess\n\n\ndef run(c):\n    subprocess.call(c, shell=True)  # noqa: S602\n",
			"trust.py": "# ruff: noqa: S307\n\n\ndef calc(s):\n    return s\n",
		},
		head: map[string]string{
			"run.py": "import subprocess\n\n\ndef run(c):\n    if c:\n        subprocess.call(c, shell=True)  # noqa: S602\n\n\n" +
				"def go(c):\n    subprocess.call(\"ls \" + c, shell=True)  # noqa: S602\n",
			"trust.py": "# ruff: noqa: S307\n\n\ndef calc(s):\n    return eval(s)\n",
			"new.py":   "# ruff: noqa\n\n\ndef ask():\n    return eval(input())\n",
		},
		want: map[string][]string{specialist.Security: {"ruff:S307 new.py:5", "ruff:S602 run.py:10"}},
		adds: map[string]string{"ruff:S307 new.py:5": "# ruff: noqa", "ruff:S602 run.py:10": "# noqa: S602"},
	})
}

// A JavaScript change's eslint and oxlint disable comments are not obeyed;
// the base's file-wide one is.
func TestEngineDoesNotObeyJavaScriptSuppressionsTheChangeAdds(t *testing.T) {
	t.Parallel()
	testSuppressions(t, suppressionCase{
		base: map[string]string{
			"legacy.js": "/* eslint-disable no-eval */\nexport function a(x) {\n  return x;\n}\n",
			"app.js":    "export function a(x) {\n  return x;\n}\n",
		},
		head: map[string]string{
			"legacy.js": "/* eslint-disable no-eval */\nexport function a(x) {\n  return eval(x);\n}\n",
			"app.js": "export function a(x) {\n  // eslint-disable-next-line no-eval\n  return eval(x);\n}\n" +
				"export function b(x) {\n  return new Function(x); // oxlint-disable-line\n}\n",
			"all.js": "/* eslint-disable */\nexport function c(x) {\n  return eval(x);\n}\n",
		},
		want: map[string][]string{specialist.Security: {"oxlint:eslint/no-eval all.js:3", "oxlint:eslint/no-eval app.js:3", "oxlint:eslint/no-new-func app.js:6"}},
		adds: map[string]string{
			"oxlint:eslint/no-eval all.js:3":     "eslint-disable */",
			"oxlint:eslint/no-eval app.js:3":     "eslint-disable-next-line no-eval",
			"oxlint:eslint/no-new-func app.js:6": "oxlint-disable-line",
		},
	})
}

// A shell change's "# shellcheck disable=" is not obeyed, whichever rules
// it names; the base's file-wide one is.
func TestEngineDoesNotObeyShellSuppressionsTheChangeAdds(t *testing.T) {
	t.Parallel()
	testSuppressions(t, suppressionCase{
		base: map[string]string{
			"old.sh":   "#!/bin/sh\n# shellcheck disable=SC2086\ndir=$1\necho \"$dir\"\n",
			"clean.sh": "#!/bin/sh\ndir=$1\necho \"$dir\"\n",
		},
		head: map[string]string{
			"old.sh":   "#!/bin/sh\n# shellcheck disable=SC2086\ndir=$1\necho \"$dir\"\nrm -rf $dir/cache\n",
			"clean.sh": "#!/bin/sh\n# shellcheck disable=SC2034\nunused=1\ndir=$1\necho \"$dir\"\n# shellcheck disable=SC2086\nrm -rf $dir/cache\n# shellcheck shell=sh disable=all\ncd $dir\n",
		},
		want: map[string][]string{specialist.Logic: {"shellcheck:SC2086 clean.sh:7", "shellcheck:SC2164 clean.sh:9"}},
		adds: map[string]string{
			"shellcheck:SC2086 clean.sh:7": "# shellcheck disable=SC2086",
			"shellcheck:SC2164 clean.sh:9": "# shellcheck shell=sh disable=all",
		},
	})
}

// A base's directive that covers the next command or line alone, left in
// place while the change rewrites what it covers, is the change's
// suppression: pointed at new code, it is not obeyed.
func TestEngineDoesNotObeyABaseSuppressionPointedAtNewCode(t *testing.T) {
	t.Parallel()
	testSuppressions(t, suppressionCase{
		base: map[string]string{
			"job.sh": "#!/bin/sh\ndir=$1\necho \"$dir\"\n# shellcheck disable=SC2086\necho $1\n",
			"app.js": "const a = 1;\n// eslint-disable-next-line no-eval\nconsole.log(a);\n",
		},
		head: map[string]string{
			"job.sh": "#!/bin/sh\ndir=$1\necho \"$dir\"\n# shellcheck disable=SC2086\nrm -rf $dir/cache\n",
			"app.js": "const a = 1;\n// eslint-disable-next-line no-eval\neval(process.argv[2]);\n",
		},
		want: map[string][]string{
			specialist.Logic:    {"shellcheck:SC2086 job.sh:5"},
			specialist.Security: {"oxlint:eslint/no-eval app.js:3"},
		},
		adds: map[string]string{
			"shellcheck:SC2086 job.sh:5":     "# shellcheck disable=SC2086",
			"oxlint:eslint/no-eval app.js:3": "eslint-disable-next-line no-eval",
		},
	})
}

// A Dockerfile change's "# hadolint ignore=" and "# hadolint global
// ignore=" are not obeyed; the base's are.
func TestEngineDoesNotObeyDockerfileSuppressionsTheChangeAdds(t *testing.T) {
	t.Parallel()
	testSuppressions(t, suppressionCase{
		base: map[string]string{
			"Dockerfile":       "FROM debian:12\nRUN echo hi\n",
			"tools/Dockerfile": "FROM debian:12\n# hadolint global ignore=DL3002\nRUN echo hi\n",
		},
		head: map[string]string{
			"Dockerfile":       "FROM debian:12\nRUN echo hi\n# hadolint ignore=DL4006\nRUN curl -fsSL https://example.com/install.sh | sh\n# hadolint global ignore=DL3002\nUSER root\n",
			"tools/Dockerfile": "FROM debian:12\n# hadolint global ignore=DL3002\nRUN echo hi\nUSER root\n",
		},
		want: map[string][]string{specialist.Security: {"hadolint:DL3002 Dockerfile:6", "hadolint:DL4006 Dockerfile:4"}},
		adds: map[string]string{
			"hadolint:DL4006 Dockerfile:4": "# hadolint ignore=DL4006",
			"hadolint:DL3002 Dockerfile:6": "# hadolint global ignore=DL3002",
		},
	})
}
