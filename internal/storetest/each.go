package storetest

import (
	"testing"

	"github.com/quorum-review/quorum/internal/store"
)

// ForEach runs fn on each backend as a parallel subtest named for it.
func ForEach(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// ForEachTarget runs fn on a new, empty, unmigrated database of each backend,
// as a parallel subtest named for it.
func ForEachTarget(t *testing.T, fn func(t *testing.T, cfg store.Config)) {
	t.Helper()
	for _, target := range Targets() {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, target.Config(t))
		})
	}
}
