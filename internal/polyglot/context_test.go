package polyglot_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/specialist"
)

// The bugs of each language that the analyzers reach are reported where
// what surrounds them makes them bugs: pickle of a request, MD5 of a
// password, HTML from props, rm of any unquoted variable, a string test of
// one, a build piped without pipefail, an apt install without -y. Their
// harmless twins in the same change (a cache's pickle, a checksum, a
// literal's HTML, a numeric test, an echo into sha256sum, an apt install
// -qq) are not.
const (
	contextPy = `import hashlib
import pickle

import requests
from flask import request


def fetch(url):
    return requests.get(url, timeout=5, verify=False)


def store_password(db, user, password):
    db.save(user, hashlib.md5(password.encode()).hexdigest())


def checksum(data):
    return hashlib.md5(data).hexdigest()


def restore():
    return pickle.loads(request.data)


def load_cache(path):
    with open(path, "rb") as fh:
        return pickle.load(fh)
`
	contextTSX = `export async function save(n: number): Promise<void> {
  if (n < 0) throw new Error("negative");
}

export function saveAll(ns: number[]): number {
  ns.forEach(async (n) => {
    await save(n);
  });
  save(0);
  let last = 0;
  if (last = ns.length) {
    return last;
  }
  return 0;
}

export function Bio(props: { bio: string }) {
  return <div dangerouslySetInnerHTML={{ __html: props.bio }} />;
}

export function Rule() {
  return <div dangerouslySetInnerHTML={{ __html: "<hr/>" }} />;
}

export function changed(since: Date, now: Date, seen: number[]): boolean {
  if (since === new Date()) return true;
  if (seen === []) return true;
  return since === now;
}
`
	contextServerPy = `import pickle


def handle(conn):
    payload = conn.recv(4096)
    return pickle.loads(payload)
`
	contextSh = `#!/bin/bash
rm -rf $PLUGIN_NAME/cache
rm -rf /usr/local/ bin
rm -f $TARGET_LINK
rm -rf $PLUGIN_NAME/build
`
	contextTestSh = `#!/bin/bash
mode=$2
if [ $mode = "debug" ]; then
  set -x
fi
if [ $# -gt 0 ]; then
  n=$(wc -l < "$1")
  if [ $n -gt 10 ]; then echo long; fi
fi
`
	contextDockerfile = `FROM debian:12
RUN make -j4 | tee build.log
RUN echo "$SHA  app.tar" | sha256sum -c -
RUN apt-get update && apt-get install curl
ADD . /src
ADD requirements.txt /src/
RUN apt update && apt install -qq curl
RUN apt update && apt install libcairo2-dev
`
	// The change takes -y from a continued line of an instruction that
	// the base had.
	baseDockerfile = `FROM debian:12
RUN apt-get update \
  && apt-get install -y curl
`
	headDockerfile2 = `FROM debian:12
RUN apt-get update \
  && apt-get install curl
`
	// And from an apt install: hadolint says "do not use apt" of both.
	baseAptDockerfile = `FROM debian:12
RUN apt update \
  && apt install -y curl
`
	headAptDockerfile = `FROM debian:12
RUN apt update \
  && apt install curl
`
)

func TestEngineReportsBugsByTheirContext(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n", "build/Dockerfile": baseDockerfile, "apt/Dockerfile": baseAptDockerfile})
	base := r.Commit("base")
	r.Write(map[string]string{"build/Dockerfile": headDockerfile2, "apt/Dockerfile": headAptDockerfile, "web/api.py": contextPy, "web/server.py": contextServerPy, "web/Bio.tsx": contextTSX, "scripts/clean.sh": contextSh, "scripts/check.sh": contextTestSh, "Dockerfile": contextDockerfile})
	head := r.Commit("head")
	got, _ := review(t, e, r, base, head, specialist.Rules{})
	want := map[string][]string{
		specialist.Security: {
			"hadolint:DL4006 Dockerfile:2",
			"oxlint:react/no-danger web/Bio.tsx:18",
			"ruff:S301 web/api.py:21",
			"ruff:S301 web/server.py:6",
			"ruff:S324 web/api.py:13",
			"ruff:S501 web/api.py:9",
			"shellcheck:SC2114 scripts/clean.sh:3",
		},
		specialist.Logic: {
			"hadolint:DL3014 Dockerfile:4",
			"hadolint:DL3014 build/Dockerfile:2",
			"hadolint:DL3020 Dockerfile:5",
			"hadolint:DL3027 Dockerfile:8",
			"hadolint:DL3027 apt/Dockerfile:2",
			"oxlint:eslint/no-cond-assign web/Bio.tsx:11",
			// === with a new object is always false (said once, though
			// two rules report x === []); between two variables it is
			// an identity test, often meant.
			"oxlint:eslint/no-constant-binary-expression web/Bio.tsx:26",
			"oxlint:eslint/no-constant-binary-expression web/Bio.tsx:27",
			"oxlint:typescript/no-floating-promises web/Bio.tsx:9",
			"oxlint:typescript/no-misused-promises web/Bio.tsx:6",
			"shellcheck:SC2086 scripts/check.sh:3",
			"shellcheck:SC2086 scripts/clean.sh:2",
			"shellcheck:SC2086 scripts/clean.sh:4",
		},
	}
	for _, name := range []string{specialist.Security, specialist.Logic, specialist.Performance} {
		if g := rulesOf(got[name]); !slices.Equal(g, want[name]) {
			t.Errorf("%s findings:\n  %s\nwant\n  %s", name, strings.Join(g, "\n  "), strings.Join(want[name], "\n  "))
		}
	}
	// One unquoted variable is one mistake, however often it is used;
	// two are two.
	for _, f := range got[specialist.Logic] {
		if f.Path == "scripts/clean.sh" && f.Line == 2 && !strings.HasSuffix(f.Body, "The same on line 5.") {
			t.Errorf("the second rm of $PLUGIN_NAME is not named with the first:\n%s", f.Body)
		}
	}
}

// A test's input data (a formatter's cases) is not reviewed as code, and
// the summary says so; a bug in a test is reported, but does not block
// the merge on its own; a test's HTML and requests are not security
// findings.
func TestEngineTellsTestsAndTestDataFromCode(t *testing.T) {
	t.Parallel()
	e := installed(t)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{
		"tests/data/cases/return_annotation.py": "def f() -> Set[\"Muy\", \"Long\"]:\n    return undefined_name\n",
		"tests/test_api.py":                     "import requests\n\n\ndef test_get():\n    assert requests.get(URL, verify=False).ok\n",
		"src/__tests__/bio.test.tsx":            "export const el = <div dangerouslySetInnerHTML={{ __html: html }} />;\n",
		"src/api.py":                            "def get():\n    return missing_name\n",
	})
	head := r.Commit("head")
	var mu sync.Mutex
	var notes []string
	ctx := specialist.WithNotes(context.Background(), func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() })
	got := map[string][]specialist.Finding{}
	for _, name := range []string{specialist.Logic, specialist.Security} {
		fs, err := e.Findings(specialist.WithRules(ctx, specialist.Rules{}), r.Change(base, head), name)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = fs
	}
	if g, want := rulesOf(got[specialist.Logic]), []string{"ruff:F821 src/api.py:2", "ruff:F821 tests/test_api.py:5"}; !slices.Equal(g, want) {
		t.Errorf("logic findings %v, want %v", g, want)
	}
	for _, f := range got[specialist.Logic] {
		if want := map[string]string{"src/api.py": specialist.SeverityHigh, "tests/test_api.py": specialist.SeverityMedium}[f.Path]; f.Severity != want {
			t.Errorf("%s:%d is %s, want %s", f.Path, f.Line, f.Severity, want)
		}
	}
	if g := rulesOf(got[specialist.Security]); len(g) != 0 {
		t.Errorf("security findings in tests: %v", g)
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.Contains(n, "test's input data") && strings.Contains(n, "tests/data/cases/return_annotation.py")
	}) {
		t.Errorf("notes %q do not name the test data", notes)
	}
}
