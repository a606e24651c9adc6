package goanalysis

import (
	"path/filepath"
	"strings"
)

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

// FreshBridgeForTest makes the next bridge be built under dir, as on a
// machine that never built one, until the returned function restores
// the state; but with a build cache kept for the tests
// (go-bridge/test-cache of the real cache directory), so that the
// standard library under the bridge is compiled once per machine, not
// every run (on a fresh machine, the first such build is as cold as
// quorum's).
func FreshBridgeForTest(dir string) (restore func()) {
	bridgeMu.Lock()
	saved, savedDir, savedCache := bridgeExe, userCacheDir, bridgeBuildCache
	warm := filepath.Join(processCacheDir(), "go-bridge", "test-cache")
	bridgeExe, userCacheDir, bridgeBuildCache = "", func() (string, error) { return dir, nil }, warm
	bridgeMu.Unlock()
	return func() {
		bridgeMu.Lock()
		bridgeExe, userCacheDir, bridgeBuildCache = saved, savedDir, savedCache
		bridgeMu.Unlock()
	}
}
