package goanalysis

import (
	"context"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// Finding turns a diagnostic into a built-in finding with the given rule,
// category and severity. The headline is the diagnostic's first line; a
// syntax-only program's findings say so in Note.
func (p *Program) Finding(d Diagnostic, rule, category, severity string) specialist.Finding {
	headline, rest, _ := strings.Cut(strings.TrimSpace(d.Message), "\n")
	body := strings.TrimSpace(rest)
	if d.Analyzer != nil && d.Analyzer.URL != "" {
		body = strings.TrimSpace(body + "\n\nSee " + d.Analyzer.URL + ".")
	}
	if d.Patch != "" && d.FixMessage != "" {
		body = strings.TrimSpace(body + "\n\nSuggested fix: " + d.FixMessage + ".")
	}
	f := specialist.Finding{
		Rule:           rule,
		Category:       category,
		Severity:       severity,
		Path:           d.Path,
		Line:           d.Line,
		EndLine:        d.EndLine,
		Headline:       headline,
		Body:           body,
		SuggestedPatch: d.Patch,
		Engine:         specialist.EngineBuiltin,
	}
	if why := p.FallbackReason(d.Path); why != "" {
		f.Note = "syntax-only: the Go package could not be type-checked (" + why + ")"
	}
	return f
}

// Classify names a diagnostic's rule and severity; false drops it.
type Classify func(d Diagnostic) (rule, severity string, ok bool)

// Findings loads the change's Go packages, runs the analyzers (typed, or
// syntax when the packages cannot be type-checked) and returns their
// diagnostics on the change's added or modified lines as findings of
// category, ranked by classify. A change without Go files has none.
func (l *Loader) Findings(ctx context.Context, c *change.Change, category string, typed, syntax []*analysis.Analyzer, classify Classify) ([]specialist.Finding, error) {
	prog, err := l.Load(ctx, c)
	if err != nil || prog == nil {
		return nil, err
	}
	prog.reportCoverage(ctx, c)
	ds, err := prog.Analyze(ctx, typed, syntax)
	if err != nil {
		return nil, err
	}
	var fs []specialist.Finding
	for _, d := range ds {
		rule, severity, ok := classify(d)
		if !ok {
			continue
		}
		fs = append(fs, prog.Finding(d, rule, category, severity))
	}
	return specialist.OnChangedLines(c, fs), nil
}

// reportCoverage tells the pipeline which changed Go files were analysed
// type-checked, and why the others were not (syntax-only packages, files
// the go command cannot take, files outside any package).
func (p *Program) reportCoverage(ctx context.Context, c *change.Change) {
	skipped := map[string]string{}
	for _, s := range p.Skipped {
		skipped[s.Path] = s.Reason
	}
	typed := map[string]bool{}
	for _, pkg := range p.Packages {
		for _, f := range pkg.CompiledGoFiles {
			if rp, ok := p.RepoPath(f); ok {
				typed[rp] = true
			}
		}
	}
	for _, f := range changedGoFiles(c) {
		switch path := f.NewPath; {
		case typed[path]:
			specialist.Analysed(ctx, "go", path)
		case skipped[path] != "":
			specialist.NotAnalysed(ctx, "not analysed: "+skipped[path], path)
		case p.FallbackReason(path) != "":
			specialist.NotAnalysed(ctx, "only its syntax was analysed, its package was not type-checked: "+p.FallbackReason(path), path)
		default:
			// Excluded by build constraints, or in a directory the go
			// command ignores.
			specialist.NotAnalysed(ctx, "not part of a package built for linux/amd64 without cgo", path)
		}
	}
}
