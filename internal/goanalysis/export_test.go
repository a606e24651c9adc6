package goanalysis

import "strings"

// EnvironmentForTest exposes the go command's environment.
func (l *Loader) EnvironmentForTest() ([]string, error) {
	env, _, err := l.environment()
	return env, err
}

// BaseLoadedForTest reports whether a load of a change's base is kept.
func (l *Loader) BaseLoadedForTest() bool {
	for _, k := range l.loads.Keys() {
		if strings.HasPrefix(k, "base\x00") {
			return true
		}
	}
	return false
}

// WaitPruningForTest waits for the prunings of the module cache under way.
func (l *Loader) WaitPruningForTest() { l.pruning.Wait() }
