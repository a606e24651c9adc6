package polyglot

import "github.com/quorum-review/quorum/internal/sandbox"

// SetLimitsForTest sets the analyzers' sandbox limits until the returned
// function restores them.
func SetLimitsForTest(l sandbox.Limits) (restore func()) {
	old := limits
	limits = l
	return func() { limits = old }
}
