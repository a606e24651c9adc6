// Package builtin constructs quorum's built-in specialists (logic,
// security, performance, tests) sharing one Go package loader, for the
// commands that review with them: quorum review, quorum serve and the
// benchmarks.
package builtin

import (
	"fmt"

	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/logic"
	"github.com/quorum-review/quorum/internal/specialist/performance"
	"github.com/quorum-review/quorum/internal/specialist/security"
	"github.com/quorum-review/quorum/internal/specialist/tests"
)

// New constructs the enabled built-in specialists, in the order of
// enabled, sharing loader for Go and others for the other languages (none
// when nil), and names the enabled ones this build lacks.
func New(enabled []string, loader *goanalysis.Loader, others *polyglot.Engine) ([]specialist.Specialist, []string, error) {
	var out []specialist.Specialist
	var missing []string
	for _, n := range enabled {
		switch n {
		case specialist.Logic:
			out = append(out, polyglot.Wrap(logic.New(loader), others))
		case specialist.Performance:
			out = append(out, polyglot.Wrap(performance.New(loader), others))
		case specialist.Security:
			s, err := security.NewDefault(loader)
			if err != nil {
				return nil, nil, fmt.Errorf("security specialist: %w", err)
			}
			out = append(out, polyglot.Wrap(s, others))
		case specialist.Tests:
			out = append(out, tests.New())
		default:
			missing = append(missing, n)
		}
	}
	return out, missing, nil
}
