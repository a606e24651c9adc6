package goanalysis

import (
	"fmt"
	"go/types"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
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
	// failed is the error of a pass the checker is not told of (see
	// checkRun.wrap): its readers fail.
	failed error
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
	// onEachDep is how many passes the checker runs on each dependency.
	onEachDep int32
	// onlyForOrder are the analyzers the checker runs on a dependency
	// only because the order (ordered) made the SSA builder require
	// them: no fact needs them there, and they are skipped.
	onlyForOrder map[*analysis.Analyzer]bool
}

// newReaders counts the readers of each result for a check of analyzers
// over pkgs, where an analyzer requires, besides its own requirements,
// those after gives it (ordered).
func newReaders(analyzers []*analysis.Analyzer, pkgs []*packages.Package, after map[*analysis.Analyzer][]*analysis.Analyzer) readers {
	r := readers{given: map[*types.Package]bool{}, onlyForOrder: map[*analysis.Analyzer]bool{}}
	for _, p := range pkgs {
		if p.Types != nil {
			r.given[p.Types] = true
		}
	}
	all := map[*analysis.Analyzer]bool{}
	for _, a := range analyzers {
		withRequired(all, a, after)
	}
	withFacts, ownFacts := map[*analysis.Analyzer]bool{}, map[*analysis.Analyzer]bool{}
	for a := range all {
		if len(a.FactTypes) > 0 {
			withRequired(withFacts, a, after)
			withRequired(ownFacts, a, nil)
		}
	}
	for a := range withFacts {
		if !ownFacts[a] {
			r.onlyForOrder[a] = true
		}
	}
	r.onGiven, r.onDeps = requirers(all, after), requirers(withFacts, after)
	r.onEachDep = int32(len(withFacts))
	return r
}

// Staticcheck's IR and x/tools' SSA of a package are each as large as its
// type information, and both were built at once, each when its first
// reader ran: on nats-server's `server` package (4.4 MB of code) the two
// together were most of the review's peak. The SSA builder is therefore
// made to wait for every analyzer of the check that reads the IR (and not
// the SSA), as a requirement the checker orders like any other: the IR is
// dropped (its readers all done) before the SSA is built. Nothing waits
// for a release, so a reader the checker skips (a failed prerequisite),
// which never releases the IR, cannot hang the check. A failing reader
// of the IR is not told to the checker, which would skip the SSA builder
// and every reader of the SSA after it: checkRun.wrap fails its own
// readers instead.

// ordered returns the requirements to add to the analyzers of a check of
// analyzers (by the original analyzer): the readers of the IR, to the SSA
// builder.
func ordered(analyzers []*analysis.Analyzer) map[*analysis.Analyzer][]*analysis.Analyzer {
	all := map[*analysis.Analyzer]bool{}
	for _, a := range analyzers {
		withRequired(all, a, nil)
	}
	if !all[buildssa.Analyzer] {
		return nil
	}
	isIR := func(a *analysis.Analyzer) bool { return a.Name == "buildir" }
	isSSA := func(a *analysis.Analyzer) bool { return a == buildssa.Analyzer }
	var irReaders []*analysis.Analyzer
	for a := range all {
		if slices.ContainsFunc(a.Requires, isIR) && !requires(a, isSSA) {
			irReaders = append(irReaders, a)
		}
	}
	if len(irReaders) == 0 {
		return nil
	}
	slices.SortFunc(irReaders, func(a, b *analysis.Analyzer) int { return strings.Compare(a.Name, b.Name) })
	return map[*analysis.Analyzer][]*analysis.Analyzer{buildssa.Analyzer: irReaders}
}

// A dependency's syntax and type information (the repository's own
// packages', with their function bodies; the others have none, or
// without bodies, see typecheck.go) are read by its own passes only, and the checker runs
// them before those of the packages importing it: the given packages'
// analysis, where a review's memory peaks, ran with all of it alive.
// Once the last pass on a dependency has ended, what it read is dropped.

// depPasses follows the passes on one dependency.
type depPasses struct {
	pkg     *packages.Package
	pending atomic.Int32
	mu      sync.Mutex
	passes  []*analysis.Pass
}

// dependencies returns, for each package of the graph of pkgs that was
// not given, the passes to wait for before its syntax is dropped.
func (r readers) dependencies(pkgs []*packages.Package) map[*types.Package]*depPasses {
	deps := map[*types.Package]*depPasses{}
	if r.onEachDep == 0 {
		return deps
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Types != nil && !r.given[p.Types] {
			d := &depPasses{pkg: p}
			d.pending.Store(r.onEachDep)
			deps[p.Types] = d
		}
	})
	return deps
}

// started records a pass on the dependency.
func (d *depPasses) started(pass *analysis.Pass) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.passes = append(d.passes, pass)
}

// ended records that a pass on the dependency has ended, and drops the
// dependency's syntax and type information, from the package and from
// the passes the checker keeps, after the last.
func (d *depPasses) ended() {
	if d.pending.Add(-1) != 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, pass := range d.passes {
		pass.Files, pass.TypesInfo = nil, nil
	}
	d.passes = nil
	d.pkg.Syntax, d.pkg.TypesInfo = nil, nil
}

// requirers counts, for each analyzer, the analyzers of run that require
// it directly (with the requirements after adds).
func requirers(run map[*analysis.Analyzer]bool, after map[*analysis.Analyzer][]*analysis.Analyzer) map[*analysis.Analyzer]int32 {
	n := map[*analysis.Analyzer]int32{}
	for a := range run {
		seen := map[*analysis.Analyzer]bool{}
		for _, req := range slices.Concat(a.Requires, after[a]) {
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
// analyzers that made them; of those the pass only waits for (waited,
// ordered), it reads none, and their failure is not its own.
func inputs(resultOf map[*analysis.Analyzer]any, orig map[*analysis.Analyzer]*analysis.Analyzer, waited []*analysis.Analyzer) (map[*analysis.Analyzer]any, error) {
	own := make(map[*analysis.Analyzer]any, len(resultOf))
	for r, res := range resultOf {
		if slices.Contains(waited, orig[r]) {
			continue
		}
		h, ok := res.(*held)
		if ok && h.failed != nil {
			return nil, fmt.Errorf("failed prerequisites: %s: %w", orig[r].Name, h.failed)
		}
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
