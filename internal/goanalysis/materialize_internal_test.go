package goanalysis

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tree refuses any name that leaves it: "..", an absolute path, and,
// by os.Root, a directory of the tree that is a symbolic link out.
func TestTreeWritesStayInside(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "tree")
	outside := filepath.Join(parent, "outside")
	for _, d := range []string{filepath.Join(dir, "gopath", "src", "x"), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tr := range []tree{{root: root, dir: "."}, {root: root, dir: "gopath/src/x"}} {
		if err := os.Symlink(outside, filepath.Join(tr.path(), "link")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"../outside/a.go", strings.Repeat("../", 8) + "outside/a.go", "link/a.go", "link/sub/a.go", filepath.Join(outside, "a.go")} {
			if err := tr.write(p, []byte("package a\n")); err == nil {
				t.Errorf("tree at %s wrote %q", tr.dir, p)
			}
		}
		if err := tr.write("ok/a.go", []byte("package a\n")); err != nil {
			t.Errorf("tree at %s: %v", tr.dir, err)
		}
		if _, err := os.Stat(filepath.Join(tr.path(), "ok", "a.go")); err != nil {
			t.Errorf("tree at %s: %v", tr.dir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "keep.go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (tree{root: root, dir: "."}).remove("link/keep.go"); err == nil {
		t.Error("tree removed a file through a symbolic link out")
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("outside the tree: %v, want keep.go alone", entries)
	}
}

// A repository path that is not clean is neither analysed nor copied.
func TestMaterializerRefusesPathsLeavingTheRepository(t *testing.T) {
	t.Parallel()
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	m := newMaterializer(nil, side{files: []string{"a/../../x.go", "/etc/x.go", "./x.go", "ok.go"}}, tree{root: root, dir: "."}, "")
	if len(m.files) != 1 || m.files[0] != "ok.go" || len(m.skipped) != 3 {
		t.Errorf("files %q, skipped %+v; want ok.go alone", m.files, m.skipped)
	}
	if _, err := m.read(context.Background(), "a/../../x.go"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read a/../../x.go: %v, want it refused", err)
	}
}
