package goanalysis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/quorum-review/quorum/internal/change"
)

// side is one revision of a change as the loader sees it: the revision,
// and the Go files the change touches that exist there.
type side struct {
	rev   string
	files []string
	// onDemand says the side's analyzers run when asked, each asking
	// for its own: the base, where the differential step needs only the
	// analyzers of its candidates, not every registered one.
	onDemand bool
}

// headSide is the change at head: the Go files it added or modified.
func headSide(c *change.Change) side {
	s := side{rev: c.HeadSHA}
	for _, f := range changedGoFiles(c) {
		s.files = append(s.files, f.NewPath)
	}
	return s
}

// materializer copies files of one revision of the repository into a
// tree, whose repository root is the directory root.
type materializer struct {
	c    *change.Change
	rev  string
	tree tree
	root string
	// files are the changed Go files of this revision (repository paths)
	// that can be analysed; skipped are those that cannot, and why.
	files   []string
	skipped []Skip
	// goVersion is the local toolchain's language version ("1.26"), which
	// a go.mod may not exceed.
	goVersion string
	head      map[string][]byte
	// notes are what was changed in a copied go.mod, and why, and the
	// limit the copy reached.
	notes []string
	// maxBytes bounds the bytes copied, bytes counts them; cut holds the
	// directories some file of which could not be copied (too large, or
	// past the limits of the copy), with why.
	maxBytes int64
	bytes    int64
	cut      map[string]string
	// imports maps, for each copied package's directory, the import
	// paths of its files that resolve in the tree to their directories:
	// the guard against explosive types follows them.
	imports map[string]map[string]string
	// importPath is, for a tree loaded in GOPATH mode (no go.mod), the
	// import path of its root: the tree stands for that path's
	// directory, and vendored packages are copied as they are imported.
	importPath string
}

// tree is the temporary directory a revision is copied to. Every write
// into it goes through os.Root, which refuses a name that resolves outside
// the directory (through "..", as an absolute path or by a symbolic link):
// a repository path or an import path that slipped past validation still
// cannot leave the tree.
type tree struct {
	root *os.Root
	// dir is the repository's root in the tree: "." or, in GOPATH mode,
	// gopath/src/<import path>.
	dir string
}

// path returns the directory of the repository's root on disk.
func (t tree) path() string {
	return filepath.Join(t.root.Name(), filepath.FromSlash(t.dir))
}

// name returns the name in the tree of a repository path, as written:
// not cleaned, so that os.Root sees a "..", and refuses it, where it is.
func (t tree) name(p string) string {
	if t.dir == "." {
		return p
	}
	return t.dir + "/" + p
}

// write copies a file of the repository, at repository path p, into the
// tree, with the directories above it.
func (t tree) write(p string, b []byte) error {
	if !fs.ValidPath(p) {
		return fmt.Errorf("copy %q: not a path inside the repository", p)
	}
	name := t.name(p)
	if d := path.Dir(name); d != "." {
		if err := t.root.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return t.root.WriteFile(name, b, 0o600)
}

// remove deletes the copy of a file of the repository, at repository path
// p, from the tree.
func (t tree) remove(p string) error {
	return t.root.Remove(t.name(p))
}

// Skip is a changed Go file, or a package, that was not analysed at all,
// and why.
type Skip struct {
	Path   string
	Reason string
}

func newMaterializer(c *change.Change, s side, t tree, goVersion string) *materializer {
	m := &materializer{c: c, rev: s.rev, tree: t, root: t.path(), goVersion: goVersion, head: map[string][]byte{}, imports: map[string]map[string]string{}, cut: map[string]string{}}
	for _, p := range s.files {
		if why := badPath(p); why != "" {
			m.skipped = append(m.skipped, Skip{Path: p, Reason: why})
			continue
		}
		m.files = append(m.files, p)
	}
	return m
}

// badPath says why a repository path cannot be copied: it is not a clean
// relative path inside the repository (a/../../x, /etc/x), or the go
// command cannot take a file by this name (a newline or another control
// character, invalid UTF-8, a quote); "" when it can.
func badPath(p string) string {
	if !utf8.ValidString(p) {
		return "its name is not valid UTF-8"
	}
	if !fs.ValidPath(p) {
		return "its path is not a clean path inside the repository"
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "its name holds a control character"
		}
		if strings.ContainsRune("\"'`*<>?|:\\", r) {
			return fmt.Sprintf("its name holds %q, which the go command refuses", r)
		}
	}
	return ""
}

func (m *materializer) read(ctx context.Context, p string) ([]byte, error) {
	if b, ok := m.head[p]; ok {
		return b, nil
	}
	if badPath(p) != "" {
		return nil, fmt.Errorf("%q: %w", p, fs.ErrNotExist)
	}
	b, err := m.c.ReadFileAt(ctx, m.rev, p)
	if errors.Is(err, change.ErrTooLarge) {
		m.cut[path.Dir(p)] = fmt.Sprintf("its file %s is too large to read", p)
	}
	if err != nil {
		return nil, err
	}
	limit := ""
	switch {
	case len(m.head) >= maxPackageFiles:
		limit = fmt.Sprintf("the files copied for the review reached their limit of %d", maxPackageFiles)
	case m.maxBytes > 0 && m.bytes+int64(len(b)) > m.maxBytes:
		limit = fmt.Sprintf("the files copied for the review reached their limit of %d bytes", m.maxBytes)
	}
	if limit != "" {
		if !slices.Contains(m.notes, limit) {
			m.notes = append(m.notes, limit)
		}
		m.cut[path.Dir(p)] = "not all its files could be copied: " + limit
		return nil, fmt.Errorf("%s: %w", limit, change.ErrTooLarge)
	}
	m.bytes += int64(len(b))
	if path.Base(p) == "go.mod" {
		b = m.sanitizeGoMod(path.Dir(p), b)
	}
	disk := b
	if m.importPath != "" && strings.HasSuffix(p, ".go") {
		disk = withoutInvalidImportComment(p, b)
	}
	if err := m.tree.write(p, disk); err != nil {
		return nil, err
	}
	m.head[p] = b
	return b, nil
}

// sanitizeGoMod rewrites a go.mod of the repository (at dir) so that
// loading it can neither leave the copied tree nor fail on what a review
// does not need: a go line newer than the local toolchain is lowered to it
// (the type checker then reports what the newer language would have
// allowed, which is rare), the toolchain line goes (GOTOOLCHAIN=local
// refuses it anyway), and a replacement by a directory outside the
// repository is dropped, so nothing outside the tree is ever read. Each
// rewrite is noted.
func (m *materializer) sanitizeGoMod(dir string, b []byte) []byte {
	f, err := modfile.Parse(path.Join(dir, "go.mod"), b, nil)
	if err != nil {
		return b // the go command says what is wrong
	}
	changed := false
	if f.Go != nil && m.goVersion != "" && semver.Compare("v"+f.Go.Version, "v"+m.goVersion) > 0 {
		m.notes = append(m.notes, fmt.Sprintf("%s asks for Go %s; it was analysed as Go %s", path.Join(dir, "go.mod"), f.Go.Version, m.goVersion))
		if err := f.AddGoStmt(m.goVersion); err == nil {
			changed = true
		}
	}
	if f.Toolchain != nil {
		f.DropToolchainStmt()
		changed = true
	}
	for _, r := range slices.Clone(f.Replace) {
		if r.New.Version != "" {
			continue // a module version, not a directory
		}
		target := r.New.Path
		if !filepath.IsAbs(target) && !path.IsAbs(target) {
			joined := path.Join(dir, filepath.ToSlash(target))
			if joined != ".." && !strings.HasPrefix(joined, "../") {
				continue // inside the repository
			}
		}
		m.notes = append(m.notes, fmt.Sprintf("%s replaces %s with %s, outside the repository; the replacement was ignored", path.Join(dir, "go.mod"), r.Old.Path, target))
		if err := f.DropReplace(r.Old.Path, r.Old.Version); err == nil {
			changed = true
		}
	}
	if !changed {
		return b
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return b
	}
	return out
}

// group is the changed packages of one module: the module's directory
// and the packages' directories relative to it ("./svc").
type group struct {
	modDir   string
	patterns []string
}

// materialize copies the changed packages, the packages of their modules
// they import (transitively) and the modules' go.mod and go.sum, and
// groups the changed packages' directories by module. A changed package
// with no module above it is in noModule.
func (l *Loader) materialize(ctx context.Context, m *materializer) (groups []group, noModule []string, err error) {
	// Without a listing only the changed files and their go.mod are
	// copied, and packages spread over unchanged files fall back to
	// syntax-only.
	all, err := m.c.ListTree(ctx, m.rev)
	if errors.Is(err, change.ErrNoListing) {
		all, err = nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list files at %s: %w", m.rev, err)
	}
	listed := all != nil
	byDir := map[string][]string{}
	for _, p := range all {
		byDir[path.Dir(p)] = append(byDir[path.Dir(p)], p)
	}
	filesIn := func(dir string) []string {
		if listed {
			return byDir[dir]
		}
		var out []string
		for _, p := range m.files {
			if path.Dir(p) == dir {
				out = append(out, p)
			}
		}
		return out
	}

	// Each changed file's module: the nearest go.mod above it.
	type module struct{ dir, path string }
	modules := map[string]*module{}
	findModule := func(dir string) (*module, error) {
		for d := dir; ; d = path.Dir(d) {
			if mod, ok := modules[d]; ok {
				return mod, nil
			}
			gomod := path.Join(d, "go.mod")
			if !listed || slices.Contains(byDir[d], gomod) {
				b, err := m.read(ctx, gomod)
				switch {
				case err == nil:
					mp := modfile.ModulePath(b)
					if mp == "" {
						return nil, nil
					}
					mod := &module{dir: d, path: mp}
					modules[d] = mod
					if _, err := m.read(ctx, path.Join(d, "go.sum")); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return nil, err
					}
					return mod, nil
				case errors.Is(err, fs.ErrNotExist):
				default:
					return nil, err
				}
			}
			if d == "." {
				if m.importPath != "" {
					mod := &module{dir: ".", path: m.importPath}
					modules[dir] = mod
					return mod, nil
				}
				return nil, nil
			}
		}
	}
	// vendored returns the directory of a package the tree vendors, in
	// GOPATH mode: vendor/ at the root, or Godeps' workspace.
	vendored := func(ip string) string {
		if m.importPath == "" {
			return ""
		}
		for _, d := range []string{path.Join("vendor", ip), path.Join("Godeps/_workspace/src", ip)} {
			if len(byDir[d]) > 0 {
				return d
			}
		}
		return ""
	}

	seen := map[string]bool{}
	var changedDirs, queue []string
	for _, p := range m.files {
		d := path.Dir(p)
		if skipDir(d) || seen[d] {
			continue
		}
		seen[d] = true
		changedDirs = append(changedDirs, d)
		queue = append(queue, d)
	}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		mod, err := findModule(d)
		if err != nil {
			return nil, nil, err
		}
		if mod == nil {
			continue
		}
		embeds := false
		for _, p := range filesIn(d) {
			if !strings.HasSuffix(p, ".go") {
				continue
			}
			src, err := m.read(ctx, p)
			if err != nil {
				if errors.Is(err, change.ErrTooLarge) || errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, nil, err
			}
			if strings.Contains(string(src), "//go:embed") {
				embeds = true
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.ImportsOnly)
			if err != nil {
				continue
			}
			for _, imp := range f.Imports {
				ip, err := strconv.Unquote(imp.Path.Value)
				if err != nil || !validImportPath(ip) {
					continue
				}
				var rel string
				switch {
				case ip == mod.path:
					rel = mod.dir
				case strings.HasPrefix(ip, mod.path+"/"):
					rel = path.Join(mod.dir, strings.TrimPrefix(ip, mod.path+"/"))
				case vendored(ip) != "":
					rel = vendored(ip)
				default:
					continue
				}
				if m.imports[d] == nil {
					m.imports[d] = map[string]string{}
				}
				m.imports[d][ip] = rel
				if !seen[rel] {
					seen[rel] = true
					queue = append(queue, rel)
				}
			}
		}
		if embeds {
			// Embedded files must exist for the package to load.
			for _, p := range filesIn(d) {
				if _, err := m.read(ctx, p); err != nil && !errors.Is(err, change.ErrTooLarge) && !errors.Is(err, fs.ErrNotExist) {
					return nil, nil, err
				}
			}
		}
	}
	byModule := map[string]*group{}
	for _, d := range changedDirs {
		mod, err := findModule(d)
		if err != nil {
			return nil, nil, err
		}
		if mod == nil {
			noModule = append(noModule, d)
			continue
		}
		g := byModule[mod.dir]
		if g == nil {
			g = &group{modDir: mod.dir}
			byModule[mod.dir] = g
		}
		rel, _ := filepath.Rel(filepath.FromSlash(mod.dir), filepath.FromSlash(d))
		g.patterns = append(g.patterns, "./"+filepath.ToSlash(rel))
	}
	for _, g := range byModule {
		groups = append(groups, *g)
	}
	slices.SortFunc(groups, func(a, b group) int { return strings.Compare(a.modDir, b.modDir) })
	return groups, noModule, nil
}

// skipDir reports whether the go command ignores dir: testdata, and
// directories whose name starts with "_" or ".".
func skipDir(dir string) bool {
	for _, part := range strings.Split(dir, "/") {
		if part == "testdata" || (part != "." && (strings.HasPrefix(part, "_") || strings.HasPrefix(part, "."))) {
			return true
		}
	}
	return false
}

// defuse rewrites, in the copied tree, each type declaration too large to
// type-check (see explosive) to an empty struct, so that the rest of its
// package can be type-checked, and returns the directories so changed,
// with why. A type is measured through the declarations of the copied
// packages it imports too: nested types split over packages add up as
// they would in the type checker. The rewrite keeps the file's lines. It
// returns the names of the types rewritten too.
func (m *materializer) defuse() (map[string]string, []string, error) {
	byDir := map[string][]*ast.File{}
	fset := token.NewFileSet()
	for p, src := range m.head {
		if !strings.HasSuffix(p, ".go") || !strings.Contains(string(src), "type") {
			continue
		}
		if f, _ := parser.ParseFile(fset, p, src, parser.SkipObjectResolution); f != nil {
			byDir[path.Dir(p)] = append(byDir[path.Dir(p)], f)
		}
	}
	why, over := explosive(byDir, m.imports)
	byFile := map[string][][2]int{}
	var names []string
	for _, types := range over {
		for _, t := range types {
			names = append(names, t.name)
			start, end := fset.PositionFor(t.expr.Pos(), false), fset.PositionFor(t.expr.End(), false)
			byFile[start.Filename] = append(byFile[start.Filename], [2]int{start.Offset, end.Offset})
		}
	}
	for p, spans := range byFile {
		src := slices.Clone(m.head[p])
		// From the last, so the offsets before stay right.
		slices.SortFunc(spans, func(a, b [2]int) int { return b[0] - a[0] })
		for _, sp := range spans {
			if sp[0] < 0 || sp[1] > len(src) || sp[0] > sp[1] {
				continue
			}
			repl := append([]byte("struct{}"), bytes.Repeat([]byte("\n"), bytes.Count(src[sp[0]:sp[1]], []byte("\n")))...)
			src = slices.Concat(src[:sp[0]], repl, src[sp[1]:])
		}
		if err := m.tree.write(p, src); err != nil {
			return nil, nil, err
		}
	}
	slices.Sort(names)
	return why, names, nil
}

// remove deletes the copied Go files of dir from the tree (they stay
// readable for syntax-only analysis).
func (m *materializer) remove(dir string) error {
	for p := range m.head {
		if path.Dir(p) == dir && strings.HasSuffix(p, ".go") {
			if err := m.tree.remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// dirs returns the directories of the changed Go files.
func (m *materializer) dirs() []string {
	var out []string
	for _, p := range m.files {
		if d := path.Dir(p); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// gopathImportPath returns the import path a tree without any go.mod above
// its changed Go files stands for, so it can be loaded in GOPATH mode; ""
// when a go.mod is there (module mode) or no path can be told. The path
// comes from the changed files' canonical import comments (package x //
// import "…"), else from their imports of the tree's own directories,
// else from the change's owner and repository on GitHub.
func gopathImportPath(ctx context.Context, c *change.Change, s side) string {
	all, err := c.ListTree(ctx, s.rev)
	if err != nil || len(all) == 0 {
		return ""
	}
	dirs := map[string]bool{}
	for _, p := range all {
		if path.Base(p) == "go.mod" || path.Base(p) == "go.work" {
			return ""
		}
		if strings.HasSuffix(p, ".go") {
			dirs[path.Dir(p)] = true
		}
	}
	// The root package's name: an import ending in it may be the root
	// itself ("github.com/boltdb/bolt" for package bolt at the root).
	rootName := ""
	for _, p := range all {
		if path.Dir(p) == "." && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			if src, err := c.ReadFileAt(ctx, s.rev, p); err == nil {
				if f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.PackageClauseOnly|parser.ParseComments); err == nil {
					rootName = f.Name.Name
					if ip := canonicalImport(f); ip != "" {
						return ip
					}
					break
				}
			}
		}
	}
	// The changed files and the others of their packages: an unchanged
	// file may be the one importing the tree's own packages.
	changedDirs := map[string]bool{}
	for _, p := range s.files {
		changedDirs[path.Dir(p)] = true
	}
	var read []string
	for _, p := range all {
		if changedDirs[path.Dir(p)] && strings.HasSuffix(p, ".go") && len(read) < 200 {
			read = append(read, p)
		}
	}
	votes := map[string]int{}
	for _, p := range read {
		src, err := c.ReadFileAt(ctx, s.rev, p)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			continue
		}
		if ip := canonicalImport(f); ip != "" {
			if root, ok := strings.CutSuffix(ip, "/"+path.Dir(p)); ok && path.Dir(p) != "." {
				votes[root] += 100
			} else if path.Dir(p) == "." {
				votes[ip] += 100
			}
		}
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			if rootName != "" && rootName != "main" && path.Base(ip) == rootName && strings.Contains(ip, ".") {
				votes[ip]++
			}
			for d := range dirs {
				if d == "." || strings.HasPrefix(d, "vendor/") {
					continue
				}
				if root, ok := strings.CutSuffix(ip, "/"+d); ok && strings.Contains(root, ".") {
					votes[root]++
				}
			}
		}
	}
	best := ""
	for root, n := range votes {
		if !validImportPath(root) {
			continue
		}
		if n > votes[best] || n == votes[best] && root < best {
			best = root
		}
	}
	if best == "" && c.Owner != "" && c.Repo != "" && c.Owner != "local" {
		best = "github.com/" + c.Owner + "/" + c.Repo
	}
	if !validImportPath(best) {
		best = "quorum.invalid/repository"
	}
	return best
}

// validImportPath reports whether the go command would take ip as an
// import path. Import paths the repository writes become directories of
// the copied tree (GOPATH/src/<path>, vendor/<path>): one that is not valid
// ("../../tmp/x", "/etc") is ignored, never joined into a path.
func validImportPath(ip string) bool {
	return module.CheckImportPath(ip) == nil
}

// canonicalImport returns a file's import comment (package x // import
// "path"), or "" when it has none or names an invalid import path.
func canonicalImport(f *ast.File) string {
	if cm, ip := importComment(f); cm != nil && validImportPath(ip) {
		return ip
	}
	return ""
}

// importComment returns a file's import comment, as the go command finds
// it (// import "path" or /* import "path" */ after the package name), and
// the path it names ("" when it does not parse); nil when there is none.
func importComment(f *ast.File) (*ast.Comment, string) {
	for _, cg := range f.Comments {
		for _, cm := range cg.List {
			if cm.Slash < f.Name.End() {
				continue
			}
			text := strings.TrimPrefix(cm.Text, "//")
			if strings.HasPrefix(cm.Text, "/*") {
				text = strings.TrimSuffix(strings.TrimPrefix(cm.Text, "/*"), "*/")
			}
			text, ok := strings.CutPrefix(strings.TrimSpace(text), "import ")
			if !ok {
				return nil, ""
			}
			ip, _ := strconv.Unquote(strings.TrimSpace(text))
			return cm, ip
		}
	}
	return nil, ""
}

// withoutInvalidImportComment returns a Go file's source with its import
// comment blanked when the path it names is not valid: such a path is
// never the one the tree is loaded under, and in GOPATH mode the go
// command refuses a package whose import comment says otherwise. Only the
// comment's text becomes spaces, so every position in the file holds.
func withoutInvalidImportComment(name string, src []byte) []byte {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return src
	}
	cm, ip := importComment(f)
	if cm == nil || validImportPath(ip) {
		return src
	}
	tf := fset.File(cm.Pos())
	start, end := tf.Offset(cm.Pos())+2, tf.Offset(cm.End())
	if strings.HasPrefix(cm.Text, "/*") {
		end -= 2
	}
	out := slices.Clone(src)
	for i := start; i < end; i++ {
		if out[i] != '\n' {
			out[i] = ' '
		}
	}
	return out
}
