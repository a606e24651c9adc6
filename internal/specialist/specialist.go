// Package specialist defines what a specialist reviewer is — a name and a
// review of a change that returns findings — and the finding it returns.
// Engines live in subpackages (built-in analyzers per specialist, and the
// LLM engine); the pipeline runs them in parallel and synthesizes one review.
package specialist

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/quorum-review/quorum/internal/change"
)

// The built-in specialists' names.
const (
	Logic       = "logic"
	Security    = "security"
	Performance = "performance"
	Tests       = "tests"
)

// Severities, most severe first (the review's ranking order).
const (
	SeverityCritical = "critical"
	SeverityHigh     = "high"
	SeverityMedium   = "medium"
	SeverityLow      = "low"
	SeverityInfo     = "info"
)

// Severities lists the severities, most severe first.
var Severities = []string{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo}

// SeverityRank orders severities: 0 is critical, 4 info, -1 unknown.
func SeverityRank(s string) int { return slices.Index(Severities, s) }

// Categories of finding.
const (
	CategorySecurity        = "security"
	CategoryLogic           = "logic"
	CategoryPerformance     = "performance"
	CategoryTests           = "tests"
	CategoryMaintainability = "maintainability"
)

// Categories lists the categories.
var Categories = []string{CategorySecurity, CategoryLogic, CategoryPerformance, CategoryTests, CategoryMaintainability}

// Engines that produce findings.
const (
	EngineBuiltin = "builtin"
	EngineLLM     = "llm"
)

// Specialist reviews a change from one angle.
type Specialist interface {
	// Name is the specialist's name as the API reports it ("security").
	Name() string
	// Review returns the specialist's findings on the change. It must
	// honour ctx's deadline, must not run code from the repository, and
	// reports only on lines the change added or modified (Line > 0) or on
	// a changed file as a whole (Line == 0). An error means the specialist
	// failed; a partial result is not returned with an error.
	Review(ctx context.Context, c *change.Change) ([]Finding, error)
}

// Finding is one problem a specialist found, before synthesis gives it an
// id, a fingerprint and a place in the ranking.
type Finding struct {
	// Rule identifies what found it: "gitleaks:aws-access-token",
	// "go-vet:lostcancel", "staticcheck:SA4006", "quorum:test-skip-added".
	// For the LLM engine, "llm:<specialist>".
	Rule     string
	Category string
	Severity string
	// Path is the file at head (at base for a deleted file).
	Path string
	// Line and EndLine are new-file line numbers (EndLine >= Line); Line 0
	// is a finding on the file as a whole.
	Line, EndLine int
	// Headline is one line; Body explains why it matters and what to do.
	Headline string
	Body     string
	// SuggestedPatch is a unified diff against head that `git apply`
	// accepts, or empty.
	SuggestedPatch string
	// Engine is EngineBuiltin or EngineLLM; Model names the LLM model.
	Engine string
	Model  string
	// Note qualifies the provenance, e.g. "syntax-only: the Go toolchain
	// could not load the package".
	Note string
	// Cause, set on a finding outside the lines the change added, says
	// what in the change made it (lines it deleted from the function,
	// say): the analyzer reports it at head and not at base.
	Cause string
}

// Validate reports what is wrong with a finding, if anything.
func (f Finding) Validate() error {
	var errs []error
	if f.Rule == "" {
		errs = append(errs, errors.New("no rule"))
	}
	if !slices.Contains(Categories, f.Category) {
		errs = append(errs, fmt.Errorf("unknown category %q", f.Category))
	}
	if SeverityRank(f.Severity) < 0 {
		errs = append(errs, fmt.Errorf("unknown severity %q", f.Severity))
	}
	if f.Path == "" {
		errs = append(errs, errors.New("no path"))
	}
	if f.Line < 0 || f.EndLine < f.Line {
		errs = append(errs, fmt.Errorf("bad line range %d-%d", f.Line, f.EndLine))
	}
	if f.Headline == "" {
		errs = append(errs, errors.New("no headline"))
	}
	if f.Engine != EngineBuiltin && f.Engine != EngineLLM {
		errs = append(errs, fmt.Errorf("unknown engine %q", f.Engine))
	}
	return errors.Join(errs...)
}

// OnChangedLines keeps the findings that lie on lines the change added or
// modified, file-level findings (Line 0) and findings the change caused
// elsewhere (Cause) on changed files; the rest are dropped. Specialists call it last, so none reports on code the pull
// request did not touch.
func OnChangedLines(c *change.Change, fs []Finding) []Finding {
	byPath := map[string]*change.File{}
	for _, f := range c.Files {
		byPath[f.Path()] = f
	}
	// Each file's added lines, once: a finding may span a whole file.
	added := map[string][]int{}
	out := fs[:0:0]
	for _, f := range fs {
		file := byPath[f.Path]
		if file == nil {
			continue
		}
		if f.Line == 0 || f.Cause != "" {
			out = append(out, f)
			continue
		}
		a, ok := added[f.Path]
		if !ok {
			a = file.AddedLines()
			added[f.Path] = a
		}
		if change.AnyIn(a, f.Line, max(f.EndLine, f.Line)) {
			out = append(out, f)
		}
	}
	return out
}

// Registry holds the specialists by name.
type Registry struct {
	byName map[string]Specialist
}

// NewRegistry returns a registry of the given specialists; names must be
// unique.
func NewRegistry(ss ...Specialist) (*Registry, error) {
	r := &Registry{byName: map[string]Specialist{}}
	for _, s := range ss {
		if _, dup := r.byName[s.Name()]; dup {
			return nil, fmt.Errorf("specialist %q registered twice", s.Name())
		}
		r.byName[s.Name()] = s
	}
	return r, nil
}

// Get returns the named specialist.
func (r *Registry) Get(name string) (Specialist, bool) {
	s, ok := r.byName[name]
	return s, ok
}

// Names lists the registered specialists, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
