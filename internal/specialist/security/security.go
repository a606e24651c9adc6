// Package security is the built-in security specialist: secrets in the
// lines a change adds (any file type, through internal/secrets and
// gitleaks' rules) and, for Go, gosec's rules and quorum's SQL injection
// and path traversal analyzers (internal/analyzer/sqlinject,
// internal/analyzer/pathtraversal) on the changed packages.
package security

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/tools/go/analysis"

	"github.com/quorum-review/quorum/internal/analyzer/pathtraversal"
	"github.com/quorum-review/quorum/internal/analyzer/sqlinject"
	"github.com/quorum-review/quorum/internal/analyzer/weakhash"
	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/secrets"
	"github.com/quorum-review/quorum/internal/specialist"
)

// SecretScanner finds secrets a change adds; *secrets.Scanner is one.
type SecretScanner interface {
	Scan(ctx context.Context, c *change.Change) ([]specialist.Finding, error)
}

var _ SecretScanner = (*secrets.Scanner)(nil)

// goAnalyzers are the security specialist's Go analyzers.
var goAnalyzers = []*analysis.Analyzer{gosecAnalyzer, sqlinject.Analyzer, pathtraversal.Analyzer, weakhash.Analyzer}

// Security is the security specialist. It is safe for concurrent use.
type Security struct {
	loader  *goanalysis.Loader
	secrets SecretScanner
}

var _ specialist.Specialist = (*Security)(nil)

// New returns the security specialist loading Go packages with loader
// (shared by the specialists; nil is a loader of its own with the default,
// offline configuration) and scanning for secrets with scanner (nil: Go
// rules only).
func New(loader *goanalysis.Loader, scanner SecretScanner) *Security {
	if loader == nil {
		loader = goanalysis.NewLoader(goanalysis.Config{})
	}
	loader.Register(goAnalyzers...)
	loader.RegisterPartly(gosecAnalyzer, gosecSyntax)
	return &Security{loader: loader, secrets: scanner}
}

// NewDefault returns the security specialist with gitleaks' secret rules
// (the process's one scanner, secrets.New).
func NewDefault(loader *goanalysis.Loader) (*Security, error) {
	sc, err := secrets.New()
	if err != nil {
		return nil, fmt.Errorf("security specialist: %w", err)
	}
	return New(loader, sc), nil
}

// Name is "security".
func (s *Security) Name() string { return specialist.Security }

// Review scans the added lines for secrets and runs gosec over the changed
// Go packages. There are no syntax-only gosec checks: when the packages
// cannot be type-checked, only secrets are reported.
func (s *Security) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	var out []specialist.Finding
	if s.secrets != nil {
		fs, err := s.secrets.Scan(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("scan for secrets: %w", err)
		}
		out = append(out, fs...)
	}
	fs, err := s.loader.Findings(ctx, c, specialist.CategorySecurity, goAnalyzers, nil,
		func(d goanalysis.Diagnostic) (string, string, bool) {
			switch d.Analyzer {
			case sqlinject.Analyzer:
				return sqlInjectionRule, specialist.SeverityHigh, true
			case pathtraversal.Analyzer:
				return pathTraversalRule, specialist.SeverityHigh, true
			case weakhash.Analyzer:
				// A password hashed fast falls to a dictionary once
				// the hashes leak; a secret hashed weakly is weaker
				// than it should be.
				if d.Category == weakhash.CategoryPassword {
					return weakHashRule, specialist.SeverityHigh, true
				}
				return weakHashRule, specialist.SeverityMedium, true
			}
			sev, ok := gosecSeverity[d.Category]
			return gosecRule(d.Category), sev, ok
		})
	if err != nil {
		return nil, err
	}
	out = append(out, oncePerLine(fs)...)
	// Secrets and gosec findings are each in file order already; keep
	// one order for the whole.
	slices.SortStableFunc(out, func(a, b specialist.Finding) int {
		if a.Path != b.Path {
			if a.Path < b.Path {
				return -1
			}
			return 1
		}
		return a.Line - b.Line
	})
	return specialist.OnChangedLines(c, taintAfterBuild(out)), nil
}

// taintAfterBuild drops a G701 (tainted SQL) that follows, within a few
// lines of one file, an SQL finding on the line that built the query: the
// same problem at its sink. On real code every such G701 repeated the
// finding above it.
func taintAfterBuild(fs []specialist.Finding) []specialist.Finding {
	const near = 5
	built := map[string][]int{}
	for _, f := range fs {
		switch f.Rule {
		case "quorum:sql-injection", "gosec:G201", "gosec:G202":
			built[f.Path] = append(built[f.Path], f.Line)
		}
	}
	return slices.DeleteFunc(fs, func(f specialist.Finding) bool {
		if f.Rule != "gosec:G701" {
			return false
		}
		for _, l := range built[f.Path] {
			if l <= f.Line && f.Line-l <= near {
				return true
			}
		}
		return false
	})
}
