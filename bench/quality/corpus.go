package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// The kinds of case.
const (
	kindBug      = "bug"
	kindOrdinary = "ordinary"
)

// Labels of a finding.
const (
	labelUseful = "useful"
	labelNoise  = "noise"
)

// classes are the kinds of bug quorum's analyzers claim
// (/work/corpus-format.md); an expectation names one of them.
var classes = []string{
	"sql-injection", "command-injection", "path-traversal", "weak-rand",
	"weak-crypto", "tls-insecure", "http-timeout", "ssrf", "lostcancel",
	"nil-deref", "copylock", "defer-close-before-check", "unchecked-error",
	"resource-leak", "defer-in-loop", "regexp-in-loop", "printf",
	"self-compare", "ineffective-logic", "concurrency", "bounds", "overflow",
	"test-skip", "test-removed", "assertion-removed",
	// The other languages' (issue 11): an unquoted shell expansion split
	// into words, a name used where it is not defined, an error lost by
	// the way it is thrown (an async Promise executor).
	"word-splitting", "undefined-name", "lost-error",
	// Issue 18's polyglot bug cases: data turned into objects or code
	// (yaml.load, eval), markup from input (innerHTML,
	// dangerouslySetInnerHTML), keys that reach Object.prototype, a
	// Dockerfile instruction that breaks the build, ADD where COPY is meant,
	// a deletion of a system directory (rm -rf /usr /lib/…).
	"deserialization", "code-injection", "xss", "prototype-pollution",
	"build-failure", "add-instead-of-copy", "dangerous-delete",
}

// specialists are the built-in specialists an expectation may name.
var specialists = []string{"logic", "security", "performance", "tests"}

// Corpus is bench/quality/corpus.json: real changes of public Go
// repositories, materialised by prepare from local snapshots.
type Corpus struct {
	Cases []Case `json:"cases"`
}

// Case is one change: a fix reverted (kind bug) or an ordinary commit.
type Case struct {
	ID     string `json:"id"`
	Repo   string `json:"repo"`
	Kind   string `json:"kind"`
	Commit string `json:"commit"`
	// Paths are the files of the fix a bug case reverts; all the files
	// the fix touched when empty.
	Paths  []string `json:"paths,omitempty"`
	Title  string   `json:"title"`
	Why    string   `json:"why"`
	Expect []Expect `json:"expect,omitempty"`
}

// Expect is a finding a good review of a bug case must make.
type Expect struct {
	Path       string `json:"path"`
	Line       int    `json:"line"`
	Class      string `json:"class"`
	Specialist string `json:"specialist"`
	Note       string `json:"note,omitempty"`
}

// Labels is bench/quality/labels.json: hand labels of the findings that
// are not expectations.
type Labels struct {
	Labels []Label `json:"labels"`
}

// Label says whether one finding of one case is worth a reviewer's
// comment. Rule, Path, Line and Headline are for readers; the finding is
// the case's finding with Fingerprint.
type Label struct {
	Case        string `json:"case"`
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	Path        string `json:"path"`
	Line        int    `json:"line"`
	Headline    string `json:"headline"`
	Specialist  string `json:"specialist,omitempty"`
	Severity    string `json:"severity,omitempty"`
	// Label is useful or noise; empty in a template not yet filled in,
	// which counts as unlabelled.
	Label  string `json:"label"`
	Reason string `json:"reason"`
}

var (
	caseID  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	repoRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.][A-Za-z0-9_.-]*$`)
	sha1Hex = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// readCorpus reads and validates the corpus at path.
func readCorpus(path string) (*Corpus, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the corpus: %w", err)
	}
	var c Corpus
	if err := decodeStrict(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// decodeStrict decodes one JSON value and refuses unknown fields, so a
// misspelt field is an error rather than silently empty.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

// validate reports every problem of the corpus, one per line.
func (c *Corpus) validate() error {
	var errs []error
	if len(c.Cases) == 0 {
		errs = append(errs, errors.New("no cases"))
	}
	seen := map[string]int{}
	for i, k := range c.Cases {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("case %d (%q): %s", i+1, k.ID, fmt.Sprintf(format, args...)))
		}
		switch {
		case k.ID == "":
			bad("missing id")
		case !caseID.MatchString(k.ID):
			bad("id must be made of [a-z0-9-]")
		}
		if j, dup := seen[k.ID]; dup && k.ID != "" {
			bad("duplicate id (also case %d)", j)
		}
		seen[k.ID] = i + 1
		if k.Repo == "" {
			bad("missing repo")
		} else if !repoRE.MatchString(k.Repo) {
			bad("repo %q is not owner/name", k.Repo)
		}
		if k.Commit == "" {
			bad("missing commit")
		} else if !sha1Hex.MatchString(k.Commit) {
			bad("commit %q is not a 40-digit lowercase hexadecimal SHA", k.Commit)
		}
		if strings.TrimSpace(k.Title) == "" {
			bad("missing title")
		}
		if strings.TrimSpace(k.Why) == "" {
			bad("missing why")
		}
		switch k.Kind {
		case kindBug:
			if len(k.Expect) == 0 {
				bad("a bug case needs at least one expect")
			}
		case kindOrdinary:
			if len(k.Expect) > 0 {
				bad("an ordinary case has no expect (its findings are labelled in labels.json)")
			}
			if len(k.Paths) > 0 {
				bad("paths is for bug cases only")
			}
		case "":
			bad("missing kind (bug or ordinary)")
		default:
			bad("unknown kind %q (want bug or ordinary)", k.Kind)
		}
		for _, p := range k.Paths {
			if p == "" || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") {
				bad("path %q is not a relative path inside the repository", p)
			}
		}
		for j, e := range k.Expect {
			badE := func(format string, args ...any) { bad("expect %d: %s", j+1, fmt.Sprintf(format, args...)) }
			if e.Path == "" {
				badE("missing path")
			}
			if e.Line < 1 {
				badE("missing line (a line number ≥ 1 at head)")
			}
			switch {
			case e.Class == "":
				badE("missing class")
			case !slices.Contains(classes, e.Class):
				badE("unknown class %q (want one of %s)", e.Class, strings.Join(classes, ", "))
			}
			switch {
			case e.Specialist == "":
				badE("missing specialist")
			case !slices.Contains(specialists, e.Specialist):
				badE("unknown specialist %q (want one of %s)", e.Specialist, strings.Join(specialists, ", "))
			}
		}
	}
	return errors.Join(errs...)
}

// readLabels reads and validates the labels at path against the corpus;
// a missing file is no labels.
func readLabels(path string, c *Corpus) (*Labels, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Labels{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the labels: %w", err)
	}
	var l Labels
	if err := decodeStrict(b, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := l.validate(c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &l, nil
}

// validate reports every problem of the labels, one per line.
func (l *Labels) validate(c *Corpus) error {
	cases := map[string]bool{}
	for _, k := range c.Cases {
		cases[k.ID] = true
	}
	var errs []error
	seen := map[[2]string]int{}
	for i, x := range l.Labels {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("label %d (case %q, fingerprint %q): %s", i+1, x.Case, x.Fingerprint, fmt.Sprintf(format, args...)))
		}
		switch {
		case x.Case == "":
			bad("missing case")
		case !cases[x.Case]:
			bad("no such case in the corpus")
		}
		if x.Fingerprint == "" {
			bad("missing fingerprint")
		}
		key := [2]string{x.Case, x.Fingerprint}
		if j, dup := seen[key]; dup && x.Fingerprint != "" {
			bad("duplicate label (also label %d)", j)
		}
		seen[key] = i + 1
		switch x.Label {
		case labelUseful, labelNoise:
			if strings.TrimSpace(x.Reason) == "" {
				bad("missing reason for the label %s", x.Label)
			}
		case "":
			// A template entry not yet filled in: unlabelled.
		default:
			bad("unknown label %q (want useful or noise)", x.Label)
		}
	}
	return errors.Join(errs...)
}
