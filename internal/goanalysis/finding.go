package goanalysis

import (
	"cmp"
	"context"
	pathpkg "path"
	"slices"
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
	if lo, ok := p.LeftOut[d.Path]; ok && lo.covers(d.Line) {
		f.Note = "partly typed: the Go function could not be type-checked (" + lo.Reason + "); analyzers that need complete types did not run on it"
	}
	if why := p.FallbackReason(d.Path); why != "" {
		f.Note = "syntax-only: the Go package could not be type-checked (" + why + ")"
		if p.PartlyTyped(d.Path) {
			f.Note = "partly typed: the Go package was type-checked in part (" + why + "); analyzers that need complete types did not run"
		}
	}
	return f
}

// Classify names a diagnostic's rule and severity; false drops it.
type Classify func(d Diagnostic) (rule, severity string, ok bool)

// Findings loads the change's Go packages, runs the analyzers (typed on
// the packages that type-check, syntax on the others) and returns, as
// findings of category ranked by classify, the diagnostics the change
// introduced (see introduced): on its added lines, or elsewhere in a
// function it changed, and not already reported at base. A change without
// Go files has none.
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
	// Only what the analyzers of this specialist would say: classify
	// first, so the base is loaded only for findings that count.
	kept := ds[:0:0]
	for _, d := range ds {
		if _, _, ok := classify(d); ok {
			kept = append(kept, d)
		}
	}
	cands, err := l.introduced(ctx, c, prog, kept, ds)
	if err != nil {
		return nil, err
	}
	var fs []specialist.Finding
	for _, cd := range cands {
		rule, severity, _ := classify(cd.Diagnostic)
		f := prog.Finding(cd.Diagnostic, rule, category, severity)
		if cd.cause != "" {
			f.Cause = cd.cause
			f.Body = strings.TrimSpace(f.Body + "\n\nIntroduced here: " + cd.cause + ".")
		}
		fs = append(fs, f)
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
	for _, pkg := range slices.Concat(p.Packages, p.Repaired) {
		for _, f := range pkg.CompiledGoFiles {
			if rp, ok := p.RepoPath(f); ok {
				typed[rp] = true
			}
		}
	}
	for _, f := range changedGoFiles(c) {
		switch path := f.NewPath; {
		case p.defused[pathpkg.Dir(path)] != "" && (typed[path] || p.PartlyTyped(path)):
			specialist.NotAnalysed(ctx, p.defused[pathpkg.Dir(path)]+"; those types were analysed as empty structs, the rest of the package as usual", path)
		case typed[path] && len(p.LeftOut[path].Funcs) > 0:
			lo := p.LeftOut[path]
			specialist.NotAnalysed(ctx, "its functions "+strings.Join(lo.Funcs, ", ")+" could not be type-checked and were not analysed; the rest of its package was, by every analyzer: "+lo.Reason, path)
		case typed[path]:
			specialist.Analysed(ctx, "go", path)
		case skipped[path] != "":
			specialist.NotAnalysed(ctx, "not analysed: "+skipped[path], path)
		case p.PartlyTyped(path):
			specialist.NotAnalysed(ctx, "its package was type-checked only in part, so the analyzers that need complete types did not run ("+cmp.Or(p.NotRunPartly(), "none here")+"), the others did: "+p.FallbackReason(path), path)
		case p.FallbackReason(path) != "":
			specialist.NotAnalysed(ctx, "only its syntax was analysed, its package was not type-checked: "+p.FallbackReason(path), path)
		default:
			// Excluded by build constraints, or in a directory the go
			// command ignores.
			specialist.NotAnalysed(ctx, "not part of a package built for linux/amd64 without cgo", path)
		}
	}
}
