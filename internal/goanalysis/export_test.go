package goanalysis

import "strings"

// Edit is one replacement of old[Start:End] by Text, for tests of the
// patch builder.
type Edit struct {
	Start, End int
	Text       string
}

// UnifiedDiffForTest exposes unifiedDiff.
func UnifiedDiffForTest(path string, old []byte, edits []Edit) (string, error) {
	es := make([]edit, len(edits))
	for i, e := range edits {
		es[i] = edit{start: e.Start, end: e.End, text: e.Text}
	}
	return unifiedDiff(path, old, es)
}

// EnvironmentForTest exposes the go command's environment.
func (l *Loader) EnvironmentForTest() ([]string, error) {
	env, _, err := l.environment()
	return env, err
}

// BaseLoadedForTest reports whether a load of a change's base is kept.
func (l *Loader) BaseLoadedForTest() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.loads {
		if strings.HasPrefix(k, "base\x00") {
			return true
		}
	}
	return false
}
