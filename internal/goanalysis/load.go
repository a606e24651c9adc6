// Package goanalysis runs golang.org/x/tools/go/analysis analyzers over the
// Go packages a change touches, for the built-in specialists.
//
// The repository is untrusted. Its head tree is copied out of git's object
// database into a temporary directory (nothing is checked out, no filter or
// hook runs) and loaded with go/packages under a sandboxed environment:
// GOTOOLCHAIN=local (a go.mod cannot make us download and run another
// toolchain), CGO_ENABLED=0 (no C compiler, no pkg-config), GOVCS=*:off and
// GOPROXY=off unless the operator allows the network, GOWORK=off,
// GOENV=off, GOFLAGS=-mod=mod -buildvcs=false, HOME and GOPATH in a private
// directory and a deadline from the context. go list only parses and
// resolves; analyzers only read syntax and types: nothing from the
// repository is ever executed.
//
// The module cache is shared with the service's user by default: modules in
// it were verified when they were downloaded and are only read while offline
// (GOSUMDB is off then, since go.sum entries for cached modules are checked
// against the cache's own hashes). An operator who prefers isolation sets
// Config.ModCache to a private directory.
//
// When loading fails (no go.mod, a dependency not available offline, a
// missing toolchain, type errors), the changed files are parsed alone and
// only syntax-only analyzers run; every finding then carries a Note that
// says so.
package goanalysis

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/change"
)

// DefaultTimeout bounds loading the packages of one change; past it the
// change is reviewed syntax-only.
const DefaultTimeout = 2 * time.Minute

// maxPackageFiles bounds how many files are copied out of the head tree for
// one change, so a huge repository cannot fill the disk.
const maxPackageFiles = 5000

// Config says how packages are loaded. The zero value is offline and uses
// the service user's module cache.
type Config struct {
	// Go is the go command; "go" on PATH when empty.
	Go string
	// Network lets go fetch missing modules through GOProxy (with the
	// checksum database on). Off by default: reviews are offline.
	Network bool
	// GoProxy is GOPROXY when Network is set; "https://proxy.golang.org"
	// when empty. Version control fetches stay off whatever it says.
	GoProxy string
	// ModCache is GOMODCACHE; the service user's module cache when empty.
	ModCache string
	// CacheDir holds GOCACHE and the private HOME and GOPATH; a directory
	// under the user's cache directory when empty.
	CacheDir string
	// Timeout bounds loading one change's packages (the go command and
	// type checking); past it the change is reviewed syntax-only.
	// DefaultTimeout when 0.
	Timeout time.Duration
}

// Loader loads the changed Go packages of a change, once per change however
// many specialists ask: it keeps the last few loads. It is safe for
// concurrent use.
type Loader struct {
	cfg Config

	mu         sync.Mutex
	registered []*analysis.Analyzer
	loads      map[string]*load
	order      []string
	envOnce    sync.Once
	env        []string
	envErr     error
}

// keep is how many changes' loads a Loader keeps: the specialists of one
// review share the last one; a program with its dependencies' syntax
// weighs a few hundred megabytes, so no more are kept.
const keep = 2

type load struct {
	done chan struct{}
	prog *Program
	err  error
}

// NewLoader returns a loader with cfg.
func NewLoader(cfg Config) *Loader {
	return &Loader{cfg: cfg, loads: map[string]*load{}}
}

// Register adds analyzers that every load runs, once, in one pass of the
// checker: specialists sharing a loader register theirs when they are
// built, so the work analyzers have in common (the syntax inspector, SSA
// and IR building, facts about dependencies) is done once per change, not
// once per specialist.
func (l *Loader) Register(analyzers ...*analysis.Analyzer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range analyzers {
		if !slices.Contains(l.registered, a) {
			l.registered = append(l.registered, a)
		}
	}
}

// Program is the loaded form of a change's Go code: type-checked packages,
// or, when those could not be loaded, the changed files parsed alone.
type Program struct {
	// Root is the directory the head tree was copied to; it is removed
	// once loading is over, and maps file names back to repository paths.
	Root string
	// Packages are the changed packages, type-checked, with their
	// dependencies (loaded with packages.LoadAllSyntax). Empty when
	// SyntaxOnly is set.
	Packages []*packages.Package
	// SyntaxOnly says why the packages could not be type-checked; empty
	// when they were.
	SyntaxOnly string
	// Fset and Files are the parsed changed files, for syntax-only
	// analyzers, when SyntaxOnly is set.
	Fset  *token.FileSet
	Files []*ast.File
	// head holds the contents of the files copied, by repository path.
	head map[string][]byte

	// The registered analyzers run once, on first use.
	registered []*analysis.Analyzer
	once       sync.Once
	results    map[*analysis.Analyzer]analyzed
}

// analyzed is what one analyzer found.
type analyzed struct {
	ds  []Diagnostic
	err error
}

// HeadFile returns the contents of a file copied from head, by repository
// path.
func (p *Program) HeadFile(path string) ([]byte, bool) {
	b, ok := p.head[path]
	return b, ok
}

// RepoPath turns a file name of the loaded program into a repository path;
// false for a file outside the repository (the standard library, a module).
func (p *Program) RepoPath(filename string) (string, bool) {
	rel, err := filepath.Rel(p.Root, filename)
	if err != nil || rel == "." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == ".." {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Load returns the change's Go program; a change with no Go file changed
// has none (nil, nil). Concurrent and repeated calls for one change share
// one load.
func (l *Loader) Load(ctx context.Context, c *change.Change) (*Program, error) {
	if len(changedGoFiles(c)) == 0 {
		return nil, nil
	}
	key := c.BaseSHA + ".." + c.HeadSHA
	l.mu.Lock()
	ld, ok := l.loads[key]
	if !ok {
		ld = &load{done: make(chan struct{})}
		l.loads[key] = ld
		l.order = append(l.order, key)
		if len(l.order) > keep {
			delete(l.loads, l.order[0])
			l.order = l.order[1:]
		}
		l.mu.Unlock()
		ld.prog, ld.err = l.load(ctx, c)
		close(ld.done)
		if ld.err != nil {
			// A failure (a cancelled context, say) is not kept: the next
			// caller tries again.
			l.forget(key, ld)
		}
		return ld.prog, ld.err
	}
	l.mu.Unlock()
	select {
	case <-ld.done:
		if ld.err != nil {
			return l.Load(ctx, c)
		}
		return ld.prog, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *Loader) forget(key string, ld *load) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loads[key] == ld {
		delete(l.loads, key)
		l.order = slices.DeleteFunc(l.order, func(k string) bool { return k == key })
	}
}

// changedGoFiles returns the Go files present at head that the change
// added or modified.
func changedGoFiles(c *change.Change) []*change.File {
	var out []*change.File
	for _, f := range c.Files {
		if f.NewPath == "" || f.Status == change.StatusDeleted || !strings.HasSuffix(f.NewPath, ".go") {
			continue
		}
		out = append(out, f)
	}
	return out
}

func (l *Loader) load(ctx context.Context, c *change.Change) (*Program, error) {
	timeout := l.cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}

	root, err := os.MkdirTemp("", "quorum-head-")
	if err != nil {
		return nil, fmt.Errorf("load go packages: %w", err)
	}
	defer os.RemoveAll(root)

	m := &materializer{c: c, root: root, head: map[string][]byte{}}
	dirs, why, err := l.materialize(ctx, m)
	if err != nil {
		return nil, err
	}
	if why == "" {
		// The go command and the type checker get Timeout; past it the
		// review goes on with the syntax alone, while ctx lasts.
		loadCtx, cancel := context.WithTimeout(ctx, timeout)
		pkgs, lerr := l.loadPackages(loadCtx, root, dirs, testDirs(c))
		expired := loadCtx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("load go packages: %w", ctx.Err())
		case expired:
			why = fmt.Sprintf("loading took longer than %s", timeout)
		case lerr == nil:
			l.mu.Lock()
			registered := slices.Clone(l.registered)
			l.mu.Unlock()
			return &Program{Root: root, Packages: pkgs, head: m.head, registered: registered}, nil
		default:
			// The reason goes into findings: no temporary path in it, so
			// a review says the same thing each time.
			why = strings.ReplaceAll(lerr.Error(), root+string(filepath.Separator), "")
		}
	}
	return l.syntaxOnly(ctx, m, why)
}

// syntaxOnly parses the changed Go files alone.
func (l *Loader) syntaxOnly(ctx context.Context, m *materializer, why string) (*Program, error) {
	p := &Program{Root: m.root, SyntaxOnly: why, Fset: token.NewFileSet(), head: m.head}
	for _, f := range changedGoFiles(m.c) {
		src, err := m.read(ctx, f.NewPath)
		if err != nil {
			if errors.Is(err, change.ErrTooLarge) || errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		file, err := parser.ParseFile(p.Fset, filepath.Join(m.root, filepath.FromSlash(f.NewPath)), src, parser.ParseComments|parser.SkipObjectResolution)
		if file == nil {
			continue
		}
		_ = err // a file with syntax errors is analyzed as far as it parsed
		p.Files = append(p.Files, file)
	}
	return p, nil
}

// testDirs returns the directories in which the change touches a Go test
// file: only when there are some are test variants loaded, which costs a
// second type-check, and only theirs are analyzed.
func testDirs(c *change.Change) map[string]bool {
	dirs := map[string]bool{}
	for _, f := range changedGoFiles(c) {
		if strings.HasSuffix(f.NewPath, "_test.go") {
			dirs[path.Dir(f.NewPath)] = true
		}
	}
	return dirs
}

// materializer copies files of the head tree into root.
type materializer struct {
	c    *change.Change
	root string
	head map[string][]byte
}

func (m *materializer) read(ctx context.Context, p string) ([]byte, error) {
	if b, ok := m.head[p]; ok {
		return b, nil
	}
	b, err := m.c.ReadFile(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(m.head) >= maxPackageFiles {
		return nil, fmt.Errorf("more than %d files to copy: %w", maxPackageFiles, change.ErrTooLarge)
	}
	full := filepath.Join(m.root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(full, b, 0o600); err != nil {
		return nil, err
	}
	m.head[p] = b
	return b, nil
}

// materialize copies the changed packages, the packages of their module
// they import (transitively) and the module's go.mod and go.sum, and
// returns the changed packages' directories relative to root. A non-empty
// reason means type-checked loading cannot work and says why.
func (l *Loader) materialize(ctx context.Context, m *materializer) (dirs []string, reason string, err error) {
	// Without a listing only the changed files and their go.mod are
	// copied, and packages spread over unchanged files fall back to
	// syntax-only.
	all, err := m.c.ListTree(ctx, m.c.HeadSHA)
	if errors.Is(err, change.ErrNoListing) {
		all, err = nil, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("list files at head: %w", err)
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
		for _, f := range changedGoFiles(m.c) {
			if path.Dir(f.NewPath) == dir {
				out = append(out, f.NewPath)
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
				return nil, nil
			}
		}
	}

	seen := map[string]bool{}
	var queue []string
	for _, f := range changedGoFiles(m.c) {
		d := path.Dir(f.NewPath)
		if skipDir(d) || seen[d] {
			continue
		}
		seen[d] = true
		dirs = append(dirs, d)
		queue = append(queue, d)
	}
	if len(dirs) == 0 {
		return nil, "no changed Go package", nil
	}
	var firstMod *module
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		mod, err := findModule(d)
		if err != nil {
			return nil, "", err
		}
		if mod == nil {
			reason = "no go.mod above " + d
			continue
		}
		if firstMod == nil {
			firstMod = mod
		} else if firstMod.dir != mod.dir {
			reason = "the change spans several modules"
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
				return nil, "", err
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
				if err != nil {
					continue
				}
				var rel string
				switch {
				case ip == mod.path:
					rel = mod.dir
				case strings.HasPrefix(ip, mod.path+"/"):
					rel = path.Join(mod.dir, strings.TrimPrefix(ip, mod.path+"/"))
				default:
					continue
				}
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
					return nil, "", err
				}
			}
		}
	}
	if reason == "" && firstMod == nil {
		reason = "no go.mod"
	}
	if firstMod != nil {
		for i, d := range dirs {
			rel, _ := filepath.Rel(filepath.FromSlash(firstMod.dir), filepath.FromSlash(d))
			dirs[i] = "./" + filepath.ToSlash(rel)
		}
		dirs = append(dirs, firstMod.dir) // the last element is the module's directory
	}
	return dirs, reason, nil
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

// loadPackages loads the patterns (the last element of dirs is the
// module's directory) with go/packages under the sandboxed environment,
// with their tests when testDirs (directories relative to root in which
// test files changed) is not empty.
func (l *Loader) loadPackages(ctx context.Context, root string, dirs []string, testDirs map[string]bool) ([]*packages.Package, error) {
	env, err := l.environment()
	if err != nil {
		return nil, err
	}
	modDir, patterns := dirs[len(dirs)-1], dirs[:len(dirs)-1]
	cfg := &packages.Config{
		Mode:    packages.LoadAllSyntax | packages.NeedModule | packages.NeedForTest,
		Context: ctx,
		Dir:     filepath.Join(root, filepath.FromSlash(modDir)),
		Env:     env,
		Tests:   len(testDirs) > 0,
		// Dependencies outside the repository (the standard library,
		// modules) are type-checked without their function bodies: a
		// tenth of the work, and all a review of the repository's own
		// code needs of them.
		ParseFile: func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
			if inside(root, filename) {
				// gosec still reads the syntactic objects (ast.Ident.Obj).
				return parser.ParseFile(fset, filename, src, parser.ParseComments)
			}
			f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
			if f != nil {
				trim(f)
			}
			return f, err
		},
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("go list: %s", firstLine(err.Error()))
	}
	var roots []*packages.Package
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if !inside(root, firstFile(p)) {
			// Without bodies, an import used only in them is unused:
			// the one error a dependency may have here.
			p.Errors = slices.DeleteFunc(p.Errors, func(e packages.Error) bool {
				return e.Kind == packages.TypeError && unusedImport(e.Msg)
			})
			p.TypeErrors = slices.DeleteFunc(p.TypeErrors, func(e types.Error) bool {
				return unusedImport(e.Msg)
			})
		}
		// Visit is post-order: the imports' verdicts are final here.
		p.IllTyped = len(p.Errors) > 0
		for _, imp := range p.Imports {
			p.IllTyped = p.IllTyped || imp.IllTyped
		}
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, errors.New(firstLine(errs[0]))
	}
	// With Tests set, a package comes as itself, its test variant
	// (package p [p.test]), its external tests (p_test) and the test
	// main. In a directory where a test file changed, the test variant
	// and the external tests are analyzed (the variant holds the
	// package's own files too, so the plain package is left out);
	// elsewhere the package alone: its tests did not change, and
	// analyzing them costs without reporting anything on changed lines.
	hasTestVariant := map[string]bool{}
	for _, p := range pkgs {
		if p.ForTest != "" && p.ForTest == p.PkgPath {
			hasTestVariant[p.PkgPath] = true
		}
	}
	for _, p := range pkgs {
		rel, _ := filepath.Rel(root, filepath.Dir(firstFile(p)))
		testsChanged := testDirs[filepath.ToSlash(rel)]
		switch {
		case strings.HasSuffix(p.PkgPath, ".test"):
		case p.ForTest != "" && !testsChanged:
		case p.ForTest == "" && testsChanged && hasTestVariant[p.PkgPath]:
		default:
			roots = append(roots, p)
		}
	}
	return roots, nil
}

// trim drops what a dependency's file holds that reviewing another
// package does not need: function bodies (except where the type checker
// needs them: generic code, init) and the initial values of package-level
// variables whose type is written or evident from a composite literal
// (the big tables of the standard library).
func trim(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			switch {
			case d.Body == nil || generic(d):
			case d.Recv == nil && d.Name.Name == "init":
				// init must have a body; an empty one will do.
				d.Body = &ast.BlockStmt{Lbrace: d.Body.Lbrace, Rbrace: d.Body.Rbrace}
			default:
				d.Body = nil
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				if vs.Type != nil {
					vs.Values = nil
					continue
				}
				if len(vs.Names) != 1 || len(vs.Values) != 1 {
					continue
				}
				if t := literalType(vs.Values[0]); t != nil {
					vs.Type, vs.Values = t, nil
				}
			}
		}
	}
}

// literalType returns the type of T{…} or &T{…} as an expression, or nil.
func literalType(e ast.Expr) ast.Expr {
	ptr := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e, ptr = u.X, true
	}
	cl, ok := e.(*ast.CompositeLit)
	if !ok || cl.Type == nil {
		return nil
	}
	if at, ok := cl.Type.(*ast.ArrayType); ok {
		if _, ok := at.Len.(*ast.Ellipsis); ok {
			return nil // [...]T{…}: the length is the literal's
		}
	}
	if ptr {
		return &ast.StarExpr{Star: cl.Pos(), X: cl.Type}
	}
	return cl.Type
}

// generic reports whether fd is a generic function or a method of a
// generic type, whose body the type checker needs.
func generic(fd *ast.FuncDecl) bool {
	if fd.Type.TypeParams != nil {
		return true
	}
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return false
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	switch t.(type) {
	case *ast.IndexExpr, *ast.IndexListExpr:
		return true
	}
	return false
}

// inside reports whether filename lies in the directory root.
func inside(root, filename string) bool {
	rel, err := filepath.Rel(root, filename)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// firstFile returns a package's first Go file, or "".
func firstFile(p *packages.Package) string {
	for _, fs := range [][]string{p.CompiledGoFiles, p.GoFiles} {
		if len(fs) > 0 {
			return fs[0]
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// environment is the go command's environment: nothing of ours leaks in.
func (l *Loader) environment() ([]string, error) {
	l.envOnce.Do(func() {
		l.env, l.envErr = l.buildEnvironment()
	})
	return l.env, l.envErr
}

func (l *Loader) buildEnvironment() ([]string, error) {
	goCmd := l.cfg.Go
	if goCmd == "" {
		goCmd = "go"
	}
	goPath, err := exec.LookPath(goCmd)
	if err != nil {
		return nil, fmt.Errorf("the go command: %w", err)
	}
	cacheDir := l.cfg.CacheDir
	if cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		cacheDir = filepath.Join(base, "quorum", "go")
	}
	home := filepath.Join(cacheDir, "home")
	gopath := filepath.Join(cacheDir, "gopath")
	gocache := filepath.Join(cacheDir, "build")
	for _, d := range []string{home, gopath, gocache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("go cache directory: %w", err)
		}
	}
	modCache := l.cfg.ModCache
	if modCache == "" {
		out, err := exec.Command(goPath, "env", "GOMODCACHE").Output()
		if err != nil {
			return nil, fmt.Errorf("go env GOMODCACHE: %w", err)
		}
		modCache = strings.TrimSpace(string(out))
	}
	proxy, sumdb := "off", "off"
	if l.cfg.Network {
		proxy = l.cfg.GoProxy
		if proxy == "" {
			proxy = "https://proxy.golang.org"
		}
		sumdb = "sum.golang.org"
	}
	env := []string{
		// go/packages runs "go" from PATH: the directory of the one chosen
		// comes first.
		"PATH=" + filepath.Dir(goPath) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + home,
		"GOPATH=" + gopath,
		"GOCACHE=" + gocache,
		"GOMODCACHE=" + modCache,
		"GOENV=off",
		"GOWORK=off",
		"GO111MODULE=on",
		"GOTOOLCHAIN=local",
		"CGO_ENABLED=0",
		"GOFLAGS=-mod=mod -buildvcs=false",
		"GOPROXY=" + proxy,
		"GOSUMDB=" + sumdb,
		"GOVCS=*:off",
		"GOPRIVATE=",
		"GONOPROXY=",
		"GONOSUMDB=",
		"GOINSECURE=",
		"GOTELEMETRY=off",
		"GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C",
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return env, nil
}

// unusedImport reports whether a type error says an import is unused
// ("imported and not used", "imported as x and not used").
func unusedImport(msg string) bool {
	return strings.Contains(msg, "imported") && strings.HasSuffix(msg, "and not used")
}
