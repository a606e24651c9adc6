package change_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
)

// A repository unused for a week goes with the next sweep; the one in use,
// one used lately and one being fetched into stay; sweeps are at most
// hourly.
func TestFetchCacheRemovesRepositoriesUnusedForAWeek(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	c := &change.FetchCache{Dir: dir, Now: func() time.Time { return now }}
	repo := func(name string, age time.Duration) string {
		p := filepath.Join(dir, "octo", name+".git")
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		at := now.Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	inUse := repo("in-use", 30*24*time.Hour)
	old := repo("old", 8*24*time.Hour)
	recent := repo("recent", 6*24*time.Hour)
	c.Use(inUse)()
	if !exists(inUse) || exists(old) || !exists(recent) {
		t.Fatalf("after a sweep: in use %v, old %v, recent %v; want only old gone", exists(inUse), exists(old), exists(recent))
	}

	// Within the hour: no sweep, however old.
	old2 := repo("old2", 8*24*time.Hour)
	busy := repo("busy", 30*24*time.Hour)
	release := c.Use(busy) // a fetch in progress, through the next sweep
	if !exists(old2) {
		t.Fatal("a second sweep within the hour removed a repository")
	}
	now = now.Add(time.Hour)
	c.Use(inUse)()
	if exists(old2) || !exists(busy) {
		t.Fatalf("the next hour's sweep: idle one there %v, one being fetched into there %v; want false, true", exists(old2), exists(busy))
	}
	release()
	// Use marks the directory used now: the repository in use is not idle.
	if fi, err := os.Stat(inUse); err != nil || now.Sub(fi.ModTime()) > time.Minute {
		t.Fatalf("the repository in use was not marked used: %v", err)
	}
}
