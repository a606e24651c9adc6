package membudget

import (
	"context"
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/quorum-review/quorum/internal/change"
)

// The estimate's model, fitted on the Go cases of bench/quality's corpus
// (docs/performance.md, "Memory budget"): a review's peak is about Base
// plus PerSourceByte times the bytes of Go source it type-checks with
// bodies.
const (
	Base          = 300 << 20
	PerSourceByte = 90
)

// Estimate is what a review is expected to take at its peak.
type Estimate struct {
	// Bytes is the estimate of the review's peak memory.
	Bytes int64
	// SourceBytes is the Go source counted, in Packages directories.
	SourceBytes int64
	Packages    int
}

// EstimateOf estimates the peak memory of the review of c: the Go source
// of the directories of its changed Go files (their tests too where a test
// file changed, as the analysis then type-checks the test variant) and of
// the directories of the same module they import, transitively, at head.
// A change without Go files is estimated at Base. Files that cannot be read
// or parsed are counted by what could be read.
func EstimateOf(ctx context.Context, c *change.Change) (Estimate, error) {
	e := estimator{c: c, modules: map[string]modRoot{}, seen: map[string]bool{}}
	roots := map[string]bool{} // directory → its tests count
	for _, f := range c.Files {
		p := f.Path()
		if f.Status == change.StatusDeleted || !strings.HasSuffix(p, ".go") {
			continue
		}
		d := path.Dir(p)
		roots[d] = roots[d] || strings.HasSuffix(p, "_test.go")
	}
	for d, tests := range roots {
		e.queue = append(e.queue, item{dir: d, tests: tests})
	}
	for len(e.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return Estimate{}, err
		}
		it := e.queue[0]
		e.queue = e.queue[1:]
		if err := e.visit(ctx, it); err != nil {
			return Estimate{}, err
		}
	}
	return Estimate{Bytes: Base + PerSourceByte*e.bytes, SourceBytes: e.bytes, Packages: e.packages}, nil
}

type item struct {
	dir   string
	tests bool
}

type estimator struct {
	c        *change.Change
	modules  map[string]modRoot // directory → its module (zero outside any)
	seen     map[string]bool
	queue    []item
	bytes    int64
	packages int
}

// visit counts one directory's Go files and queues the directories of the
// same module that they import.
func (e *estimator) visit(ctx context.Context, it item) error {
	if e.seen[it.dir] {
		return nil
	}
	e.seen[it.dir] = true
	list, err := e.c.ListFiles(ctx, e.c.HeadSHA, dirArg(it.dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	mod, root := e.module(ctx, it.dir)
	counted := false
	for _, p := range list {
		if !strings.HasSuffix(p, ".go") || (!it.tests && strings.HasSuffix(p, "_test.go")) {
			continue
		}
		src, err := e.c.ReadFile(ctx, p)
		if err != nil {
			continue // too large or unreadable: the loader reads it no more
		}
		e.bytes += int64(len(src))
		counted = true
		if mod == "" {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			rel, ok := strings.CutPrefix(ip, mod)
			if !ok || (rel != "" && rel[0] != '/') {
				continue
			}
			d := path.Join(root, strings.TrimPrefix(rel, "/"))
			if !e.seen[d] {
				e.queue = append(e.queue, item{dir: d})
			}
		}
	}
	if counted {
		e.packages++
	}
	return nil
}

// module returns the path and root directory of the module dir is in, from
// the nearest go.mod at head ("" when there is none).
func (e *estimator) module(ctx context.Context, dir string) (mod, root string) {
	if m, ok := e.modules[dir]; ok {
		return m.path, m.root
	}
	var m modRoot
	if src, err := e.c.ReadFile(ctx, path.Join(dir, "go.mod")); err == nil && modfile.ModulePath(src) != "" {
		m = modRoot{path: modfile.ModulePath(src), root: dir}
	} else if dir != "." && dir != "/" {
		m.path, m.root = e.module(ctx, path.Dir(dir))
	}
	e.modules[dir] = m
	return m.path, m.root
}

type modRoot struct{ path, root string }

func dirArg(d string) string {
	if d == "." {
		return ""
	}
	return d
}
