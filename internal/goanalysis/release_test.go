package goanalysis_test

import (
	"context"
	"go/ast"
	"go/types"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"weak"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// bulk stands for a large result, an SSA or IR form.
type bulk struct{ funcs []string }

// TestResultsReleasedOnceRead: an analyzer's result on a package is
// dropped once the passes on that package that read it have run, not
// kept until the whole check ends. lib is analysed before app (app's
// pass needs lib's facts), so when the reader runs on app, lib's bulky
// result must already be garbage; the facts drawn from it still reach
// app, and the reader still finds what it finds.
func TestResultsReleasedOnceRead(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/release"),
		"lib/lib.go": "package lib\n\n// Twice doubles n.\nfunc Twice(n int) int { return 2 * n }\n",
		"app/app.go": "package app\n\nfunc Nothing() {}\n",
	})
	base := r.Commit("base")
	app := "package app\n\nimport \"example.com/release/lib\"\n\n// Four is four.\nfunc Four() int { return lib.Twice(2) } // call\n"
	r.Write(map[string]string{"app/app.go": app})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil || p == nil || p.SyntaxOnly != "" {
		t.Fatalf("load: %v %v", p, err)
	}

	var mu sync.Mutex
	made := map[string]weak.Pointer[bulk]{} // package → its result
	alive := map[string]bool{}              // package → lib's result alive when the reader ran there
	builder := &analysis.Analyzer{
		Name: "builder", Doc: "makes a bulky result",
		ResultType: reflect.TypeFor[*bulk](),
		Run: func(pass *analysis.Pass) (any, error) {
			b := &bulk{funcs: make([]string, 1<<16)}
			mu.Lock()
			defer mu.Unlock()
			made[pass.Pkg.Path()] = weak.Make(b)
			return b, nil
		},
	}
	reader := &analysis.Analyzer{
		Name: "reader", Doc: "marks the functions the builder saw, reports calls of marked ones",
		Requires:  []*analysis.Analyzer{builder},
		FactTypes: []analysis.Fact{new(probeFact)},
		Run: func(pass *analysis.Pass) (any, error) {
			if pass.ResultOf[builder].(*bulk) == nil {
				t.Errorf("no builder result on %s", pass.Pkg.Path())
			}
			runtime.GC()
			mu.Lock()
			alive[pass.Pkg.Path()] = made["example.com/release/lib"].Value() != nil
			mu.Unlock()
			for _, name := range pass.Pkg.Scope().Names() {
				if fn, ok := pass.Pkg.Scope().Lookup(name).(*types.Func); ok {
					pass.ExportObjectFact(fn, new(probeFact))
				}
			}
			for _, f := range pass.Files {
				ast.Inspect(f, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						if fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func); ok && pass.ImportObjectFact(fn, new(probeFact)) {
							pass.Reportf(call.Pos(), "calls marked %s", fn.Name())
						}
					}
					return true
				})
			}
			return nil, nil
		},
	}
	ds, err := p.Analyze(context.Background(), []*analysis.Analyzer{reader}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !alive["example.com/release/lib"] {
		t.Error("lib's result was gone while its reader ran on lib")
	}
	if alive["example.com/release/app"] {
		t.Error("lib's result was still alive when the reader ran on app: results are kept until the check ends")
	}
	line := goanalysistest.Marked(app, "call")[0]
	if !slices.ContainsFunc(ds, func(d goanalysis.Diagnostic) bool {
		return d.Path == "app/app.go" && d.Line == line && d.Message == "calls marked Twice"
	}) {
		t.Errorf("the fact drawn from lib did not reach app: %v", ds)
	}
}
