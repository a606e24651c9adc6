package goanalysis

import (
	"fmt"
	"go/types"
	"reflect"
	"sync"
	"sync/atomic"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"
)

// The checker keeps the result of every pass it ran until the whole
// check ends (x/tools leaves "clear them earlier, so we can release large
// data structures like SSA sooner" to do). A change in a large
// repository imports many of the repository's own packages, which are
// analysed whole so that their facts reach the changed ones: their SSA,
// staticcheck's IR, inspectors and control-flow graphs, hundreds of
// megabytes, were all alive at the end of the analysis. A check's copies
// of the analyzers (checkRun.wrap) therefore give the checker a held
// result in place of their analyzer's, and drop what it holds once every
// pass on that package that reads it has run. Which passes those are
// follows from how the checker builds its graph: on a package it was
// given, every analyzer asked for and what they require; on a dependency,
// the analyzers with facts and what they require.

// held is a pass's result as the checker keeps it.
type held struct {
	v any
	// build, when set, makes v when a reader first asks (lazily).
	build func() (any, error)
	once  sync.Once
	err   error
	// pending counts the passes on the same package that read v and
	// have not finished.
	pending atomic.Int32
	// dropped is set when v was dropped; a pass reading it then would be
	// a miscount, an error rather than a nil result.
	dropped bool
}

// heldType is the result type of a check's copy of an analyzer.
var heldType = reflect.TypeFor[*held]()

// readers counts, for one check, the passes that read each analyzer's
// result on one package.
type readers struct {
	// given are the packages the checker was given; others are their
	// dependencies.
	given map[*types.Package]bool
	// onGiven and onDeps count, by analyzer, the analyzers run on a
	// given package, and on a dependency, that require it.
	onGiven, onDeps map[*analysis.Analyzer]int32
}

// newReaders counts the readers of each result for a check of analyzers
// over pkgs.
func newReaders(analyzers []*analysis.Analyzer, pkgs []*packages.Package) readers {
	r := readers{given: map[*types.Package]bool{}}
	for _, p := range pkgs {
		if p.Types != nil {
			r.given[p.Types] = true
		}
	}
	all := map[*analysis.Analyzer]bool{}
	for _, a := range analyzers {
		withRequired(all, a)
	}
	withFacts := map[*analysis.Analyzer]bool{}
	for a := range all {
		if len(a.FactTypes) > 0 {
			withRequired(withFacts, a)
		}
	}
	r.onGiven, r.onDeps = requirers(all), requirers(withFacts)
	return r
}

// requirers counts, for each analyzer, the analyzers of run that require
// it directly.
func requirers(run map[*analysis.Analyzer]bool) map[*analysis.Analyzer]int32 {
	n := map[*analysis.Analyzer]int32{}
	for a := range run {
		seen := map[*analysis.Analyzer]bool{}
		for _, req := range a.Requires {
			if !seen[req] {
				seen[req] = true
				n[req]++
			}
		}
	}
	return n
}

// hold returns v held for the passes on pkg that read a's result: nil
// when none does.
func (r readers) hold(a *analysis.Analyzer, pkg *types.Package, v any) *held {
	n := r.onDeps[a]
	if r.given[pkg] {
		n = r.onGiven[a]
	}
	h := &held{v: v}
	h.pending.Store(n)
	if n == 0 {
		h.v, h.dropped = nil, true
	}
	return h
}

// inputs returns the results a pass reads, by the originals of the
// analyzers that made them.
func inputs(resultOf map[*analysis.Analyzer]any, orig map[*analysis.Analyzer]*analysis.Analyzer) (map[*analysis.Analyzer]any, error) {
	own := make(map[*analysis.Analyzer]any, len(resultOf))
	for r, res := range resultOf {
		h, ok := res.(*held)
		if !ok || h.dropped {
			return nil, fmt.Errorf("the result of %s was released before all its readers ran", r.Name)
		}
		v, err := h.value()
		if err != nil {
			return nil, err
		}
		own[orig[r]] = v
	}
	return own, nil
}

// value returns the held result, made now if it is made lazily.
func (h *held) value() (any, error) {
	h.once.Do(func() {
		if h.build != nil {
			h.v, h.err = h.build()
		}
	})
	return h.v, h.err
}

// read records that a pass has finished reading its inputs, and drops
// each one no other pass is still to read.
func read(resultOf map[*analysis.Analyzer]any) {
	for _, res := range resultOf {
		if h, ok := res.(*held); ok && h.pending.Add(-1) == 0 {
			h.v, h.build, h.dropped = nil, nil, true
		}
	}
}

// lazy reports whether a's result is made when first read rather than
// when the checker runs a: the SSA and IR builders, whose result is
// large and only read by analyzers that wait, besides, for the facts of
// every package imported. Built at once, the IR of every package of the
// repository the change imports was alive together, waiting for them.
func lazy(a *analysis.Analyzer) bool {
	return buildsIR(a)
}
