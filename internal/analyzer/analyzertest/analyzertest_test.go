package analyzertest_test

import (
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/quorum-review/quorum/internal/analyzer/analyzertest"
)

// shout reports every identifier named X.
var shout = &analysis.Analyzer{
	Name: "shout",
	Doc:  "reports X",
	Run: func(pass *analysis.Pass) (any, error) {
		for _, f := range pass.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == "X" {
					pass.Reportf(id.Pos(), "found X in %s", pass.Pkg.Name())
				}
				return true
			})
		}
		return nil, nil
	},
}

// recorder is a TB that keeps what Run reports.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.errs = append(r.errs, "FATAL "+fmt.Sprintf(format, a...))
}
func (r *recorder) Failed() bool { return len(r.errs) > 0 }

// reports runs a on patterns in dir and returns what Run reported, sorted.
func reports(dir string, a *analysis.Analyzer, patterns ...string) []string {
	r := &recorder{}
	analyzertest.Run(r, dir, a, patterns...)
	slices.Sort(r.errs)
	return r.errs
}

// checkReports fails t unless got is want.
func checkReports(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("Run reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// writeSource writes src to dir/src/path.
func writeSource(t *testing.T, dir, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, "src", path)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", path), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Run fails for a diagnostic no comment wants, for a comment no
// diagnostic matches, and for one that matches another's message, and
// passes where each want has its diagnostic, on a line that imports a
// package of the standard library from export data.
func TestRunChecksEveryExpectation(t *testing.T) {
	dir := t.TempDir()
	src := "package a\n\nimport \"net/http\"\n\n" +
		"var X = http.StatusOK // want `found X in a`\n" + // 5: matched
		"var Y = X\n" + // 6: unexpected
		"var Z = 1 // want \"found\"\n" + // 7: missing
		"func F() int { X := 2; return X } // want `found Y` `found X`\n" // 8: one wrong, and one X unwanted
	writeSource(t, dir, "a/a.go", src)
	checkReports(t, reports(dir, shout, "a"), []string{
		"a: a.go:6: unexpected diagnostic: found X in a",
		"a: a.go:7: no diagnostic was reported matching `found`",
		"a: a.go:8: no diagnostic was reported matching `found Y`",
		"a: a.go:8: unexpected diagnostic: found X in a",
	})

	ok := "package a\n\nimport \"net/http\"\n\nvar X = http.StatusOK // want `found X in a`\n" +
		"var W = X /* want \"found X\" */\n"
	writeSource(t, dir, "a/a.go", ok)
	checkReports(t, reports(dir, shout, "a"), nil)
}

// marked is the fact of a function whose name starts with Mark.
type marked struct{ By string }

func (*marked) AFact()           {}
func (m *marked) String() string { return "marked by " + m.By }

// marks exports a fact for each function named Mark…, and reports each
// call of a function with that fact, in its own package or an imported one.
var marks = &analysis.Analyzer{
	Name:      "marks",
	Doc:       "reports calls of marked functions",
	FactTypes: []analysis.Fact{new(marked)},
	Requires:  []*analysis.Analyzer{inspect.Analyzer},
	Run: func(pass *analysis.Pass) (any, error) {
		ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
		ins.Preorder([]ast.Node{(*ast.FuncDecl)(nil)}, func(n ast.Node) {
			if fn := n.(*ast.FuncDecl); strings.HasPrefix(fn.Name.Name, "Mark") {
				pass.ExportObjectFact(pass.TypesInfo.Defs[fn.Name], &marked{By: pass.Pkg.Name()})
			}
			if fn := n.(*ast.FuncDecl); fn.Name.Name == "MarkPackage" {
				pass.ExportPackageFact(&marked{By: "its MarkPackage"})
			}
		})
		ins.Preorder([]ast.Node{(*ast.CallExpr)(nil)}, func(n ast.Node) {
			if fn := typeutil.StaticCallee(pass.TypesInfo, n.(*ast.CallExpr)); fn != nil && pass.ImportObjectFact(fn, new(marked)) {
				pass.Reportf(n.Pos(), "call of marked %s.%s", fn.Pkg().Name(), fn.Name())
			}
		})
		return nil, nil
	},
}

// An analyzer with facts gets the facts of the packages under test, in
// the order of their imports, and runs past an import read from export
// data (net/http); its facts are checked as its diagnostics are.
func TestRunChecksFacts(t *testing.T) {
	dir := t.TempDir()
	writeSource(t, dir, "a/a.go", "package a // want package:\"marked by its MarkPackage\"\n\nfunc MarkX() {} // want MarkX:\"marked by a\"\n\n"+
		"func MarkPackage() {} /* want\n\tMarkPackage:\"marked by a\" */\n")
	writeSource(t, dir, "b/b.go", "package b\n\nimport (\n\t\"a\"\n\t\"net/http\"\n)\n\n"+
		"var _ = http.StatusOK\n\n"+
		"func F() { a.MarkX() } // want `call of marked a.MarkX`\n")
	checkReports(t, reports(dir, marks, "a", "b"), nil)

	writeSource(t, dir, "a/a.go", "package a\n\nfunc MarkX() {} // want MarkX:\"marked by b\"\n\nfunc MarkY() {}\n\nfunc Z() {} // want Z:\"marked\"\n")
	checkReports(t, reports(dir, marks, "a", "b"), []string{
		"a: a.go:3: no fact was exported for MarkX matching `marked by b`",
		"a: a.go:3: unexpected fact MarkX: marked by a",
		"a: a.go:5: unexpected fact MarkY: marked by a",
		"a: a.go:7: no fact was exported for Z matching `marked`",
	})
}

// A comment that starts with "want" and is not an expectation, or an
// expectation after an explicit semicolon, is an error, never dropped.
func TestRunRefusesUnreadableWants(t *testing.T) {
	dir := t.TempDir()
	writeSource(t, dir, "a/a.go", "package a\n\nvar X = 1 // want: `found X`\n\nvar _ = X // want `found X`; `found X`\n")
	errs := reports(dir, shout, "a")
	if len(errs) != 4 || !strings.Contains(errs[0], "not an expectation") || !strings.Contains(errs[1], "expected a string literal or name:, found ;") ||
		errs[2] != "a: a.go:3: unexpected diagnostic: found X in a" || errs[3] != "a: a.go:5: unexpected diagnostic: found X in a" {
		t.Errorf("Run reported %q, want both comments refused, and their diagnostics unexpected", errs)
	}
}

// An analyzer the checker would run on an import, whose result has no
// zero value to return there (an interface), is refused, not run on an
// import it cannot see.
func TestRunRefusesAnInterfaceResultOnImports(t *testing.T) {
	type fact struct{ analysis.Fact }
	iface := &analysis.Analyzer{Name: "iface", Doc: "an interface result", ResultType: reflect.TypeFor[fmt.Stringer](), Run: shout.Run}
	withFacts := &analysis.Analyzer{Name: "withfacts", Doc: "has facts", FactTypes: []analysis.Fact{new(fact)}, Requires: []*analysis.Analyzer{iface}, Run: shout.Run}
	if errs := reports(t.TempDir(), withFacts, "a"); len(errs) != 1 || !strings.Contains(errs[0], "FATAL iface would run on imports without their syntax") {
		t.Errorf("Run reported %q, want it refused", errs)
	}
}

// renameX reports each identifier X and suggests renaming it Y.
var renameX = &analysis.Analyzer{
	Name: "renamex",
	Doc:  "renames X",
	Run: func(pass *analysis.Pass) (any, error) {
		for _, f := range pass.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == "X" {
					pass.Report(analysis.Diagnostic{Pos: id.Pos(), Message: "X", SuggestedFixes: []analysis.SuggestedFix{{
						Message: "rename", TextEdits: []analysis.TextEdit{{Pos: id.Pos(), End: id.End(), NewText: []byte("Y")}},
					}}})
				}
				return true
			})
		}
		return nil, nil
	},
}

// RunWithSuggestedFixes passes when the fixes of each of a package and
// its test variant give the golden file (both gofmt-ed), and fails for
// each that does not.
func TestRunWithSuggestedFixesChecksTheGoldenFile(t *testing.T) {
	dir := t.TempDir()
	writeSource(t, dir, "a/a.go", "package a\n\nvar X = 1 // want `X`\n\nvar _ = X // want `X`\n")
	writeSource(t, dir, "a/a_test.go", "package a\n")
	writeSource(t, dir, "a/a.go.golden", "package a\n\nvar Y = 1   // want `X`\n\nvar _ = Y // want `X`\n")
	r := &recorder{}
	analyzertest.RunWithSuggestedFixes(r, dir, renameX, "a")
	if len(r.errs) > 0 {
		t.Errorf("RunWithSuggestedFixes failed fixes that give the golden file: %q", r.errs)
	}

	writeSource(t, dir, "a/a.go.golden", "package a\n\nvar Y = 1 // want `X`\n\nvar _ = X // want `X`\n")
	r = &recorder{}
	analyzertest.RunWithSuggestedFixes(r, dir, renameX, "a")
	slices.Sort(r.errs)
	if len(r.errs) != 2 || !strings.HasPrefix(r.errs[0], "a [a.test]: a.go: the suggested fixes give") || !strings.HasPrefix(r.errs[1], "a: a.go: the suggested fixes give") {
		t.Errorf("RunWithSuggestedFixes reported %q, want the file that differs from its golden file, for the package and its test variant", r.errs)
	}
}
