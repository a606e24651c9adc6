package polyglot

import "github.com/quorum-review/quorum/internal/sandbox"

// SetLimitsForTest sets the analyzers' sandbox limits until the returned
// function restores them.
func SetLimitsForTest(l sandbox.Limits) (restore func()) {
	old := limits
	limits = l
	return func() { limits = old }
}

// KeepRunsForTest makes e keep the analyzers' outcomes of the last n
// changes (two by default): the tests that share one engine run in
// parallel, and each asks it of its change more than once.
func (e *Engine) KeepRunsForTest(n int) { e.runs.Keep = n }
