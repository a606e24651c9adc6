package specialist

import (
	"context"
	"fmt"
)

// noteKey carries a specialist's note sink in its context.
type noteKey struct{}

// WithNotes returns a context whose specialist notes go to add. The
// pipeline gives each specialist its own, so a note is told apart by the
// specialist that made it; add may be called from any goroutine.
func WithNotes(ctx context.Context, add func(string)) context.Context {
	return context.WithValue(ctx, noteKey{}, add)
}

// Note tells the reader of the review something about how the specialist
// ran that is not a finding: that one of its engines failed and the
// others' findings stand alone, say. The pipeline puts notes in the
// review's summary. Without a sink (a specialist run outside the pipeline)
// the note is dropped.
func Note(ctx context.Context, format string, args ...any) {
	if add, ok := ctx.Value(noteKey{}).(func(string)); ok {
		add(fmt.Sprintf(format, args...))
	}
}

// coverageKey carries a specialist's coverage sink in its context.
type coverageKey struct{}

// Coverage is what a specialist's engine said of one changed file: that it
// analysed it, or that it could not, and why.
type Coverage struct {
	Path     string
	Analysed bool
	// Engine names what analysed the file ("go", "llm"); Reason says why
	// it was not analysed.
	Engine string
	Reason string
}

// WithCoverage returns a context whose coverage reports go to add. The
// pipeline gives each specialist its own; add may be called from any
// goroutine.
func WithCoverage(ctx context.Context, add func(Coverage)) context.Context {
	return context.WithValue(ctx, coverageKey{}, add)
}

// Analysed tells the pipeline that engine analysed the files at paths.
// A changed source file that no specialist's engine analysed keeps the
// review from approving, and the summary names it.
func Analysed(ctx context.Context, engine string, paths ...string) {
	if add, ok := ctx.Value(coverageKey{}).(func(Coverage)); ok {
		for _, p := range paths {
			add(Coverage{Path: p, Analysed: true, Engine: engine})
		}
	}
}

// NotAnalysed tells the pipeline that the files at paths could not be
// analysed, and why.
func NotAnalysed(ctx context.Context, reason string, paths ...string) {
	if add, ok := ctx.Value(coverageKey{}).(func(Coverage)); ok {
		for _, p := range paths {
			add(Coverage{Path: p, Reason: reason})
		}
	}
}

// rulesKey carries a repository's choice of rules in a context.
type rulesKey struct{}

// Rules is a repository's choice of which analyzer rules run beyond the
// defaults (.quorum.yaml's rules): ids such as "ruff:S311".
type Rules struct {
	// Enable turns on known rules that are off by default; Disable turns
	// rules off, and wins.
	Enable, Disable []string
}

// WithRules returns a context whose engines follow rs.
func WithRules(ctx context.Context, rs Rules) context.Context {
	return context.WithValue(ctx, rulesKey{}, rs)
}

// RulesOf returns the repository's choice of rules the pipeline gave the
// specialist; none outside the pipeline.
func RulesOf(ctx context.Context) Rules {
	rs, _ := ctx.Value(rulesKey{}).(Rules)
	return rs
}
