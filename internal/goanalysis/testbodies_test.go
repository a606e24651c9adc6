package goanalysis_test

import (
	"context"
	"go/ast"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/printf"

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
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
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
	for fn, want := range map[string]bool{
		"old_test.go:TestOld":      false,
		"old_test.go:BenchmarkOld": false,
		"old_test.go:Testify":      true,
		"old_test.go:check":        true,
		"new_test.go:TestNew":      true,
		"s.go:S":                   true,
	} {
		if got, ok := bodies[fn]; !ok || got != want {
			t.Errorf("%s: loaded with its body %v (found %v), want %v", fn, got, ok, want)
		}
	}
	ds, err := p.Analyze(context.Background(), []*analysis.Analyzer{printf.Analyzer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ds, func(d goanalysis.Diagnostic) bool { return d.Path == "s/new_test.go" && d.Line == 7 }) {
		t.Errorf("printf through the unchanged helper: got %+v, want a finding at s/new_test.go:7", ds)
	}
}
