package goanalysis_test

import (
	"context"
	"go/ast"
	"go/types"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
	"honnef.co/go/tools/staticcheck"

	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

type probeFact struct{}

func (*probeFact) AFact()         {}
func (*probeFact) String() string { return "probe" }

// TestDependenciesOutsideTheRepository: analyzers with facts, and what they
// require, do not run on packages outside the repository, whose bodies the
// loader trims; they still run on the repository's packages that are not
// roots, whose facts reach the roots; deprecations of the standard library
// are still found.
func TestDependenciesOutsideTheRepository(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/deps"),
		"lib/lib.go": "package lib\n\n// Twice doubles n.\nfunc Twice(n int) int { return 2 * n }\n",
		"app/app.go": "package app\n\nfunc Nothing() {}\n",
	})
	base := r.Commit("base")
	app := `package app

import (
	"io"
	"io/ioutil" // deprecated
	"strings"

	"example.com/deps/lib"
)

// Read reads r whole, upper-cased, and a number.
func Read(r io.Reader) (string, int, error) {
	b, err := ioutil.ReadAll(r)
	return strings.ToUpper(string(b)), lib.Twice(2), err
}
`
	r.Write(map[string]string{"app/app.go": app})
	head := r.Commit("head")
	c := r.Change(base, head)

	var mu sync.Mutex
	ran := map[string][]string{} // analyzer → packages
	record := func(pass *analysis.Pass) {
		mu.Lock()
		defer mu.Unlock()
		ran[pass.Analyzer.Name] = append(ran[pass.Analyzer.Name], pass.Pkg.Path())
	}
	required := &analysis.Analyzer{Name: "required", Doc: "records where it runs", Run: func(pass *analysis.Pass) (any, error) {
		record(pass)
		return nil, nil
	}}
	// probe marks every exported function with a fact and reports the
	// calls to functions of other packages that carry one.
	probe := &analysis.Analyzer{
		Name: "probe", Doc: "marks functions, reports calls to marked ones",
		Requires:  []*analysis.Analyzer{required},
		FactTypes: []analysis.Fact{new(probeFact)},
		Run: func(pass *analysis.Pass) (any, error) {
			record(pass)
			for _, name := range pass.Pkg.Scope().Names() {
				if fn, ok := pass.Pkg.Scope().Lookup(name).(*types.Func); ok && fn.Exported() {
					pass.ExportObjectFact(fn, new(probeFact))
				}
			}
			for _, f := range pass.Files {
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func); ok && fn.Pkg() != nil && fn.Pkg() != pass.Pkg &&
						pass.ImportObjectFact(fn, new(probeFact)) {
						pass.Reportf(call.Pos(), "fact from %s", fn.Pkg().Path())
					}
					return true
				})
			}
			return nil, nil
		},
	}
	var sa1019 *analysis.Analyzer
	for _, a := range staticcheck.Analyzers {
		if a.Analyzer.Name == "SA1019" {
			sa1019 = a.Analyzer
		}
	}

	p, err := goanalysistest.Loader().Load(context.Background(), c)
	if err != nil || p == nil || p.SyntaxOnly != "" {
		t.Fatalf("load: %v %v", p, err)
	}
	ds, err := p.Analyze(context.Background(), []*analysis.Analyzer{probe, sa1019}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.Analyzer.Name+" "+d.Message)
	}
	t.Log(got)
	for analyzer, pkgs := range ran {
		slices.Sort(pkgs)
		if !slices.Equal(pkgs, []string{"example.com/deps/app", "example.com/deps/lib"}) {
			t.Errorf("%s ran on %v, want the repository's packages only", analyzer, pkgs)
		}
	}
	if len(ran) != 2 {
		t.Errorf("ran: %v", ran)
	}
	if !slices.Contains(got, "probe fact from example.com/deps/lib") {
		t.Errorf("the fact of the repository's other package did not reach the root: %v", got)
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "probe") && !strings.HasSuffix(s, "/lib") }) {
		t.Errorf("a fact from outside the repository: %v", got)
	}
	line := goanalysistest.Marked(app, "deprecated")[0]
	if !slices.ContainsFunc(ds, func(d goanalysis.Diagnostic) bool {
		return d.Analyzer == sa1019 && d.Path == "app/app.go" && d.Line == line && strings.Contains(d.Message, "io/ioutil")
	}) {
		t.Errorf("SA1019 on io/ioutil not found on line %d: %v", line, got)
	}
}

// TestChecksKeepWhatTheyKnowOutside: which packages lie outside the
// repository is each check's own knowledge. The same loaded packages are
// analysed, concurrently, as two programs: the one loaded, whose
// repository holds lib, and one whose repository is app's directory
// alone, so that lib lies outside it. A fact analyzer shared by all the
// checks runs on lib in every check of the first and in none of the
// second, and is itself left as it was.
func TestChecksKeepWhatTheyKnowOutside(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/runs"),
		"lib/lib.go": "package lib\n\n// Twice doubles n.\nfunc Twice(n int) int { return 2 * n }\n",
		"app/app.go": "package app\n\nfunc Nothing() {}\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"app/app.go": `package app

import (
	"fmt"

	"example.com/runs/lib"
)

// Four says four.
func Four() string { return fmt.Sprint(lib.Twice(2)) }
`})
	head := r.Commit("head")
	whole, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil || whole == nil || whole.SyntaxOnly != "" || len(whole.Packages) == 0 {
		t.Fatalf("load: %v %v", whole, err)
	}
	appOnly := &goanalysis.Program{Root: filepath.Join(whole.Root, "app"), Packages: whole.Packages}

	var mu sync.Mutex
	ran := map[string]int{} // package → passes
	probe := &analysis.Analyzer{
		Name: "probe", Doc: "counts the packages it runs on",
		FactTypes: []analysis.Fact{new(probeFact)},
		Run: func(pass *analysis.Pass) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			ran[pass.Pkg.Path()]++
			return nil, nil
		},
	}
	run := reflect.ValueOf(probe.Run).Pointer()

	const checks = 20
	var wg sync.WaitGroup
	for range checks {
		for _, p := range []*goanalysis.Program{whole, appOnly} {
			wg.Go(func() {
				if _, err := p.Analyze(context.Background(), []*analysis.Analyzer{probe}, nil); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()

	want := map[string]int{"example.com/runs/app": 2 * checks, "example.com/runs/lib": checks}
	if !maps.Equal(ran, want) {
		t.Errorf("passes by package: %v, want %v", ran, want)
	}
	if reflect.ValueOf(probe.Run).Pointer() != run {
		t.Error("the analyzer's Run was replaced")
	}
}
