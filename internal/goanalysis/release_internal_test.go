package goanalysis

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"weak"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/passes/buildssa"

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

// TestSSABuiltAfterTheIRIsDropped: the SSA builder on a package runs
// after every analyzer there that reads the IR (and not the SSA), so the
// IR is no longer alive when the SSA is built; an analyzer reading both
// still gets both. The checker runs sequentially here, in the order of
// the analyzers given: the SSA's reader first. A failed reader of the IR
// fails what reads its result, not the SSA's readers.
func TestSSABuiltAfterTheIRIsDropped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ irFails, withBoth, facts bool }{{false, false, false}, {false, true, false}, {true, false, false}, {true, false, true}} {
		irFails := tc.irFails
		p := loadLibAndApp(t)
		var order []string
		var irAlive weak.Pointer[irForm]
		ir := &analysis.Analyzer{
			Name: "buildir", Doc: "stands for staticcheck's IR builder",
			ResultType: reflect.TypeFor[*irForm](),
			Run: func(pass *analysis.Pass) (any, error) {
				order = append(order, "ir "+pass.Pkg.Name())
				v := new(irForm)
				irAlive = weak.Make(v)
				return v, nil
			},
		}
		irReader := &analysis.Analyzer{
			Name: "irreader", Doc: "reads the IR",
			Requires: []*analysis.Analyzer{ir},
			Run: func(pass *analysis.Pass) (any, error) {
				order = append(order, "irreader "+pass.Pkg.Name())
				if irFails {
					return nil, errors.New("failed")
				}
				return nil, nil
			},
		}
		if tc.facts {
			// It fails on lib; on app, which imports lib, the
			// checker would not run it.
			irReader.FactTypes = []analysis.Fact{new(orderFact)}
		}
		ssaReader := &analysis.Analyzer{
			Name: "ssareader", Doc: "reads the SSA",
			Requires: []*analysis.Analyzer{buildssa.Analyzer},
			Run: func(pass *analysis.Pass) (any, error) {
				runtime.GC()
				order = append(order, fmt.Sprintf("ssareader %s, IR alive %v", pass.Pkg.Name(), irAlive.Value() != nil))
				return nil, nil
			},
		}
		both := &analysis.Analyzer{
			Name: "both", Doc: "reads the IR and the SSA",
			Requires: []*analysis.Analyzer{ir, buildssa.Analyzer},
			Run: func(pass *analysis.Pass) (any, error) {
				if pass.ResultOf[ir] == nil || pass.ResultOf[buildssa.Analyzer] == nil {
					t.Errorf("both: no IR or no SSA on %s", pass.Pkg.Name())
				}
				order = append(order, "both "+pass.Pkg.Name())
				return nil, nil
			},
		}
		afterIR := &analysis.Analyzer{
			Name: "afterirreader", Doc: "reads the IR's reader's result",
			Requires: []*analysis.Analyzer{irReader},
			Run: func(pass *analysis.Pass) (any, error) {
				order = append(order, "afterirreader "+pass.Pkg.Name())
				return nil, nil
			},
		}
		run := []*analysis.Analyzer{ssaReader, irReader, afterIR}
		if tc.withBoth {
			run = append(run, both)
		}
		results := p.checkOn(run, p.Packages, &checker.Options{Sequential: true}, true)
		if irFails {
			want := []string{"ir app", "irreader app", "ssareader app, IR alive false"}
			if tc.facts {
				want = []string{"ir lib", "irreader lib", "ssareader app, IR alive false"}
			}
			if !slices.Equal(order, want) {
				t.Errorf("a failed reader of the IR (facts %v): order %q, want %q", tc.facts, order, want)
			}
			if results[irReader].err == nil || results[afterIR].err == nil || results[ssaReader].err != nil {
				t.Errorf("a failed reader of the IR: errors %v, %v and %v, want the first two only", results[irReader].err, results[afterIR].err, results[ssaReader].err)
			}
			continue
		}
		for a, res := range results {
			if res.err != nil {
				t.Fatalf("%s: %v", a.Name, res.err)
			}
		}
		want := []string{"ir app", "irreader app", "ssareader app, IR alive false", "afterirreader app"}
		if tc.withBoth {
			// both keeps the IR until it has run.
			want = []string{"ir app", "irreader app", "ssareader app, IR alive true", "afterirreader app", "both app"}
		}
		if !slices.Equal(order, want) {
			t.Errorf("with both %v: order %q, want %q", tc.withBoth, order, want)
		}
	}
}

// irForm stands for an IR; not of size zero, whose values all share
// one address that is never freed.
type irForm struct{ _ [64]byte }
