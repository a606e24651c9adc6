package goanalysis

import (
	"fmt"
	"go/types"
	"reflect"
	"slices"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"
	"honnef.co/go/tools/analysis/facts/deprecated"
)

// The checker applies every analyzer that uses facts, and the analyzers
// it requires, to every dependency of the packages analyzed: for a small
// change, staticcheck's IR of some 80–150 standard-library packages and
// the fact analyzers over it, a fifth of a review's analysis. Yet a
// package outside the repository is held as export data (typecheck.go),
// without syntax or function bodies (but for one that imports a package
// of the repository, checked from source without its bodies), so the
// facts drawn from bodies (a
// function that never returns, a pure function, a result never nil, a
// printf wrapper, an even-length slice) are absent from them either way.
// Those analyzers are therefore skipped on packages outside the
// repository: they return their result type's zero value and export
// nothing, at no cost.
//
// Still run there are the analyzers whose facts come from declarations:
// staticcheck's deprecations (what SA1019 reports of the standard library
// and of modules), which the loader read from each dependency's syntax
// while it type-checked it; their pass replays them (summary.replay).
//
// The checker has no per-package switch, so each check runs copies of its
// analyzers, made for it (see checkRun), whose Run skips the packages that
// check knows to be outside; the analyzers themselves are never written.

// declarationFacts are the fact analyzers run on packages outside the
// repository (with what they require).
var declarationFacts = []*analysis.Analyzer{deprecated.Analyzer}

// checkRun is one run of the checker: which of its packages lie outside
// the repository, and its own copy of every analyzer it runs, so that
// concurrent checks of different programs share nothing but the
// analyzers' originals, which they only read.
type checkRun struct {
	outside map[*types.Package]bool
	// summaries are the dependencies' summaries: their deprecations are
	// replayed rather than read from syntax they no longer have.
	summaries map[*types.Package]*summary
	keep      map[*analysis.Analyzer]bool // run outside the repository too
	copies    map[*analysis.Analyzer]*analysis.Analyzer
	orig      map[*analysis.Analyzer]*analysis.Analyzer // copy → original
	// readers says when a result can be dropped, and deps when a
	// dependency's syntax can (release.go).
	readers readers
	deps    map[*types.Package]*depPasses
	// after are requirements added to analyzers for the order of the
	// IR's and SSA's builds (ordered).
	after map[*analysis.Analyzer][]*analysis.Analyzer
	// waitedFor are the analyzers after adds as requirements; failed
	// holds the error of each of their passes that failed, by failure.
	waitedFor map[*analysis.Analyzer]bool
	failed    sync.Map
}

// failure names an analyzer's pass on a package.
type failure struct {
	a   *analysis.Analyzer
	pkg *types.Package
}

// newCheckRun prepares a check of analyzers over pkgs, whose packages
// outside the repository (under root) are skipped by the analyzers with
// facts. With last (no later check reads the dependencies' syntax), a
// dependency's syntax is dropped when its last pass ends.
func newCheckRun(analyzers []*analysis.Analyzer, pkgs []*packages.Package, root string, last bool, summaries map[*types.Package]*summary) *checkRun {
	after := ordered(analyzers)
	c := &checkRun{
		summaries: summaries,
		after:     after,
		waitedFor: map[*analysis.Analyzer]bool{},
		readers:   newReaders(analyzers, pkgs, after),
		outside:   map[*types.Package]bool{},
		keep:      map[*analysis.Analyzer]bool{},
		copies:    map[*analysis.Analyzer]*analysis.Analyzer{},
		orig:      map[*analysis.Analyzer]*analysis.Analyzer{},
	}
	for _, a := range declarationFacts {
		withRequired(c.keep, a, nil)
	}
	for _, order := range after {
		for _, a := range order {
			c.waitedFor[a] = true
		}
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Types != nil && !inside(root, firstFile(p)) {
			c.outside[p.Types] = true
		}
	})
	if last {
		c.deps = c.readers.dependencies(pkgs)
	}
	return c
}

// wrap returns the check's copy of a, requiring the copies of what a
// requires. Its Run hands a's Run a pass that names a and a's
// requirements, so that a finds its inputs under their usual keys; a
// panic there, also in an analyzer required by another (which the
// checker runs in goroutines of its own), is that analyzer's error rather
// than the service's crash. All copies must be made before the check
// starts: its passes only read them.
func (c *checkRun) wrap(a *analysis.Analyzer) *analysis.Analyzer {
	if w, ok := c.copies[a]; ok {
		return w
	}
	w := *a
	c.copies[a], c.orig[&w] = &w, a
	w.Requires = nil
	for _, r := range slices.Concat(a.Requires, c.after[a]) {
		w.Requires = append(w.Requires, c.wrap(r))
	}
	run := c.runOf(a)
	w.ResultType = heldType
	w.Run = func(pass *analysis.Pass) (any, error) {
		if !c.waitedFor[a] {
			return run(pass)
		}
		// A failure of an analyzer the SSA builder waits for is kept
		// from the checker, which would skip the builder and the SSA's
		// readers after it; the analyzers that read a's result fail
		// instead, on this package (inputs) and, through a's facts, on
		// the packages importing it, as the checker would have failed
		// them.
		key := failure{a, pass.Pkg}
		for _, imp := range pass.Pkg.Imports() {
			if err, failed := c.failed.Load(failure{a, imp}); len(a.FactTypes) > 0 && failed {
				if d := c.deps[pass.Pkg]; d != nil {
					d.started(pass)
					d.ended()
				}
				read(pass.ResultOf)
				c.failed.Store(key, err)
				return &held{failed: fmt.Errorf("failed prerequisites: %s@%s", a.Name, imp.Path())}, nil
			}
		}
		res, err := run(pass)
		if err != nil {
			c.failed.Store(key, err)
			return &held{failed: err}, nil
		}
		return res, nil
	}
	return &w
}

// runOf returns the Run of the check's copy of a, which the checker sees
// fail as a does.
func (c *checkRun) runOf(a *analysis.Analyzer) func(*analysis.Pass) (any, error) {
	// The checker runs on dependencies only the analyzers with facts and
	// what they require; all but those of keep are skipped there. A
	// skipped pass returns its result type's zero value, which an
	// interface type has not: such an analyzer always runs.
	skip := !c.keep[a] && (a.ResultType == nil || a.ResultType.Kind() != reflect.Interface)
	return func(pass *analysis.Pass) (any, error) {
		if d := c.deps[pass.Pkg]; d != nil {
			d.started(pass)
			defer d.ended()
		}
		if skip && c.outside[pass.Pkg] || c.readers.onlyForOrder[a] && !c.readers.given[pass.Pkg] {
			read(pass.ResultOf)
			var zero any
			if a.ResultType != nil {
				zero = reflect.Zero(a.ResultType).Interface()
			}
			return c.readers.hold(a, pass.Pkg, zero), nil
		}
		own := *pass
		own.Analyzer = a
		var err error
		if own.ResultOf, err = inputs(pass.ResultOf, c.orig, c.after[a]); err != nil {
			read(pass.ResultOf)
			return nil, err
		}
		h := c.readers.hold(a, pass.Pkg, nil)
		run := a.Run
		if s := c.summaries[pass.Pkg]; s != nil && a == deprecated.Analyzer {
			run = s.replay
		}
		if lazy(a) {
			if h.dropped {
				read(pass.ResultOf)
			} else {
				h.build = func() (any, error) {
					defer read(pass.ResultOf)
					return runGuarded(a, run, &own)
				}
			}
			return h, nil
		}
		defer read(pass.ResultOf)
		res, err := runGuarded(a, run, &own)
		if err != nil {
			return nil, err
		}
		if !h.dropped {
			h.v = res
		}
		return h, nil
	}
}

// runGuarded runs a (as run) on pass; a panic is a's error.
func runGuarded(a *analysis.Analyzer, run func(*analysis.Pass) (any, error), pass *analysis.Pass) (res any, err error) {
	defer func() {
		if x := recover(); x != nil {
			res, err = nil, fmt.Errorf("%s panicked: %v", a.Name, x)
		}
	}()
	return run(pass)
}

// withRequired adds a and the analyzers it requires, transitively, to set,
// with the requirements after adds.
func withRequired(set map[*analysis.Analyzer]bool, a *analysis.Analyzer, after map[*analysis.Analyzer][]*analysis.Analyzer) {
	if set[a] {
		return
	}
	set[a] = true
	for _, r := range slices.Concat(a.Requires, after[a]) {
		withRequired(set, r, after)
	}
}
