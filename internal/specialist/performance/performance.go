// Package performance is the built-in performance specialist: for Go,
// staticcheck's SA6xxx checks and analyzers of its own for well-known
// costs (a regular expression compiled per iteration or per request, defer
// in a loop, string concatenation in a loop, a query per iteration), on
// the lines a change added or modified.
package performance

import (
	"context"
	"strings"

	"golang.org/x/tools/go/analysis"
	"honnef.co/go/tools/staticcheck"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/specialist"
)

// ownSeverity is the severity of the specialist's own analyzers' findings.
// A repeated compile or query costs on every call and grows with the
// data: medium. A string built with += is quadratic but usually small:
// low.
var ownSeverity = map[*analysis.Analyzer]string{
	RegexpInLoop: specialist.SeverityMedium,
	DeferInLoop:  specialist.SeverityMedium,
	QueryInLoop:  specialist.SeverityMedium,
	ConcatInLoop: specialist.SeverityLow,
}

// Performance is the performance specialist. It is safe for concurrent
// use.
type Performance struct {
	loader *goanalysis.Loader
	typed  []*analysis.Analyzer
	sa     map[*analysis.Analyzer]string
}

var _ specialist.Specialist = (*Performance)(nil)

// New returns the performance specialist loading packages with loader,
// which specialists should share; nil is a loader of its own with the
// default, offline configuration.
func New(loader *goanalysis.Loader) *Performance {
	if loader == nil {
		loader = goanalysis.NewLoader(goanalysis.Config{})
	}
	p := &Performance{loader: loader, typed: append([]*analysis.Analyzer{}, Analyzers...), sa: map[*analysis.Analyzer]string{}}
	for _, a := range staticcheck.Analyzers {
		if strings.HasPrefix(a.Analyzer.Name, "SA6") && !a.Doc.NonDefault {
			p.typed = append(p.typed, a.Analyzer)
			p.sa[a.Analyzer] = a.Analyzer.Name
		}
	}
	loader.Register(p.typed...)
	return p
}

// Name is "performance".
func (p *Performance) Name() string { return specialist.Performance }

// Review runs the checks over the changed Go packages; when they cannot be
// type-checked, the specialist's own analyzers run on the syntax alone.
func (p *Performance) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	return p.loader.Findings(ctx, c, specialist.CategoryPerformance, p.typed, Analyzers, classify(p.sa))
}

func classify(sa map[*analysis.Analyzer]string) goanalysis.Classify {
	return func(d goanalysis.Diagnostic) (string, string, bool) {
		if name, ok := sa[d.Analyzer]; ok {
			// SA6000 (regexp.Match in a loop) is the costly one; the rest
			// save an allocation.
			if name == "SA6000" {
				return "staticcheck:" + name, specialist.SeverityMedium, true
			}
			return "staticcheck:" + name, specialist.SeverityLow, true
		}
		sev, ok := ownSeverity[d.Analyzer]
		if !ok {
			return "", "", false
		}
		if d.Analyzer == QueryInLoop && d.Category == "exec" {
			// Statements executed in a loop are often a deliberate batch
			// inside a transaction.
			sev = specialist.SeverityLow
		}
		return "quorum:" + d.Analyzer.Name, sev, true
	}
}
