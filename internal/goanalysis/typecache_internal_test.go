package goanalysis

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
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

// A test binary names its build by its module's source: the same from
// every package of the module, another when a Go file, go.mod or go.sum
// changes, the same when only testdata, a hidden directory or a file
// that is not Go does; none outside a module.
func TestSourceBuildNamesTheModulesSource(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("go.sum", "")
	write("a/a.go", "package a\n")
	write("a/b/b.go", "package b\n")
	first := sourceBuild(filepath.Join(root, "a", "b"), time.Time{})
	if len(first) != 64 || sourceBuild(root, time.Time{}) != first || sourceBuild(filepath.Join(root, "a"), time.Time{}) != first {
		t.Fatalf("sourceBuild %q from a/b, %q from the root: want one SHA-256 from every directory", first, sourceBuild(root, time.Time{}))
	}
	same := func(what string) {
		t.Helper()
		if got := sourceBuild(root, time.Time{}); got != first {
			t.Errorf("%s changed the build: %s, was %s", what, got, first)
		}
	}
	other := func(what string) string {
		t.Helper()
		got := sourceBuild(root, time.Time{})
		if got == first || got == "" {
			t.Errorf("%s left the build %q", what, got)
		}
		return got
	}
	write("README.md", "words\n")
	write("a/testdata/x.go", "package x\n")
	write(".git/y.go", "package y\n")
	same("a README, a testdata and a hidden Go file")
	write("a/a.go", "package a\n\nvar V = 1\n")
	edited := other("an edited Go file")
	write("a/a.go", "package a\n")
	same("the Go file as it was")
	write("go.sum", "example.com/x v1.0.0 h1:abc=\n")
	if other("a go.sum entry") == edited {
		t.Error("two sources named one build")
	}
	write("go.sum", "")
	// A file's bytes may not move into its name, or the next file's.
	write("a/ab.go", "")
	moved := other("a new empty Go file")
	if err := os.Remove(filepath.Join(root, "a", "ab.go")); err != nil {
		t.Fatal(err)
	}
	write("a/a.go", "package a\n")
	write("a/b.go", "")
	if got := sourceBuild(root, time.Time{}); got == moved || got == first {
		t.Errorf("a/b.go named the build of a/ab.go or of none: %s", got)
	}
	if got := sourceBuild(t.TempDir(), time.Time{}); got != "" {
		t.Errorf("outside a module: %q, want none", got)
	}
	// A binary built before a file's last edit is not named by the source.
	if got := sourceBuild(root, time.Now().Add(-time.Hour)); got != "" {
		t.Errorf("source edited after the build: %q, want none", got)
	}
	if got := sourceBuild(root, time.Now().Add(time.Hour)); got == "" {
		t.Error("source older than the build: no name")
	}
}

// This test binary shares its build's name with the module's others.
func TestTestBinariesNameTheirBuildBySource(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	want := sourceBuild(wd, time.Time{})
	if got := quorumBuild(); want == "" || !strings.Contains(got, " source "+want+" ") || !strings.HasSuffix(got, buildSettings()) {
		t.Errorf("quorumBuild() = %q, want the source's %q and the build's settings", got, want)
	}
}
