package goanalysis_test

import (
	"context"
	"go/ast"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/printf"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// When a test file changes, the package's other test files are loaded
// with their test functions' bodies left out (what go test calls is
// called by nothing else), and their helpers whole: an import used only
// in a left-out body is not a type error of the repository, and a
// helper's facts still reach the changed test that calls it.
func TestLoadLeavesOutTheBodiesOfUnchangedTests(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod": goanalysistest.GoMod("example.com/tests"),
		"s/s.go": "package s\n\nfunc S() int { return 1 }\n",
		// strings is used in TestOld's body alone.
		"s/old_test.go": "package s\n\nimport (\n\t\"strings\"\n\t\"testing\"\n)\n\n" +
			"func TestOld(t *testing.T) {\n\tif strings.Repeat(\"a\", S()) != \"a\" {\n\t\tt.Fatal(\"no\")\n\t}\n}\n\n" +
			"func BenchmarkOld(b *testing.B) { _ = strings.ToUpper(\"a\") }\n\n" +
			"func Testify(t *testing.T) { t.Log(\"a helper, not a test: its body is kept\") }\n\n" +
			"// check is a printf wrapper: the changed test's call is checked through it.\n" +
			"func check(t *testing.T, format string, args ...any) {\n\tt.Helper()\n\tt.Errorf(format, args...)\n}\n",
		"s/new_test.go": "package s\n\nimport \"testing\"\n\nfunc TestNew(t *testing.T) {}\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{
		"s/new_test.go": "package s\n\nimport \"testing\"\n\nfunc TestNew(t *testing.T) {\n\tif S() != 1 {\n\t\tcheck(t, \"S() = %d\", \"one\")\n\t}\n}\n",
	})
	head := r.Commit("head")
	checkBodies(t, r.Change(base, head), map[string]bool{
		"old_test.go:TestOld":      false,
		"old_test.go:BenchmarkOld": false,
		"old_test.go:Testify":      true,
		"old_test.go:check":        true,
		"new_test.go:TestNew":      true,
		"s.go:S":                   true,
	}, "s/new_test.go", 7)
}

// checkBodies loads c, whose package s must type-check, and checks which
// functions were loaded with their bodies (by file name and function
// name), and that printf reports the changed test's call at path:line
// through the unchanged test file's wrapper.
func checkBodies(t *testing.T, c *change.Change, want map[string]bool, path string, line int) {
	t.Helper()
	p, err := goanalysistest.Loader().Load(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if p.SyntaxOnly != "" {
		t.Fatalf("syntax-only: %s", p.SyntaxOnly)
	}
	bodies := map[string]bool{}
	for _, pkg := range p.Packages {
		if pkg.IllTyped {
			t.Errorf("%s ill-typed: %v", pkg.ID, pkg.Errors)
		}
		for i, f := range pkg.Syntax {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					bodies[filepath.Base(pkg.CompiledGoFiles[i])+":"+fd.Name.Name] = fd.Body != nil
				}
			}
		}
	}
	for fn, want := range want {
		if got, ok := bodies[fn]; !ok || got != want {
			t.Errorf("%s: loaded with its body %v (found %v), want %v", fn, got, ok, want)
		}
	}
	ds, err := p.Analyze(context.Background(), []*analysis.Analyzer{printf.Analyzer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ds, func(d goanalysis.Diagnostic) bool { return d.Path == path && d.Line == line }) {
		t.Errorf("printf through the unchanged test file's wrapper: got %+v, want a finding at %s:%d", ds, path, line)
	}
}

// Only what go test calls loses its body: a generic function, or one
// named like an example or a test but with another signature, is an
// ordinary function that keeps it (a generic function without a body
// does not type-check, and would have cost the package its analysis; a
// printf wrapper named Example_sprintf would have lost its fact).
func TestLoadLeavesOutOnlyWhatGoTestCalls(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod": goanalysistest.GoMod("example.com/only"),
		"s/s.go": "package s\n\nfunc S() int { return 1 }\n",
		"s/old_test.go": "package s\n\nimport (\n\t\"fmt\"\n\tt \"testing\"\n)\n\n" +
			"func ExampleMap[T any](v T) []T { return []T{v} }\n\n" +
			"func Example_sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }\n\n" +
			"func TestOld(x *t.T) { x.Log(fmt.Sprint(1)) }\n\n" +
			"func TestHelper(x *t.T, n int) { x.Log(n) }\n\n" +
			"func ExampleS() { fmt.Println(S()) }\n",
		"s/new_test.go": "package s\n\nimport \"testing\"\n\nfunc TestNew(t *testing.T) {}\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{
		"s/new_test.go": "package s\n\nimport \"testing\"\n\nfunc TestNew(t *testing.T) {\n\t_ = ExampleMap(S())\n\tt.Log(Example_sprintf(\"%d\", \"one\"))\n}\n",
	})
	head := r.Commit("head")
	checkBodies(t, r.Change(base, head), map[string]bool{
		"old_test.go:ExampleMap": true, "old_test.go:Example_sprintf": true, "old_test.go:TestOld": false,
		"old_test.go:TestHelper": true, "old_test.go:ExampleS": false, "new_test.go:TestNew": true,
	}, "s/new_test.go", 7)
}

// The attacker's way round the filter: a changed test file whose //line
// directive gives its own unused import the position and message of one
// that leaving bodies out made in an unchanged file. The package does not
// compile, and the review must not take it for type-checked.
func TestLoadKeepsAnUnusedImportHiddenBehindALineDirective(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod": goanalysistest.GoMod("example.com/line"),
		"s/s.go": "package s\n\nfunc S() int { return 1 }\n",
		// strings is used in TestOld's body alone: an unused import once
		// it is left out, at old_test.go:4:2.
		"s/old_test.go": "package s\n\nimport (\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestOld(t *testing.T) { t.Log(strings.ToUpper(\"a\")) }\n",
		"s/new_test.go": "package s\n\nimport \"testing\"\n\nfunc TestNew(t *testing.T) {}\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{
		"s/new_test.go": "package s\n\nimport (\n\t\"testing\"\n//line old_test.go:4:1\n\t\"strings\"\n)\n\nfunc TestNew(t *testing.T) { t.Log(S()) }\n",
	})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range p.Packages {
		if !pkg.IllTyped {
			t.Errorf("%s is taken for type-checked; its changed file imports strings and does not use it", pkg.ID)
		}
	}
	// (Where it is said follows the directive: a type error's position
	// comes from go/packages as //line says, docs/go-analysis.md.)
	if !slices.ContainsFunc(p.TypeErrors, func(d goanalysis.Diagnostic) bool {
		return strings.Contains(d.Message, `"strings" imported and not used`)
	}) {
		t.Errorf("type errors %+v: want the unused import", p.TypeErrors)
	}
}

// A file whose function is left out for a type error in its body is
// repaired in its package and in the package's test variant, whose first
// errors differ: the summary gives the file's own error, every time, not
// the test file's that the other package happened to list first.
func TestLoadLeftOutGivesTheFilesOwnError(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":      goanalysistest.GoMod("example.com/reason"),
		"s/s.go":      "package s\n\nfunc S() int { return 1 }\n",
		"s/a_test.go": "package s\n\nimport \"testing\"\n\nfunc TestS(t *testing.T) { _ = S() }\n",
		"s/other.go":  "package s\n\nfunc Other() int { return 2 }\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{
		"s/s.go":      "package s\n\nfunc S() int {\n\tvar n int = \"one\"\n\treturn n\n}\n",
		"s/a_test.go": "package s\n\nimport \"testing\"\n\nfunc TestS(t *testing.T) {\n\tvar a string = S()\n\t_ = a\n}\n",
	})
	c := r.Change(base, r.Commit("head"))
	// The repairs are a map: two loads see both orders three times in
	// four (TestBetterReasonIsOrderFree checks every order; a load costs
	// 3–4 s of CPU under the race detector).
	for range 2 {
		p, err := goanalysistest.Loader().Load(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		lo, ok := p.LeftOut["s/s.go"]
		if !ok || !slices.Contains(lo.Funcs, "S") {
			t.Fatalf("s/s.go: left out %+v, want S", p.LeftOut)
		}
		if !strings.HasPrefix(lo.Reason, "s/s.go:4:") {
			t.Fatalf("s/s.go: S left out because %q, want s.go's own error (s/s.go:4)", lo.Reason)
		}
	}
}
