package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validCorpus = `{"cases": [
  {"id": "acme-revert-1", "repo": "acme/tokens", "kind": "bug",
   "commit": "0123456789abcdef0123456789abcdef01234567", "paths": ["token.go"],
   "title": "use crypto/rand", "why": "tokens were predictable",
   "expect": [{"path": "token.go", "line": 12, "class": "weak-rand", "specialist": "security"}]},
  {"id": "acme-ordinary-2", "repo": "acme/tokens", "kind": "ordinary",
   "commit": "89abcdef0123456789abcdef0123456789abcdef", "title": "add a flag", "why": "an everyday feature"}
]}`

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadCorpusValid(t *testing.T) {
	t.Parallel()
	c, err := readCorpus(writeTemp(t, "corpus.json", validCorpus))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Cases) != 2 || c.Cases[0].Expect[0].Class != "weak-rand" || c.Cases[0].Paths[0] != "token.go" {
		t.Errorf("corpus read as %+v", c)
	}
}

// TestReadCorpusInvalid: each mistake in the manifest is named, with the
// case it is in; all of them at once.
func TestReadCorpusInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, corpus string
		want         []string
	}{
		{"unknown class", strings.Replace(validCorpus, `"weak-rand"`, `"bad-vibes"`, 1),
			[]string{`case 1 ("acme-revert-1"): expect 1: unknown class "bad-vibes" (want one of sql-injection,`}},
		{"unknown specialist", strings.Replace(validCorpus, `"specialist": "security"`, `"specialist": "style"`, 1),
			[]string{`expect 1: unknown specialist "style"`}},
		{"duplicate ids", strings.Replace(validCorpus, `"acme-ordinary-2"`, `"acme-revert-1"`, 1),
			[]string{`case 2 ("acme-revert-1"): duplicate id (also case 1)`}},
		{"missing fields", `{"cases": [{"kind": "bug", "expect": [{}]}]}`,
			[]string{`case 1 (""): missing id`, "missing repo", "missing commit", "missing title", "missing why",
				"expect 1: missing path", "expect 1: missing line", "expect 1: missing class", "expect 1: missing specialist"}},
		{"unknown kind", strings.Replace(validCorpus, `"kind": "ordinary"`, `"kind": "feature"`, 1),
			[]string{`case 2 ("acme-ordinary-2"): unknown kind "feature" (want bug or ordinary)`}},
		{"bug without expect", `{"cases": [{"id": "a", "repo": "o/n", "kind": "bug", "commit": "0123456789abcdef0123456789abcdef01234567", "title": "t", "why": "w"}]}`,
			[]string{"a bug case needs at least one expect"}},
		{"ordinary with expect", strings.Replace(validCorpus, `"title": "add a flag"`, `"title": "add a flag", "expect": [{"path": "a.go", "line": 1, "class": "printf", "specialist": "logic"}]`, 1),
			[]string{"an ordinary case has no expect"}},
		{"bad id, repo and commit", strings.NewReplacer(`"acme-revert-1"`, `"Acme_1"`, `"acme/tokens"`, `"acme"`, `0123456789abcdef0123456789abcdef01234567`, `0123abc`).Replace(validCorpus),
			[]string{"id must be made of [a-z0-9-]", `repo "acme" is not owner/name`, `commit "0123abc" is not a 40-digit`}},
		{"path outside", strings.Replace(validCorpus, `"paths": ["token.go"]`, `"paths": ["../etc/passwd"]`, 1),
			[]string{`path "../etc/passwd" is not a relative path inside the repository`}},
		{"misspelt field", strings.Replace(validCorpus, `"expect"`, `"expects"`, 1),
			[]string{`unknown field "expects"`}},
		{"no cases", `{"cases": []}`, []string{"no cases"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := readCorpus(writeTemp(t, "corpus.json", tc.corpus))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestReadLabels(t *testing.T) {
	t.Parallel()
	c, err := readCorpus(writeTemp(t, "corpus.json", validCorpus))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := readLabels(filepath.Join(t.TempDir(), "absent.json"), c); err != nil || len(l.Labels) != 0 {
		t.Errorf("a missing labels file: %v, %v; want no labels", l, err)
	}
	good := `{"labels": [
	  {"case": "acme-ordinary-2", "fingerprint": "f1", "label": "useful", "reason": "a real leak"},
	  {"case": "acme-ordinary-2", "fingerprint": "f2", "label": "", "reason": ""}]}`
	if _, err := readLabels(writeTemp(t, "labels.json", good), c); err != nil {
		t.Errorf("valid labels (one not filled in yet): %v", err)
	}
	bad := `{"labels": [
	  {"case": "acme-ordinary-2", "fingerprint": "f1", "label": "useful", "reason": "a real leak"},
	  {"case": "acme-ordinary-2", "fingerprint": "f1", "label": "noise", "reason": "again"},
	  {"case": "nope", "fingerprint": "f3", "label": "meh", "reason": "r"},
	  {"case": "acme-ordinary-2", "fingerprint": "", "label": "noise"}]}`
	_, err = readLabels(writeTemp(t, "labels.json", bad), c)
	for _, w := range []string{
		`label 2 (case "acme-ordinary-2", fingerprint "f1"): duplicate label (also label 1)`,
		`label 3 (case "nope", fingerprint "f3"): no such case in the corpus`,
		`unknown label "meh" (want useful or noise)`,
		`label 4 (case "acme-ordinary-2", fingerprint ""): missing fingerprint`,
		"missing reason for the label noise",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q:\n%v", w, err)
		}
	}
}
