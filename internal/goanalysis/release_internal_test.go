package goanalysis

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"

	"github.com/quorum-review/quorum/internal/change/changetest"
)

type orderFact struct{}

func (*orderFact) AFact() {}

// TestIRBuiltWhenFirstRead: the IR builder's pass on a package runs when
// the first pass that reads it does, after the facts of the packages it
// imports, not when the checker reaches it: built at once, the IR of
// every package of the repository was alive while its readers waited for
// those facts. The checker runs sequentially here, depth first, so the
// order is fixed: it reaches the builder on app before the facts of lib.
func TestIRBuiltWhenFirstRead(t *testing.T) {
	t.Parallel()
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
	if err != nil || p == nil || p.SyntaxOnly != "" {
		t.Fatalf("load: %v %v", p, err)
	}
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
	for a, res := range p.checkOn([]*analysis.Analyzer{facts}, p.Packages, &checker.Options{Sequential: true}) {
		if res.err != nil {
			t.Fatalf("%s: %v", a.Name, res.err)
		}
	}
	if want := []string{"ir lib", "facts lib", "ir app", "facts app"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}
