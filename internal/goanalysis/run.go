package goanalysis

import (
	"context"
	"fmt"
	"go/token"
	"go/types"
	"runtime/debug"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/packages"
)

// Diagnostic is one analyzer diagnostic on a file of the repository.
type Diagnostic struct {
	// Analyzer is the analyzer that reported it, as passed to Analyze.
	Analyzer *analysis.Analyzer
	// Category is the diagnostic's own category, if the analyzer sets one
	// (gosec puts its rule id there).
	Category string
	// Path is the file's path in the repository; Line and EndLine are
	// head line numbers.
	Path          string
	Line, EndLine int
	Message       string
	// Patch is the first suggested fix as a unified diff against head,
	// or empty.
	Patch string
	// FixMessage describes Patch.
	FixMessage string
	// Related are other places in the repository the analyzer names as
	// part of the problem (the callers that no longer check what a
	// callee uses, say): a change there is a change that caused it.
	Related []Position
}

// Position is a line of a file of the repository.
type Position struct {
	Path string
	Line int
}

// Analyze runs analyzers over the program: typed on the type-checked
// packages (TypeCheck among them reports the type errors), and syntax on
// the parsed changed files of the packages that could not be type-checked. Syntax analyzers may require only inspect.Analyzer and
// must cope with a nil Pass.TypesInfo and Pass.Pkg. A panicking analyzer
// is an error, not a crash. Diagnostics outside the repository are
// dropped; the rest are sorted by path and line.
//
// The checker cannot be interrupted: when ctx ends first, Analyze returns
// ctx's error and the analysis finishes in the background.
func (p *Program) Analyze(ctx context.Context, typed, syntax []*analysis.Analyzer) ([]Diagnostic, error) {
	type result struct {
		ds  []Diagnostic
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if x := recover(); x != nil {
				r = result{err: fmt.Errorf("analyzer panicked: %v\n%s", x, debug.Stack())}
			}
			done <- r
		}()
		r.ds, r.err = p.analyzeTyped(typed)
		if r.err == nil {
			var ds []Diagnostic
			ds, r.err = p.analyzeSyntax(syntax)
			// A partly typed package is analysed both ways: an
			// analyzer that runs either way reports once.
			typedAt := map[string]bool{}
			for _, d := range r.ds {
				typedAt[fmt.Sprintf("%s\x00%s:%d\x00%s", d.Analyzer.Name, d.Path, d.Line, d.Message)] = true
			}
			for _, d := range ds {
				if !typedAt[fmt.Sprintf("%s\x00%s:%d\x00%s", d.Analyzer.Name, d.Path, d.Line, d.Message)] {
					r.ds = append(r.ds, d)
				}
			}
		}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		sortDiagnostics(r.ds)
		return r.ds, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func sortDiagnostics(ds []Diagnostic) {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if c := strings.Compare(a.Analyzer.Name, b.Analyzer.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

// analyzeTyped returns what analyzers found: the registered ones run
// together once per program, others in a run of their own.
func (p *Program) analyzeTyped(analyzers []*analysis.Analyzer) ([]Diagnostic, error) {
	var ds []Diagnostic
	if slices.Contains(analyzers, TypeCheck) {
		ds = append(ds, p.TypeErrors...)
		analyzers = slices.DeleteFunc(slices.Clone(analyzers), func(a *analysis.Analyzer) bool { return a == TypeCheck })
	}
	if len(analyzers) == 0 || len(p.Packages)+len(p.Partial)+len(p.Repaired) == 0 {
		return ds, nil
	}
	p.once.Do(func() {
		if len(p.Packages) > 0 {
			// The dependencies' syntax is dropped as their last pass
			// ends when no later check reads it (release).
			last := len(p.registered) > 0 && len(p.Partial)+len(p.Repaired)+len(p.unrepaired) == 0
			p.results = p.checkOn(p.registered, p.Packages, nil, last)
		}
		p.partial = p.checkPartial(p.registered)
		if len(p.registered) > 0 {
			p.release()
		}
	})
	var rest []*analysis.Analyzer
	for _, a := range analyzers {
		if !slices.Contains(p.registered, a) {
			rest = append(rest, a)
			continue
		}
		ds = append(ds, p.partial[a]...)
		if r, ok := p.results[a]; ok {
			if r.err != nil {
				return nil, r.err
			}
			ds = append(ds, r.ds...)
		}
	}
	if len(rest) == 0 {
		return ds, nil
	}
	if p.released {
		return nil, fmt.Errorf("analyzer %s was not registered with the loader before the program was analysed", rest[0].Name)
	}
	if len(p.Packages) > 0 {
		for _, r := range p.check(rest) {
			if r.err != nil {
				return nil, r.err
			}
			ds = append(ds, r.ds...)
		}
	}
	// Specialists ask concurrently; a partly typed run marks the
	// packages well-typed for the checker, one run at a time.
	p.partialMu.Lock()
	defer p.partialMu.Unlock()
	for _, found := range p.checkPartial(rest) {
		ds = append(ds, found...)
	}
	return ds, nil
}

// release drops what only the analyzers needed once they have all run:
// the syntax and type information of the dependencies (the changed
// packages keep theirs, which the differential step reads). A program of
// a large repository holds hundreds of megabytes there, and a review
// loads the base after the head.
func (p *Program) release() {
	roots := map[*packages.Package]bool{}
	for _, pkg := range p.Packages {
		roots[pkg] = true
	}
	packages.Visit(p.Packages, nil, func(pkg *packages.Package) {
		if !roots[pkg] {
			pkg.Syntax, pkg.TypesInfo = nil, nil
		}
	})
	p.released = true
}

// check runs analyzers over the packages with the checker.
func (p *Program) check(analyzers []*analysis.Analyzer) map[*analysis.Analyzer]analyzed {
	return p.checkOn(analyzers, p.Packages, nil, false)
}

// checkPartial runs analyzers over the packages with type errors: all of
// them over the Repaired packages (whose bodies with errors were left
// out), and over the packages typed in part (Partial) those that do not
// build on SSA (which needs complete types, and panics without them).
// The checker runs them in this goroutine, so a panic anywhere ends
// that run only, as a failed analyzer does: what is not found there is
// the syntax-only analysis's to find (a Repaired package that makes one
// panic is analysed as a Partial one), and the coverage note already
// says the package was not fully type-checked.
func (p *Program) checkPartial(analyzers []*analysis.Analyzer) map[*analysis.Analyzer][]Diagnostic {
	found := map[*analysis.Analyzer][]Diagnostic{}
	seen := map[string]bool{}
	add := func(r map[*analysis.Analyzer][]Diagnostic) {
		for a, ds := range r {
			for _, d := range ds {
				// A Repaired package is analysed both ways.
				if k := fmt.Sprintf("%s\x00%s:%d\x00%s", a.Name, d.Path, d.Line, d.Message); !seen[k] {
					seen[k] = true
					found[a] = append(found[a], d)
				}
			}
		}
	}
	// The functions left out of a Repaired package are analysed as
	// loaded, by the analyzers that need no SSA.
	partial := slices.Concat(p.Partial, p.unrepaired)
	if len(p.Repaired) > 0 {
		r, ok := p.checkTolerant(analyzers, p.Repaired, true)
		if !ok {
			partial = slices.Concat(partial, p.Repaired)
		}
		add(r)
	}
	if len(partial) > 0 {
		r, _ := p.checkTolerant(analyzers, partial, false)
		add(r)
	}
	return found
}

// checkTolerant runs analyzers over pkgs, one at a time, where an
// analyzer's failure or panic ends this run only; all of them when
// complete, else those that do not build on SSA or IR (or their
// stand-ins). false when a panic ended it.
func (p *Program) checkTolerant(analyzers []*analysis.Analyzer, pkgs []*packages.Package, complete bool) (found map[*analysis.Analyzer][]Diagnostic, ok bool) {
	var run []*analysis.Analyzer
	standsFor := map[*analysis.Analyzer]*analysis.Analyzer{}
	for _, a := range analyzers {
		switch s := p.partly[a]; {
		case complete, !requires(a, buildsIR):
			run = append(run, a)
		case s != nil && !requires(s, buildsIR):
			run = append(run, s)
			standsFor[s] = a
		}
	}
	if len(run) == 0 {
		return nil, true
	}
	// The checker skips an ill-typed package's analyzers; these are
	// analysed for what did type-check.
	packages.Visit(pkgs, nil, func(pkg *packages.Package) { pkg.IllTyped = false })
	defer func() {
		if recover() != nil {
			found, ok = nil, false
		}
	}()
	found = map[*analysis.Analyzer][]Diagnostic{}
	for a, r := range p.checkOn(run, pkgs, &checker.Options{Sequential: true}, false) {
		if r.err != nil {
			continue
		}
		if full := standsFor[a]; full != nil {
			for i := range r.ds {
				r.ds[i].Analyzer = full
			}
			a = full
		}
		found[a] = r.ds
	}
	return found, true
}

// buildsIR reports whether an analyzer builds an intermediate form that
// needs complete types: x/tools' SSA, or staticcheck's IR.
func buildsIR(a *analysis.Analyzer) bool {
	return a == buildssa.Analyzer || a.Name == "buildir"
}

// requires reports whether a needs an analyzer that is, directly or
// through what it needs.
func requires(a *analysis.Analyzer, is func(*analysis.Analyzer) bool) bool {
	if is(a) {
		return true
	}
	for _, r := range a.Requires {
		if requires(r, is) {
			return true
		}
	}
	return false
}

// checkOn runs analyzers over pkgs with the checker; last says that no
// later check reads the syntax of pkgs' dependencies.
func (p *Program) checkOn(analyzers []*analysis.Analyzer, pkgs []*packages.Package, opts *checker.Options, last bool) map[*analysis.Analyzer]analyzed {
	results := map[*analysis.Analyzer]analyzed{}
	if len(analyzers) == 0 {
		return results
	}
	c := newCheckRun(analyzers, pkgs, p.Root, last, p.summaries)
	run := make([]*analysis.Analyzer, len(analyzers))
	for i, a := range analyzers {
		run[i] = c.wrap(a)
	}
	graph, err := checker.Analyze(run, pkgs, opts)
	if err != nil {
		for _, a := range analyzers {
			results[a] = analyzed{err: fmt.Errorf("analyze: %w", err)}
		}
		return results
	}
	seen := map[string]bool{}
	for _, act := range graph.Roots {
		a := c.orig[act.Analyzer]
		r := results[a]
		if h, ok := act.Result.(*held); ok && act.Err == nil && h.failed != nil {
			act.Err = h.failed
		}
		if act.Err != nil {
			if r.err == nil {
				r.err = fmt.Errorf("analyzer %s on %s: %w", a.Name, act.Package.PkgPath, act.Err)
			}
			results[a] = r
			continue
		}
		for _, d := range act.Diagnostics {
			cd, ok := p.convert(act.Package.Fset, a, d)
			if !ok {
				continue
			}
			// A file of a package and of its test variant is analyzed
			// twice: report it once.
			key := fmt.Sprintf("%s\x00%s:%d\x00%s", a.Name, cd.Path, cd.Line, cd.Message)
			if seen[key] {
				continue
			}
			seen[key] = true
			r.ds = append(r.ds, cd)
		}
		results[a] = r
	}
	return results
}

// analyzeSyntax runs syntax-only analyzers over the parsed changed files,
// as one package with no type information.
func (p *Program) analyzeSyntax(analyzers []*analysis.Analyzer) ([]Diagnostic, error) {
	if len(analyzers) == 0 || len(p.Files) == 0 {
		return nil, nil
	}
	var ds []Diagnostic
	// Files of several packages are analyzed one file at a time: a pass
	// is meant to see one package, and syntax analyzers look no further
	// than a file.
	ins := inspector.New(p.Files)
	for _, a := range analyzers {
		for _, req := range a.Requires {
			if req != inspect.Analyzer {
				return nil, fmt.Errorf("syntax analyzer %s requires %s", a.Name, req.Name)
			}
		}
		pass := &analysis.Pass{
			Analyzer: a,
			Fset:     p.Fset,
			Files:    p.Files,
			ResultOf: map[*analysis.Analyzer]any{inspect.Analyzer: ins},
			Report: func(d analysis.Diagnostic) {
				if cd, ok := p.convert(p.Fset, a, d); ok {
					ds = append(ds, cd)
				}
			},
			ImportObjectFact:  func(types.Object, analysis.Fact) bool { return false },
			ExportObjectFact:  func(types.Object, analysis.Fact) {},
			ImportPackageFact: func(*types.Package, analysis.Fact) bool { return false },
			ExportPackageFact: func(analysis.Fact) {},
			AllObjectFacts:    func() []analysis.ObjectFact { return nil },
			AllPackageFacts:   func() []analysis.PackageFact { return nil },
		}
		if _, err := runGuarded(a, a.Run, pass); err != nil {
			return nil, fmt.Errorf("analyzer %s: %w", a.Name, err)
		}
	}
	return ds, nil
}

// convert turns a diagnostic into a repository one; false when it lies
// outside the repository.
func (p *Program) convert(fset *token.FileSet, a *analysis.Analyzer, d analysis.Diagnostic) (Diagnostic, bool) {
	pos := fset.PositionFor(d.Pos, false)
	if !pos.IsValid() {
		return Diagnostic{}, false
	}
	path, ok := p.RepoPath(pos.Filename)
	if !ok {
		return Diagnostic{}, false
	}
	end := pos.Line
	if d.End.IsValid() {
		if e := fset.PositionFor(d.End, false); e.Filename == pos.Filename && e.Line > end {
			end = e.Line
			// A range ending at the start of a line does not cover it.
			if e.Column == 1 {
				end--
			}
		}
	}
	cd := Diagnostic{
		Analyzer: a,
		Category: d.Category,
		Path:     path,
		Line:     pos.Line,
		EndLine:  max(end, pos.Line),
		Message:  d.Message,
	}
	for _, r := range d.Related {
		if rp := fset.PositionFor(r.Pos, false); rp.IsValid() {
			if path, ok := p.RepoPath(rp.Filename); ok {
				cd.Related = append(cd.Related, Position{path, rp.Line})
			}
		}
	}
	for _, fix := range d.SuggestedFixes {
		if patch, err := p.patch(fset, fix.TextEdits); err == nil && patch != "" {
			cd.Patch, cd.FixMessage = patch, fix.Message
			break
		}
	}
	return cd, true
}
