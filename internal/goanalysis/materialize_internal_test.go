package goanalysis

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/change/changetest"
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

// The type checker does not stop when loading runs out of time: the load
// returns all the same, the change is reviewed syntax-only, and the
// copied tree is gone though the type checker still runs.
func TestLoadRemovesTreeWhileTypeCheckerRuns(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"go.mod": "module example.com/slow\n\ngo 1.26\n", "a.go": "package slow\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.go": "package slow\n\nfunc F() {}\n"})
	head := r.Commit("head")

	l := NewLoader(Config{Timeout: 200 * time.Millisecond})
	running, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	l.packagesLoad = func(*packages.Config, ...string) ([]*packages.Package, error) {
		close(running)
		<-release
		return nil, errors.New("released")
	}
	p, err := l.Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-running:
	default:
		t.Fatal("the type checker never ran")
	}
	if p.SyntaxOnly != "loading took longer than 200ms" || len(p.Files) != 1 {
		t.Errorf("SyntaxOnly = %q, %d files", p.SyntaxOnly, len(p.Files))
	}
	left, err := filepath.Glob(filepath.Join(tmp, "quorum-tree-*"))
	if err != nil || len(left) > 0 {
		t.Errorf("left behind while the type checker runs: %v (%v)", left, err)
	}
}
