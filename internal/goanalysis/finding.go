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
	if p.SyntaxOnly != "" {
		f.Note = "syntax-only: the Go packages could not be type-checked (" + p.SyntaxOnly + ")"
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
