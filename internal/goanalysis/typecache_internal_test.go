package goanalysis

import (
	"bytes"
	"crypto/sha256"
	"os"
	"testing"
	"time"
)

// Past its bound the cache removes the summaries used least recently,
// down to three quarters of it, and keeps the rest readable.
func TestTypesCachePrunesTheLeastRecentlyUsed(t *testing.T) {
	c := newTypesCache(t.TempDir())
	c.maxBytes = 10 << 10
	data := bytes.Repeat([]byte{7}, 1<<10)
	var keys []typesKey
	old := time.Now().Add(-24 * time.Hour)
	for i := range 16 {
		k := typesKey(sha256.Sum256([]byte{byte(i)}))
		if err := c.put(k, &summary{data: data, pkgDeprecated: "x"}); err != nil {
			t.Fatal(err)
		}
		// Older first: the first eight were last used a day ago, one
		// minute apart.
		mod := old.Add(time.Duration(i) * time.Minute)
		if i >= 8 {
			mod = time.Now()
		}
		if err := os.Chtimes(k.path(c.dir), mod, mod); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	// A summary read is used now: the oldest of all, read, is kept.
	if s, ok := c.get(keys[0]); !ok || !bytes.Equal(s.data, data) || s.pkgDeprecated != "x" {
		t.Fatalf("get: %v %v", s, ok)
	}
	c.prune()
	var kept []int
	for i, k := range keys {
		if _, err := os.Stat(k.path(c.dir)); err == nil {
			kept = append(kept, i)
		}
	}
	// About 1.1 KiB a file: at most 6 of them in three quarters of 10 KiB.
	if len(kept) == 0 || len(kept) > 6 || kept[0] != 0 {
		t.Errorf("kept %v of 16, want key 0 (read) and the most recent, within 7.5 KiB", kept)
	}
	for _, i := range kept {
		if i != 0 && i < 8 {
			t.Errorf("kept %d, used a day ago, over one used now", i)
		}
	}
}
