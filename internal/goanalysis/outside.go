package goanalysis

import (
	"fmt"
	"go/types"
	"reflect"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"
	"honnef.co/go/tools/analysis/facts/deprecated"
)

// The checker applies every analyzer that uses facts, and the analyzers
// it requires, to every dependency of the packages analyzed: for a small
// change, staticcheck's IR of some 80–150 standard-library packages and
// the fact analyzers over it, a fifth of a review's analysis. Yet the
// loader has trimmed the function bodies of every package outside the
// repository (see trim), so the facts drawn from bodies (a function that
// never returns, a pure function, a result never nil, a printf wrapper, an
// even-length slice) are absent from them either way, but for the generic
// functions, whose bodies the type checker needs. Those analyzers are
// therefore skipped on packages outside the repository: they return their
// result type's zero value and export nothing, at no cost.
//
// Still run there are the analyzers whose facts come from declarations:
// staticcheck's deprecations (what SA1019 reports of the standard library
// and of modules), cheap on bodiless code.
//
// The checker has no per-package switch, so the skip is a wrapper around
// the Run function of each analyzer concerned, installed once, in place;
// it skips a pass only when the pass's package was registered as outside
// by a running check, so any other use of the analyzers is unaffected. An
// analyzer is wrapped, under the lock, before the first check that runs it
// starts, and never written again.
var outside = struct {
	mu       sync.Mutex
	wrapped  map[*analysis.Analyzer]bool
	packages map[*types.Package]int // outside packages of running checks, counted
}{wrapped: map[*analysis.Analyzer]bool{}, packages: map[*types.Package]int{}}

// declarationFacts are the fact analyzers run on packages outside the
// repository (with what they require).
var declarationFacts = []*analysis.Analyzer{deprecated.Analyzer}

// prepareCheck prepares a check of analyzers over pkgs: it wraps every
// analyzer the check runs, so that a panic, also in an analyzer required
// by another (which guard does not cover, and which the checker runs in
// goroutines of its own), is that analyzer's error rather than the
// service's crash, and so that they skip the dependencies outside the
// repository (under root), which it registers. The check must call
// release when it is over.
func prepareCheck(analyzers []*analysis.Analyzer, pkgs []*packages.Package, root string) (release func()) {
	keep := map[*analysis.Analyzer]bool{}
	for _, a := range declarationFacts {
		withRequired(keep, a)
	}
	seen := map[*analysis.Analyzer]bool{}
	for _, a := range analyzers {
		withRequired(seen, a)
	}

	var deps []*types.Package
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Types != nil && !inside(root, firstFile(p)) {
			deps = append(deps, p.Types)
		}
	})

	outside.mu.Lock()
	defer outside.mu.Unlock()
	for a := range seen {
		if outside.wrapped[a] {
			continue
		}
		outside.wrapped[a] = true
		// The checker runs on dependencies only the analyzers with facts
		// and what they require; all but those of keep are skipped there,
		// whatever the check (keep holds what its analyzers require). A
		// skipped pass returns its result type's zero value, which an
		// interface type has not: such an analyzer always runs.
		skip := !keep[a] && (a.ResultType == nil || a.ResultType.Kind() != reflect.Interface)
		run, resultType, name := a.Run, a.ResultType, a.Name
		a.Run = func(pass *analysis.Pass) (res any, err error) {
			if skip && isOutside(pass.Pkg) {
				if resultType == nil {
					return nil, nil
				}
				return reflect.Zero(resultType).Interface(), nil
			}
			defer func() {
				if x := recover(); x != nil {
					res, err = nil, fmt.Errorf("%s panicked: %v", name, x)
				}
			}()
			return run(pass)
		}
	}
	for _, t := range deps {
		outside.packages[t]++
	}
	return func() {
		outside.mu.Lock()
		defer outside.mu.Unlock()
		for _, t := range deps {
			if outside.packages[t]--; outside.packages[t] <= 0 {
				delete(outside.packages, t)
			}
		}
	}
}

// withRequired adds a and the analyzers it requires, transitively, to set.
func withRequired(set map[*analysis.Analyzer]bool, a *analysis.Analyzer) {
	if set[a] {
		return
	}
	set[a] = true
	for _, r := range a.Requires {
		withRequired(set, r)
	}
}

func isOutside(p *types.Package) bool {
	outside.mu.Lock()
	defer outside.mu.Unlock()
	return outside.packages[p] > 0
}
