package goanalysis

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
