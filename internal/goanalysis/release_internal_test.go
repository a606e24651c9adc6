package goanalysis

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"

	"github.com/quorum-review/quorum/internal/change/changetest"
)

type orderFact struct{}

func (*orderFact) AFact() {}

// loadLibAndApp loads a change in which package app, changed, imports
// lib, unchanged, of the same module.
func loadLibAndApp(t *testing.T) *Program {
	t.Helper()
	r := changetest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     "module example.com/lazy\n\ngo 1.26\n",
		"lib/lib.go": "package lib\n\n// Twice doubles n.\nfunc Twice(n int) int { return 2 * n }\n",
		"app/app.go": "package app\n\nfunc Nothing() {}\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"app/app.go": "package app\n\nimport \"example.com/lazy/lib\"\n\n// Four is four.\nfunc Four() int { return lib.Twice(2) }\n"})
	head := r.Commit("head")
	p, err := NewLoader(Config{}).Load(context.Background(), r.Change(base, head))
	if err != nil || p == nil || p.SyntaxOnly != "" || len(p.Packages) != 1 {
		t.Fatalf("load: %v %v", p, err)
	}
	return p
}

// TestIRBuiltWhenFirstRead: the IR builder's pass on a package runs when
// the first pass that reads it does, after the facts of the packages it
// imports, not when the checker reaches it: built at once, the IR of
// every package of the repository was alive while its readers waited for
// those facts. The checker runs sequentially here, depth first, so the
// order is fixed: it reaches the builder on app before the facts of lib.
func TestIRBuiltWhenFirstRead(t *testing.T) {
	t.Parallel()
	p := loadLibAndApp(t)
	var order []string
	ir := &analysis.Analyzer{
		Name: "buildir", Doc: "stands for staticcheck's IR builder",
		ResultType: reflect.TypeFor[*orderFact](),
		Run: func(pass *analysis.Pass) (any, error) {
			order = append(order, "ir "+pass.Pkg.Name())
			return new(orderFact), nil
		},
	}
	facts := &analysis.Analyzer{
		Name: "facts", Doc: "reads the IR, uses facts",
		Requires:  []*analysis.Analyzer{ir},
		FactTypes: []analysis.Fact{new(orderFact)},
		Run: func(pass *analysis.Pass) (any, error) {
			if pass.ResultOf[ir] == nil {
				t.Errorf("no IR on %s", pass.Pkg.Name())
			}
			order = append(order, "facts "+pass.Pkg.Name())
			return nil, nil
		},
	}
	for a, res := range p.checkOn([]*analysis.Analyzer{facts}, p.Packages, &checker.Options{Sequential: true}, false) {
		if res.err != nil {
			t.Fatalf("%s: %v", a.Name, res.err)
		}
	}
	if want := []string{"ir lib", "facts lib", "ir app", "facts app"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

// TestDependencySyntaxDroppedAfterItsPasses: in the last check of a
// program, a dependency's syntax and type information (here one of the
// repository's own packages, with its bodies) are dropped once its own
// passes have ended, before the given package's passes run; in a check
// after which another reads them, they are kept.
func TestDependencySyntaxDroppedAfterItsPasses(t *testing.T) {
	t.Parallel()
	for _, last := range []bool{false, true} {
		p := loadLibAndApp(t)
		lib := p.Packages[0].Imports["example.com/lazy/lib"]
		var seen []string
		facts := &analysis.Analyzer{
			Name: "facts", Doc: "uses facts, and says what syntax it saw",
			FactTypes: []analysis.Fact{new(orderFact)},
			Run: func(pass *analysis.Pass) (any, error) {
				seen = append(seen, fmt.Sprintf("%s: %d files, info %v; lib's %d files, info %v",
					pass.Pkg.Name(), len(pass.Files), pass.TypesInfo != nil, len(lib.Syntax), lib.TypesInfo != nil))
				return nil, nil
			},
		}
		for a, res := range p.checkOn([]*analysis.Analyzer{facts}, p.Packages, &checker.Options{Sequential: true}, last) {
			if res.err != nil {
				t.Fatalf("%s: %v", a.Name, res.err)
			}
		}
		want := []string{"lib: 1 files, info true; lib's 1 files, info true", "app: 1 files, info true; lib's 0 files, info false"}
		if !last {
			want[1] = "app: 1 files, info true; lib's 1 files, info true"
		}
		if !slices.Equal(seen, want) {
			t.Errorf("last %v: the passes saw %q, want %q", last, seen, want)
		}
	}
}
