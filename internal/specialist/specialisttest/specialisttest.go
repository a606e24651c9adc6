// Package specialisttest has specialists for tests of what runs them.
package specialisttest

import (
	"context"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
)

// ChangedLines is the "logic" specialist of tests: it flags every added
// line that starts with "changed", and runs During (when set) before it
// reports, so a test can act while a review is under way.
type ChangedLines struct{ During func() }

// Name is "logic".
func (ChangedLines) Name() string { return "logic" }

// Review flags the added lines starting with "changed".
func (s ChangedLines) Review(_ context.Context, c *change.Change) ([]specialist.Finding, error) {
	if s.During != nil {
		s.During()
	}
	var out []specialist.Finding
	for _, f := range c.Files {
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Kind == change.KindAdded && strings.HasPrefix(l.Text, "changed") {
					out = append(out, specialist.Finding{Rule: "test:changed", Category: "logic", Severity: "medium", Path: f.Path(),
						Line: l.NewNumber, EndLine: l.NewNumber, Headline: "A changed line", Body: "It changed.", Engine: review.EngineBuiltin})
				}
			}
		}
	}
	return out, nil
}
