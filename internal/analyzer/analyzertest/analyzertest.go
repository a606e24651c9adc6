// Package analyzertest runs one of quorum's analyzers on test data and
// checks its diagnostics against the data's "// want" comments, as
// golang.org/x/tools/go/analysis/analysistest does, at a fraction of the
// cost: the packages under test are type-checked from source and their
// imports read from export data, where analysistest type-checks every
// package they import, function bodies included, from source (net/http
// and all below it, once per test binary, under the race detector).
//
// It is for analyzers without facts, which never run on an import; an
// analyzer that has facts, or requires one that has (weakhash; buildssa
// requires ctrlflow, whose checker panics on an import without syntax),
// needs its imports analysed: its tests call analysistest, and Run
// refuses it.
//
// Only the expectations quorum's test data use are read: `// want` (or
// `/* want */`) followed by one or more regular expressions in back
// quotes or double quotes, each to match the message of one diagnostic
// on that line; a comment starting with "want" that does not read so is
// an error. Each root package (a package, its
// test variant) is checked against its own files' expectations, and every
// diagnostic it reports counts, as in analysistest. Unlike analysistest,
// the test data is always a GOPATH tree, and a package error fails the
// test.
package analyzertest

import (
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// TB is what Run reports to: a *testing.T.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Failed() bool
}

// Run loads patterns from dir, the root of a GOPATH tree as analysistest
// takes it, runs a on them and checks its diagnostics.
func Run(t TB, dir string, a *analysis.Analyzer, patterns ...string) {
	t.Helper()
	if hasFacts(a) {
		t.Fatalf("%s has facts, or requires an analyzer that has: its imports must be analysed, which analysistest.Run does", a.Name)
		return
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
			packages.NeedTypes | packages.NeedTypesSizes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedModule,
		Dir:   dir,
		Tests: true,
		Env:   append(os.Environ(), "GOPATH="+dir, "GO111MODULE=off", "GOWORK=off", "GOFLAGS="),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatalf("loading %s: %v", patterns, err)
		return
	}
	if len(pkgs) == 0 {
		t.Fatalf("no packages matched %s", patterns)
		return
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.ID, e)
		}
	}
	if t.Failed() {
		return
	}
	g, err := checker.Analyze([]*analysis.Analyzer{a}, pkgs, &checker.Options{SanityCheck: true})
	if err != nil {
		t.Fatalf("analyze: %v", err)
		return
	}
	// Each root is checked against the expectations of its own files,
	// as analysistest does: a package and its test variant each.
	for _, act := range g.Roots {
		if act.Err != nil {
			t.Errorf("%s: %v", act, act.Err)
			continue
		}
		fset := act.Package.Fset
		want := map[position][]*regexp.Regexp{}
		for _, f := range act.Package.Syntax {
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					res, err := expectations(c.Text)
					if err != nil {
						t.Errorf("%s: %v", fset.Position(c.Pos()), err)
					}
					pos := fset.Position(c.Pos())
					k := position{pos.Filename, pos.Line}
					want[k] = append(want[k], res...)
				}
			}
		}
		// Every diagnostic counts, wherever it points (another file,
		// no position): one no expectation wants is a failure.
		for _, d := range act.Diagnostics {
			pos := fset.Position(d.Pos)
			k := position{pos.Filename, pos.Line}
			res := want[k]
			i := slices.IndexFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(d.Message) })
			if i < 0 {
				t.Errorf("%s: %s: unexpected diagnostic: %s", act.Package.ID, k, d.Message)
				continue
			}
			want[k] = slices.Delete(res, i, i+1)
		}
		for k, res := range want {
			for _, re := range res {
				t.Errorf("%s: %s: no diagnostic was reported matching %#q", act.Package.ID, k, re)
			}
		}
	}
}

type position struct {
	file string
	line int
}

func (p position) String() string { return fmt.Sprintf("%s:%d", filepath.Base(p.file), p.line) }

// expectations reads a comment's `want` expectations: the regular
// expressions after "want", each a Go string literal. A comment whose
// text starts with "want" (in // or /* */) either reads so or is an
// error: never an expectation silently dropped.
func expectations(comment string) ([]*regexp.Regexp, error) {
	text, ok := strings.CutPrefix(comment, "//")
	if !ok {
		text = strings.TrimSuffix(strings.TrimPrefix(comment, "/*"), "*/")
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), "want")
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"' && rest[0] != '`' {
		return nil, nil
	}
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(rest)), []byte(rest), nil, 0)
	var out []*regexp.Regexp
	for {
		_, tok, lit := s.Scan()
		switch tok {
		case token.EOF, token.SEMICOLON:
			if len(out) == 0 {
				return nil, fmt.Errorf("a want comment with no expectation: %q", comment)
			}
			return out, nil
		case token.STRING:
			pat, err := strconv.Unquote(lit)
			if err != nil {
				return nil, err
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, fmt.Errorf("want %s: %v", lit, err)
			}
			out = append(out, re)
		default:
			return nil, fmt.Errorf("want comment %q: expected a string literal, found %s %q (facts are analysistest's)", comment, tok, lit)
		}
	}
}

// hasFacts says whether a, or an analyzer it requires, has facts.
func hasFacts(a *analysis.Analyzer) bool {
	if len(a.FactTypes) > 0 {
		return true
	}
	return slices.ContainsFunc(a.Requires, hasFacts)
}
