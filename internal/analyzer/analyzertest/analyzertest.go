// Package analyzertest runs one of quorum's analyzers on test data and
// checks its diagnostics against the data's "// want" comments, as
// golang.org/x/tools/go/analysis/analysistest does, at a fraction of the
// cost: the packages under test are type-checked from source and their
// imports read from export data, where analysistest type-checks every
// package they import, function bodies included, from source (net/http
// and all below it, once per test binary, under the race detector).
//
// An analyzer with facts runs as quorum's loader runs it on a dependency
// (internal/goanalysis, outside.go): on a package read from export data
// it, and every analyzer it requires, is skipped, returning its result
// type's zero value and exporting no fact; between the packages under
// test, which have syntax, facts flow as usual. (The checker applies
// fact analyzers to every import, which without syntax panics; and
// analysistest, which gives them syntax, analyses net/http and all below
// it.) An analyzer that would run on an import and whose result type is
// an interface, which has no zero value to return, is refused.
//
// Only the expectations quorum's test data use are read: `// want` (or
// `/* want */`) followed by one or more expectations, each a regular
// expression in back quotes or double quotes to match the message of one
// diagnostic on that line, or name:"regexp" to match a fact exported for
// the object of that name declared on that line ("package" for a
// package fact, wanted on the first line of a file); a comment starting
// with "want" that does not read so is an error. Each root package (a
// package, its test variant) is checked against its own files'
// expectations, and every diagnostic it reports, and every fact it
// exports about its own objects, counts, as in analysistest. Unlike
// analysistest, the test data is always a GOPATH tree, and a package
// error fails the test.
package analyzertest

import (
	"cmp"
	"fmt"
	"go/format"
	"go/scanner"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
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
	run(t, dir, a, patterns)
}

// RunWithSuggestedFixes is Run, and checks, for each root package, that
// the suggested fixes of its diagnostics, applied together, turn each of
// its files they edit into its golden file (its name with ".golden" after
// it), both as gofmt prints them, as analysistest.RunWithSuggestedFixes
// does for a golden file that is not an archive of several (but for
// imports a fix leaves unused, which analysistest drops and this does
// not). A golden file of a root's file that no fix edits is a failure.
func RunWithSuggestedFixes(t TB, dir string, a *analysis.Analyzer, patterns ...string) {
	t.Helper()
	g := run(t, dir, a, patterns)
	if g == nil {
		return
	}
	type edit struct {
		start, end int // offsets in the file
		text       string
	}
	for _, act := range g.Roots {
		fset := act.Package.Fset
		// Two diagnostics may suggest one edit: it is applied once.
		edits := map[string]map[edit]bool{}
		for _, d := range act.Diagnostics {
			for _, fix := range d.SuggestedFixes {
				for _, e := range fix.TextEdits {
					tf := fset.File(e.Pos)
					if tf == nil {
						t.Errorf("%s: a suggested fix edits no file (position %d)", act.Package.ID, e.Pos)
						continue
					}
					end := e.End
					if !end.IsValid() {
						end = e.Pos
					}
					if edits[tf.Name()] == nil {
						edits[tf.Name()] = map[edit]bool{}
					}
					edits[tf.Name()][edit{tf.Offset(e.Pos), tf.Offset(end), string(e.NewText)}] = true
				}
			}
		}
		for _, f := range act.Package.Syntax {
			name := fset.File(f.Pos()).Name()
			if _, err := os.Stat(name + ".golden"); err == nil && edits[name] == nil {
				t.Errorf("%s: %s has a golden file, and no suggested fix edits it", act.Package.ID, filepath.Base(name))
			}
		}
	files:
		for file, set := range edits {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%v", err)
				continue
			}
			sorted := slices.SortedFunc(maps.Keys(set), func(x, y edit) int {
				return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.end, y.end), strings.Compare(x.text, y.text))
			})
			var out []byte
			at := 0
			for i, e := range sorted {
				// Two edits at one place, or one inside another, have no
				// order to apply them in.
				if e.start < at || i > 0 && e.start == sorted[i-1].start {
					t.Errorf("%s: %s: suggested fixes overlap at offset %d", act.Package.ID, filepath.Base(file), e.start)
					continue files
				}
				out = append(append(out, src[at:e.start]...), e.text...)
				at = e.end
			}
			out = append(out, src[at:]...)
			formatted, err := format.Source(out)
			if err != nil {
				t.Errorf("%s: %s: the fixed file does not parse: %v\n%s", act.Package.ID, filepath.Base(file), err, out)
				continue
			}
			golden, err := os.ReadFile(file + ".golden")
			if err == nil {
				golden, err = format.Source(golden)
			}
			if err != nil {
				t.Errorf("%s: %s.golden: %v", act.Package.ID, filepath.Base(file), err)
				continue
			}
			if string(formatted) != string(golden) {
				t.Errorf("%s: %s: the suggested fixes give\n%s\nwant (%s.golden)\n%s", act.Package.ID, filepath.Base(file), formatted, filepath.Base(file), golden)
			}
		}
	}
}

// run loads patterns from dir, runs a on them and checks its
// diagnostics and facts; it returns the analysis, or nil when it could
// not run.
func run(t TB, dir string, a *analysis.Analyzer, patterns []string) *checker.Graph {
	t.Helper()
	w, err := withoutImports(a)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
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
		return nil
	}
	if len(pkgs) == 0 {
		t.Fatalf("no packages matched %s", patterns)
		return nil
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.ID, e)
		}
	}
	if t.Failed() {
		return nil
	}
	g, err := checker.Analyze([]*analysis.Analyzer{w}, pkgs, &checker.Options{SanityCheck: true})
	if err != nil {
		t.Fatalf("analyze: %v", err)
		return nil
	}
	// Each root is checked against the expectations of its own files,
	// as analysistest does: a package and its test variant each.
	for _, act := range g.Roots {
		if act.Err != nil {
			t.Errorf("%s: %v", act, act.Err)
			continue
		}
		fset := act.Package.Fset
		want := map[position][]expectation{}
		for _, f := range act.Package.Syntax {
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					es, err := expectations(c.Text)
					if err != nil {
						t.Errorf("%s: %v", fset.Position(c.Pos()), err)
					}
					pos := fset.Position(c.Pos())
					k := position{pos.Filename, pos.Line}
					want[k] = append(want[k], es...)
				}
			}
		}
		// found takes the expectation a diagnostic's message (name "")
		// or a fact meets; one no expectation wants is a failure.
		found := func(pos token.Position, name, what, message string) {
			t.Helper()
			k := position{pos.Filename, pos.Line}
			es := want[k]
			i := slices.IndexFunc(es, func(e expectation) bool { return e.name == name && e.re.MatchString(message) })
			if i < 0 {
				t.Errorf("%s: %s: unexpected %s: %s", act.Package.ID, k, what, message)
				return
			}
			want[k] = slices.Delete(es, i, i+1)
		}
		// Every diagnostic counts, wherever it points (another file,
		// no position).
		for _, d := range act.Diagnostics {
			found(fset.Position(d.Pos), "", "diagnostic", d.Message)
		}
		// Facts count about the package's own objects, as in
		// analysistest: a package fact on the first line of its first
		// file, an object's on the line declaring it.
		for _, pf := range act.AllPackageFacts() {
			if pf.Package == act.Package.Types && len(act.Package.Syntax) > 0 {
				pos := fset.Position(act.Package.Syntax[0].Pos())
				pos.Line = 1
				found(pos, "package", "fact", fmt.Sprint(pf.Fact))
			}
		}
		for _, of := range act.AllObjectFacts() {
			if of.Object.Pkg() == act.Package.Types {
				found(fset.Position(of.Object.Pos()), of.Object.Name(), "fact "+of.Object.Name(), fmt.Sprint(of.Fact))
			}
		}
		for k, es := range want {
			for _, e := range es {
				if e.name == "" {
					t.Errorf("%s: %s: no diagnostic was reported matching %#q", act.Package.ID, k, e.re)
				} else {
					t.Errorf("%s: %s: no fact was exported for %s matching %#q", act.Package.ID, k, e.name, e.re)
				}
			}
		}
	}
	return g
}

// expectation is one `want`: a diagnostic's message (name "") or a fact
// about the object of that name ("package": about the package).
type expectation struct {
	name string
	re   *regexp.Regexp
}

type position struct {
	file string
	line int
}

func (p position) String() string { return fmt.Sprintf("%s:%d", filepath.Base(p.file), p.line) }

// expectations reads a comment's `want` expectations: after "want",
// each a Go string literal, alone (a diagnostic's message) or after
// name: (a fact's). A comment whose text starts with "want" (in // or
// /* */) either reads so or is an error: never an expectation silently
// dropped.
func expectations(comment string) ([]expectation, error) {
	text, ok := strings.CutPrefix(comment, "//")
	if !ok {
		text = strings.TrimSuffix(strings.TrimPrefix(comment, "/*"), "*/")
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), "want")
	if !ok {
		return nil, nil
	}
	if rest != "" && !strings.ContainsRune(" \t\n\"`", rune(rest[0])) {
		return nil, fmt.Errorf("a comment starting with \"want\" that is not an expectation: %q", comment)
	}
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(rest)), []byte(rest), nil, 0)
	var out []expectation
	name := ""
	for {
		_, tok, lit := s.Scan()
		switch {
		case tok == token.SEMICOLON && lit == "\n":
			// the scanner's, at a line's end: the expectations go on
		case tok == token.EOF:
			if name != "" {
				return nil, fmt.Errorf("want comment %q: %s: with no fact after it", comment, name)
			}
			if len(out) == 0 {
				return nil, fmt.Errorf("a want comment with no expectation: %q", comment)
			}
			return out, nil
		case tok == token.STRING:
			pat, err := strconv.Unquote(lit)
			if err != nil {
				return nil, err
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, fmt.Errorf("want %s: %v", lit, err)
			}
			out = append(out, expectation{name, re})
			name = ""
		case (tok == token.IDENT || tok == token.PACKAGE) && name == "":
			if _, colon, _ := s.Scan(); colon != token.COLON {
				return nil, fmt.Errorf("want comment %q: %s is not followed by a colon and a fact", comment, lit)
			}
			name = lit
		default:
			return nil, fmt.Errorf("want comment %q: expected a string literal or name:, found %s %q", comment, tok, lit)
		}
	}
}

// withoutImports returns a copy of a, and of the analyzers it requires,
// whose Run skips a package without syntax, an import read from export
// data, as quorum's loader skips a package outside the repository: the
// checker runs an analyzer with facts, and what it requires, on every
// import. A copy hands the original's Run a pass whose results are
// keyed by the originals.
func withoutImports(a *analysis.Analyzer) (*analysis.Analyzer, error) {
	copies := map[*analysis.Analyzer]*analysis.Analyzer{}
	orig := map[*analysis.Analyzer]*analysis.Analyzer{}
	// runsOnImports: the checker runs a on imports, for it has facts or
	// an analyzer requiring it has.
	var wrap func(a *analysis.Analyzer, runsOnImports bool) (*analysis.Analyzer, error)
	wrap = func(a *analysis.Analyzer, runsOnImports bool) (*analysis.Analyzer, error) {
		runsOnImports = runsOnImports || len(a.FactTypes) > 0
		if runsOnImports && a.ResultType != nil && a.ResultType.Kind() == reflect.Interface {
			return nil, fmt.Errorf("%s would run on imports without their syntax, and its result type %s has no zero value to return there", a.Name, a.ResultType)
		}
		if w, ok := copies[a]; ok {
			return w, nil
		}
		w := *a
		copies[a], orig[&w] = &w, a
		w.Requires = nil
		for _, r := range a.Requires {
			rw, err := wrap(r, runsOnImports)
			if err != nil {
				return nil, err
			}
			w.Requires = append(w.Requires, rw)
		}
		w.Run = func(pass *analysis.Pass) (any, error) {
			if len(pass.Files) == 0 {
				if a.ResultType == nil {
					return nil, nil
				}
				return reflect.Zero(a.ResultType).Interface(), nil
			}
			own := *pass
			own.Analyzer = a
			own.ResultOf = map[*analysis.Analyzer]any{}
			for k, v := range pass.ResultOf {
				own.ResultOf[orig[k]] = v
			}
			return a.Run(&own)
		}
		return &w, nil
	}
	return wrap(a, false)
}
