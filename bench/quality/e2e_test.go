package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary be the child a run starts for each case.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "quality:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The mirrored repository's files: before the fix (math/rand tokens, a
// skipped test) and after it.
const (
	goMod = "module example.com/tokens\n\ngo 1.22\n"

	tokenBefore = `package tokens

import (
	"math/rand"
)

// New returns a session token of n letters.
func New(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rand.Intn(len(letters))]
	}
	return string(b)
}
`
	tokenAfter = `package tokens

import (
	"crypto/rand"
	"math/big"
)

// New returns a session token of n letters.
func New(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(letters))))
		if err != nil {
			panic(err)
		}
		b[i] = letters[k.Int64()]
	}
	return string(b)
}
`
	testBefore = `package tokens

import "testing"

func TestNew(t *testing.T) {
	t.Skip("flaky")
	if got := New(8); len(got) != 8 {
		t.Fatalf("New(8) = %q", got)
	}
}
`
	testAfter = `package tokens

import "testing"

func TestNew(t *testing.T) {
	if got := New(8); len(got) != 8 {
		t.Fatalf("New(8) = %q", got)
	}
}
`
)

// bigAsset is a file the review never reads, big enough to be left out.
var bigAsset = strings.Repeat("<path d='M0 0h1v1z'/>\n", 1000)

// mirror makes a repository snapshot as the search tool's fetch leaves
// one, <mirrors>/acme+tokens/repo/.git, with a fix commit on top of its
// parent; it returns the fix's SHA.
func mirror(t *testing.T, mirrors string) string {
	t.Helper()
	dir := filepath.Join(mirrors, "acme+tokens", "repo")
	files := func(m map[string]string) {
		for name, content := range m {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	gitIn := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn("init", "-q", "-b", "main")
	files(map[string]string{"go.mod": goMod, "token.go": tokenBefore, "token_test.go": testBefore, "README": "tokens\n", "logo.svg": bigAsset})
	gitIn("add", "-A")
	gitIn("commit", "-q", "-m", "tokens")
	files(map[string]string{"token.go": tokenAfter, "token_test.go": testAfter, "README": "tokens, from crypto/rand\n"})
	gitIn("commit", "-q", "-a", "-m", "use crypto/rand for tokens; run the test again")
	return gitIn("rev-parse", "HEAD")
}

// TestPrepareAndRun materialises a bug case from a real repository
// snapshot, a fix reverted for two of the three files it touched, and runs
// the review on it: the revert is the fix's parent for those files and
// the fix for the other; the review finds the math/rand token and the
// skipped test, and the recall says so.
func TestPrepareAndRun(t *testing.T) {
	t.Setenv("GOPROXY", "off") // the test module has no dependency: offline
	tmp := t.TempDir()
	mirrors, work, corpus := acmeCorpus(t, tmp)
	ctx := context.Background()

	var stderr bytes.Buffer
	if err := run(ctx, []string{"prepare", "--corpus", corpus, "--mirrors", mirrors, "--work", work}, &stderr, &stderr); err != nil {
		t.Fatalf("prepare: %v\n%s", err, stderr.String())
	}
	dir := filepath.Join(work, "acme-revert-1")
	m, err := readMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "repo.git")
	show := func(rev, file string) string {
		t.Helper()
		out, err := exec.Command("git", "--git-dir", repo, "show", rev+":"+file).Output()
		if err != nil {
			t.Fatalf("git show %s:%s: %v", rev, file, err)
		}
		return string(out)
	}
	for _, c := range []struct{ rev, file, want string }{
		{m.Base, "token.go", tokenAfter}, {m.Base, "token_test.go", testAfter},
		{m.Head, "token.go", tokenBefore}, {m.Head, "token_test.go", testBefore},
		{m.Head, "README", "tokens, from crypto/rand\n"}, // not in paths: the fix's
		{m.Head, "go.mod", goMod},
	} {
		if got := show(c.rev, c.file); got != c.want {
			t.Errorf("%s at %.8s:\n%s\nwant\n%s", c.file, c.rev, got, c.want)
		}
	}
	if got := show(m.Head, "logo.svg"); !strings.HasPrefix(got, "placeholder: blob ") || got != show(m.Base, "logo.svg") || m.Thinned != 1 {
		t.Errorf("a big unchanged asset at head is %q (%d thinned), want the same placeholder as at base", got, m.Thinned)
	}
	if parent, _ := exec.Command("git", "--git-dir", repo, "rev-parse", m.Head+"^").Output(); strings.TrimSpace(string(parent)) != m.Base {
		t.Errorf("head's parent is %s, want the base %s", parent, m.Base)
	}
	if st, err := os.Stat(filepath.Join(dir, "case.bundle")); err != nil || st.Size() != m.Bundle || m.Modules != "ok" {
		t.Errorf("bundle %v (%v), meta %+v", st, err, m)
	}

	// Again: nothing to do, and the commits are the same.
	stderr.Reset()
	if err := run(ctx, []string{"prepare", "--corpus", corpus, "--mirrors", mirrors, "--work", work}, &stderr, &stderr); err != nil {
		t.Fatalf("prepare again: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "acme-revert-1 ready") {
		t.Errorf("prepare again did not find the case ready:\n%s", stderr.String())
	}
	if again, _ := readMeta(dir); again.Base != m.Base || again.Head != m.Head {
		t.Errorf("prepared again as %+v, first %+v", again, m)
	}
	// Elsewhere, from scratch: the same commits (fixed identities and dates).
	stderr.Reset()
	work2 := filepath.Join(tmp, "work2")
	if err := run(ctx, []string{"prepare", "--corpus", corpus, "--mirrors", mirrors, "--work", work2}, &stderr, &stderr); err != nil {
		t.Fatalf("prepare elsewhere: %v\n%s", err, stderr.String())
	}
	if other, _ := readMeta(filepath.Join(work2, "acme-revert-1")); other.Base != m.Base || other.Head != m.Head {
		t.Errorf("prepared elsewhere as %+v, first %+v", other, m)
	}

	var stdout bytes.Buffer
	stderr.Reset()
	template := filepath.Join(tmp, "template.json")
	if err := run(ctx, []string{"run", "--corpus", corpus, "--work", work, "--labels", filepath.Join(tmp, "labels.json"), "--json", "--label-template", template}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode the report: %v\n%s", err, stdout.String())
	}
	if len(rep.Cases) != 1 || rep.Cases[0].Error != "" || rep.Cases[0].Reason != "" {
		t.Fatalf("cases %+v\n%s", rep.Cases, stderr.String())
	}
	c := rep.Cases[0]
	if rep.Recall != (Count{2, 3}) || rep.ByClass["weak-rand"] != (Count{1, 1}) || rep.ByClass["test-skip"] != (Count{1, 1}) || rep.ByClass["sql-injection"] != (Count{0, 1}) {
		t.Errorf("recall %+v by class %+v; findings %+v", rep.Recall, rep.ByClass, c.Findings)
	}
	if c.Base != m.Base || c.Head != m.Head || c.Seconds <= 0 || c.PeakRSS <= 0 || rep.PeakRSS != c.PeakRSS {
		t.Errorf("case %+v, report peak %d", c, rep.PeakRSS)
	}
	for _, f := range c.Findings {
		if f.Fingerprint == "" || f.Rule == "" {
			t.Errorf("finding without fingerprint or rule: %+v", f)
		}
	}
	// Every other finding is unlabelled, and in the template.
	others := 0
	for _, f := range c.Findings {
		if !f.Expected {
			others++
		}
	}
	b, err := os.ReadFile(template)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl Labels
	if err := json.Unmarshal(b, &tmpl); err != nil || len(tmpl.Labels) != others || rep.BugOther.Unlabelled != others {
		t.Errorf("template %s (%v); %d other findings, report %+v", b, err, others, rep.BugOther)
	}
}

// acmeCorpus writes under tmp a mirror of acme/tokens and a corpus of one
// bug case made from it, acme-revert-1, with three expectations the
// built-in engines meet two of; it returns the mirrors, the work directory
// (not yet prepared) and the corpus manifest.
func acmeCorpus(t *testing.T, tmp string) (mirrors, work, corpus string) {
	t.Helper()
	mirrors, work = filepath.Join(tmp, "mirrors"), filepath.Join(tmp, "work")
	fix := mirror(t, mirrors)
	corpus = filepath.Join(tmp, "corpus.json")
	manifest := fmt.Sprintf(`{"cases": [{"id": "acme-revert-1", "repo": "acme/tokens", "kind": "bug", "commit": %q,
	  "paths": ["token.go", "token_test.go"], "title": "use crypto/rand for tokens", "why": "tokens were predictable",
	  "expect": [
	    {"path": "token.go", "line": 12, "class": "weak-rand", "specialist": "security", "note": "math/rand for a session token"},
	    {"path": "token_test.go", "line": 6, "class": "test-skip", "specialist": "tests", "note": "t.Skip added"},
	    {"path": "token.go", "line": 4, "class": "sql-injection", "specialist": "security", "note": "nothing of the kind: a miss"}
	  ]}]}`, fix)
	if err := os.WriteFile(corpus, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return mirrors, work, corpus
}
