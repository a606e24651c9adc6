// Package goanalysis runs golang.org/x/tools/go/analysis analyzers over the
// Go packages a change touches, for the built-in specialists.
//
// The repository is untrusted. Its head tree is copied out of git's object
// database into a temporary directory (nothing is checked out, no filter or
// hook runs) and loaded with go/packages under a sandboxed environment:
// GOTOOLCHAIN=local (a go.mod cannot make us download and run another
// toolchain), CGO_ENABLED=0 (no C compiler, no pkg-config), GOVCS=*:off,
// GOPROXY the module cache itself (the load is offline: the modules it
// needs were fetched before it, fetch.go), GOWORK=off,
// GOENV=off, GOFLAGS=-mod=mod -buildvcs=false, HOME and GOPATH in a private
// directory and a deadline from the context, and the go command itself runs
// in the analyzers' sandbox (confine.go, internal/sandbox). go list only
// parses and resolves; analyzers only read syntax and types: nothing from
// the repository is ever executed.
//
// The module cache is the service user's when nothing is fetched
// (Config.GoProxy off); the commands give a cache of quorum's own when
// modules are fetched. Modules in it were verified when they were
// downloaded and are only read while offline (GOSUMDB is off then, since
// go.sum entries for cached modules are checked against the cache's own
// hashes).
//
// A package with type errors (its own, or what the review's environment
// lacks) is analysed for what did type-check (repair.go): the function
// bodies holding them are left out and every analyzer runs on the rest,
// or, when a package-level declaration is hit, the analyzers that need no
// SSA run on the package typed in part. When loading fails (no go.mod,
// go list failing, a missing toolchain), the changed files are parsed
// alone and only syntax-only analyzers run; every finding then carries a
// Note that says so.
package goanalysis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/memo"
	"github.com/quorum-review/quorum/internal/sandbox"
)

// DefaultTimeout bounds loading the packages of one change; past it the
// change is reviewed syntax-only.
const DefaultTimeout = 2 * time.Minute

// maxPackageFiles bounds how many files are copied out of the head tree for
// one change, so a huge repository cannot fill the disk.
const maxPackageFiles = 5000

// DefaultMaxTreeBytes bounds how many bytes of files are copied out of the
// tree for one change, and so what the type checker, in-process, is
// given: its memory grows with the source it checks, a few tens of times
// its size. Real changes stay far below (5000 files of 25 KiB are 125 MiB);
// a pull request of files inflated to the reader's limit does not.
const DefaultMaxTreeBytes = 128 << 20

// Config says how packages are loaded. The zero value is offline and uses
// the service user's module cache.
type Config struct {
	// Go is the go command; "go" on PATH when empty.
	Go string
	// GoProxy is the GOPROXY list the modules a change needs are fetched
	// through before it is loaded (fetch.go): proxies separated by "," or
	// "|" as the go command reads them; "direct" is ignored (nothing is
	// fetched from version control). Empty or "off": nothing is fetched
	// and the load uses what the module cache holds.
	GoProxy string
	// GoPrivate are the module path patterns (GOPRIVATE's syntax) not
	// checked against the checksum database: the operator's private
	// modules, which the proxies must serve.
	GoPrivate string
	// Netrc is a netrc file whose credentials quorum sends to the
	// proxies of its host names; the go command never sees it.
	Netrc string
	// FetchTimeout and FetchMaxBytes bound one change's fetch;
	// DefaultFetchTimeout and DefaultFetchMaxBytes when 0.
	FetchTimeout  time.Duration
	FetchMaxBytes int64
	// SeedModCache is a module cache read, never written, before the
	// proxies are asked (the developer's own, for quorum review).
	SeedModCache string
	// ModCacheMaxBytes bounds the module cache: past it the least
	// recently used module versions are removed between reviews. 0: it
	// is never pruned (set it only for a cache quorum owns).
	ModCacheMaxBytes int64
	// ModCache is GOMODCACHE; when empty, the service user's module
	// cache, or, when modules are fetched, "mod" under CacheDir.
	ModCache string
	// CacheDir holds GOCACHE, the private HOME and GOPATH, and the
	// dependencies' type summaries kept across loads ("types",
	// typecache.go); a directory under the user's cache directory when
	// empty.
	CacheDir string
	// Timeout bounds loading one change's packages (the go command and
	// type checking); past it the change is reviewed syntax-only.
	// DefaultTimeout when 0.
	Timeout time.Duration
	// MaxTreeBytes bounds the bytes of files copied for one change;
	// packages whose files do not fit are analysed syntax-only, and the
	// review says so. DefaultMaxTreeBytes when 0.
	MaxTreeBytes int64
}

// Loader loads the changed Go packages of a change, once per change however
// many specialists ask: it keeps the last few loads. It is safe for
// concurrent use.
type Loader struct {
	cfg Config

	mu         sync.Mutex
	registered []*analysis.Analyzer
	// partly are the stand-ins of analyzers that need complete types,
	// for partly typed packages (RegisterPartly).
	partly    map[*analysis.Analyzer]*analysis.Analyzer
	loads     *memo.Memo[*Program]
	envOnce   sync.Once
	env       []string
	goVersion string
	envErr    error
	// goPath, goRoot and modCache are the go command, its GOROOT and the
	// module cache, which its sandbox shows it.
	goPath, goRoot, modCache string
	// sandboxCache is the sandboxed go command's GOCACHE.
	sandboxCache string
	// typesCache keeps the dependencies' summaries across loads
	// (typecache.go); nil when quorum's own executable cannot be read.
	typesCache *typesCache
	// abandoned counts the loads past their time limit whose type
	// checker still runs (loadUntil).
	abandoned atomic.Int32
	// fetcher fetches modules before a load; nil when GoProxy is off.
	fetcher *fetcher
	// pruning counts the prunings of the module cache under way.
	pruning sync.WaitGroup
	// packagesLoad is packages.Load; tests put a type checker that does
	// not end in its place.
	packagesLoad func(*packages.Config, ...string) ([]*packages.Package, error)
}

// RegisterPartly names stand-in, an analyzer that needs no SSA or IR, to
// run in place of full (registered, and needing complete types) on
// partly typed packages; its diagnostics count as full's. gosec's
// syntax rules (G112, G114, …) stand in for all of gosec that way.
func (l *Loader) RegisterPartly(full, standIn *analysis.Analyzer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.partly == nil {
		l.partly = map[*analysis.Analyzer]*analysis.Analyzer{}
	}
	l.partly[full] = standIn
}

// keep is how many changes' loads a Loader keeps: the specialists of one
// review share the last one; a program of a large repository weighs a
// hundred megabytes or more, so no more are kept.
const keep = 2

// NewLoader returns a loader with cfg.
func NewLoader(cfg Config) *Loader {
	return &Loader{cfg: cfg, loads: &memo.Memo[*Program]{Keep: keep}, packagesLoad: packages.Load}
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

// Program is the loaded form of a change's Go code at one revision: the
// changed packages that type-check, and the changed files of those that do
// not, parsed alone.
type Program struct {
	// Root is the directory the tree was copied to; it is removed once
	// loading is over, and maps file names back to repository paths.
	Root string
	// Packages are the changed packages that type-check, with their
	// dependencies: the repository's with their syntax, the others as
	// export data (typecheck.go).
	Packages []*packages.Package
	// Partial are changed packages type-checked in part: what the
	// review's environment lacks (an import not available offline, a
	// dependency's cgo files) or an error of their own outside function
	// bodies (a package-level declaration, a file that does not parse)
	// left some of their types unknown. The analyzers that do not need
	// complete types (none built on SSA) run on them; they are in
	// Fallback too, for the syntax-only analyzers.
	Partial []*packages.Package
	// Repaired are changed packages whose type errors, and whatever the
	// review's environment left untyped in them, lie in function bodies
	// only (repairable): those bodies are left out (LeftOut), and every
	// analyzer runs on the rest, complete in its types.
	Repaired []*packages.Package
	// LeftOut says, by repository path, which functions of the Repaired
	// packages were left out, and why.
	LeftOut map[string]LeftOut
	// unrepaired are the Repaired packages that lost function bodies, as
	// loaded: the analyzers that need no SSA run on them, those bodies
	// included.
	unrepaired []*packages.Package
	// summaries are what the program holds of the packages outside the
	// repository, by their types (typecheck.go).
	summaries map[*types.Package]*summary
	// defused says why the types too large to type-check of a changed
	// directory were analysed as empty structs.
	defused map[string]string
	// Fallback lists the changed packages that could not be type-checked,
	// and why; their changed files are in Files.
	Fallback []Fallback
	// SyntaxOnly says why no changed package could be type-checked, when
	// none could; empty otherwise.
	SyntaxOnly string
	// Fset and Files are the parsed changed files of the Fallback
	// packages, for syntax-only analyzers.
	Fset  *token.FileSet
	Files []*ast.File
	// Skipped lists changed Go files that were not analysed at all.
	Skipped []Skip
	// Notes say what was changed in the copied tree to load it (a go.mod
	// rewritten).
	Notes []string
	// Dependencies counts the packages outside the repository that the
	// load type-checked, and those whose summaries it found kept from an
	// earlier load (typecache.go).
	Dependencies DependencyCounts
	// TypeErrors are the type and syntax errors of the changed packages,
	// as diagnostics of the TypeCheck analyzer.
	TypeErrors []Diagnostic
	// head holds the contents of the files copied, by repository path.
	head map[string][]byte
	// fallback maps the path of each file in Files to its package's reason.
	fallback map[string]string

	// The registered analyzers run once, on first use; partly are their
	// stand-ins on partly typed packages.
	registered []*analysis.Analyzer
	partly     map[*analysis.Analyzer]*analysis.Analyzer
	once       sync.Once
	results    map[*analysis.Analyzer]analyzed
	// partial is what they found on the Partial packages; partialMu
	// serializes the runs on them that were not registered.
	partial   map[*analysis.Analyzer][]Diagnostic
	partialMu sync.Mutex
	// released says the dependencies' syntax was dropped after the
	// registered analyzers ran.
	released bool
}

// LeftOut are the functions of a file whose bodies were left out of the
// analysis because they do not type-check.
type LeftOut struct {
	Funcs []string
	// Reason is the first error of the file, or else of its package.
	Reason string
	// lines are the first and last lines of each function.
	lines [][2]int
}

// covers reports whether line lies in a function left out.
func (lo LeftOut) covers(line int) bool {
	for _, l := range lo.lines {
		if l[0] <= line && line <= l[1] {
			return true
		}
	}
	return false
}

// Fallback is a changed package that could not be type-checked.
type Fallback struct {
	// Dir is the package's directory in the repository.
	Dir    string
	Reason string
}

// TypeCheck stands for the type checker among the analyzers: asked of
// Analyze, it reports the changed packages' type and syntax errors, so that
// a change that does not compile is told so.
var TypeCheck = &analysis.Analyzer{
	Name: "typecheck",
	Doc:  "reports the type and syntax errors of the changed packages",
	Run:  func(*analysis.Pass) (any, error) { return nil, nil },
}

// FallbackReason returns why the file at path (a repository path) was
// analysed syntax-only, or "" when it was type-checked.
func (p *Program) FallbackReason(path string) string {
	return p.fallback[path]
}

// PartlyTyped reports whether the file at path (a repository path) is in
// a Partial package: type-checked but for its environment.
func (p *Program) PartlyTyped(path string) bool {
	for _, pkg := range p.Partial {
		for _, f := range pkg.CompiledGoFiles {
			if rp, ok := p.RepoPath(f); ok && rp == path {
				return true
			}
		}
	}
	return false
}

// NotRunPartly says which of the registered analyzers do not run on a
// Partial package (they need complete types), and which run without
// some of their checks (gosec without its SSA analyses): for the review
// to say so.
func (p *Program) NotRunPartly() string {
	var not []string
	checks := 0
	for _, a := range p.registered {
		if !requires(a, buildsIR) {
			continue
		}
		if s := p.partly[a]; s != nil && !requires(s, buildsIR) {
			not = append(not, a.Name+"'s SSA analyses")
			continue
		}
		if staticcheckID.MatchString(a.Name) {
			checks++
			continue
		}
		not = append(not, a.Name)
	}
	slices.Sort(not)
	if checks > 0 {
		not = append(not, fmt.Sprintf("%d staticcheck checks", checks))
	}
	if len(not) == 0 {
		return ""
	}
	return strings.Join(not, ", ")
}

// staticcheckID matches the name of a staticcheck check (SA4006, S1000).
var staticcheckID = regexp.MustCompile(`^(SA|S|ST|QF)\d+$`)

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

// Load returns the change's Go program at head; a change with no Go file
// changed has none (nil, nil). Concurrent and repeated calls for one
// change share one load.
func (l *Loader) Load(ctx context.Context, c *change.Change) (*Program, error) {
	if len(changedGoFiles(c)) == 0 {
		return nil, nil
	}
	return l.cached(ctx, c.BaseSHA+".."+c.HeadSHA, func() (*Program, error) { return l.load(ctx, c) })
}

// cached returns the program of key, loading it with load once however
// many callers ask at once; the last few are kept.
func (l *Loader) cached(ctx context.Context, key string, fn func() (*Program, error)) (*Program, error) {
	return l.loads.Do(ctx, key, fn)
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
	return l.loadSide(ctx, c, headSide(c))
}

// loadSide loads the changed Go packages of one side of a change.
func (l *Loader) loadSide(ctx context.Context, c *change.Change, s side) (*Program, error) {
	timeout := l.cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	env, goVersion, err := l.environment()
	if err != nil {
		return nil, fmt.Errorf("load go packages: %w", err)
	}

	// The tree is a directory inside one of root's own (0700): given to
	// the sandbox's user for the go command to read, it is still out of
	// reach of the host's other processes of that user.
	outer, err := os.MkdirTemp("", "quorum-tree-")
	if err != nil {
		return nil, fmt.Errorf("load go packages: %w", err)
	}
	defer os.RemoveAll(outer)
	tmp := filepath.Join(outer, "tree")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("load go packages: %w", err)
	}
	t := tree{dir: "."}
	if t.root, err = os.OpenRoot(tmp); err != nil {
		return nil, fmt.Errorf("load go packages: %w", err)
	}
	defer t.root.Close()

	// A tree without go.mod (GOPATH-era code) is loaded in GOPATH mode,
	// copied to where its import path says, with its vendored packages.
	importPath := gopathImportPath(ctx, c, s)
	if importPath != "" {
		t.dir = path.Join("gopath/src", importPath)
		if err := t.root.MkdirAll(t.dir, 0o700); err != nil {
			return nil, fmt.Errorf("load go packages: %w", err)
		}
		env = gopathEnvironment(env, filepath.Join(tmp, "gopath"), t.path())
	}
	root := t.path()

	m := newMaterializer(c, s, t, goVersion)
	m.importPath = importPath
	m.maxBytes = cmp.Or(l.cfg.MaxTreeBytes, DefaultMaxTreeBytes)
	groups, noModule, err := l.materialize(ctx, m)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	registered, partly := slices.Clone(l.registered), maps.Clone(l.partly)
	l.mu.Unlock()
	if s.onDemand {
		registered = nil
	}
	p := &Program{Root: root, Fset: token.NewFileSet(), head: m.head, fallback: map[string]string{},
		Skipped: m.skipped, Notes: slices.Clone(m.notes), registered: registered, partly: partly, LeftOut: map[string]LeftOut{}, defused: map[string]string{}, summaries: map[*types.Package]*summary{}}
	broken := map[string]string{}
	for _, d := range noModule {
		broken[d] = "no go.mod above " + d
	}

	// The type checker cannot be stopped once it is given a type that
	// expands without end: such declarations become empty structs in the
	// copy, and the rest of their packages is analysed as usual (what
	// depended on their fields does not type-check, and is left out).
	defused, defusedTypes, err := m.defuse()
	if err != nil {
		return nil, err
	}
	for d, why := range defused {
		if slices.Contains(m.dirs(), d) {
			p.defused[d] = why
		}
		p.Notes = append(p.Notes, d+": "+why+"; those types were analysed as empty structs")
	}
	slices.Sort(p.Notes)
	for d, why := range m.cut {
		// Nor can it be given a package with files missing: its files
		// leave the copied tree (a package importing it then fails to
		// load, alone), and it is analysed syntax-only.
		if err := m.remove(d); err != nil {
			return nil, err
		}
		for i := range groups {
			g := &groups[i]
			g.patterns = slices.DeleteFunc(g.patterns, func(pat string) bool { return path.Join(g.modDir, pat) == d })
		}
		if slices.Contains(m.dirs(), d) {
			broken[d] = why
		}
	}

	// The modules the groups need are fetched first (fetch.go); the
	// load itself is offline.
	unlock, err := l.lockModCache()
	if err != nil {
		return nil, fmt.Errorf("load go packages: %w", err)
	}
	defer unlock()
	defer l.pruneTypesCache()
	got, err := l.fetch(ctx, env, tmp, root, groups, len(testDirs(s)) > 0)
	if err != nil {
		return nil, fmt.Errorf("load go packages: %w", err)
	}

	// The go command runs confined (confine.go).
	confined, err := l.confine(env, tmp, false)
	if err != nil {
		return nil, fmt.Errorf("load go packages: %w", err)
	}
	defer confined.release()

	// The go command and the type checker get Timeout for all modules;
	// past it the rest is reviewed with the syntax alone, while ctx lasts.
	loadCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, g := range groups {
		if len(g.patterns) == 0 {
			continue
		}
		var lp loaded
		if loadCtx.Err() == nil {
			var genv []string
			if genv, err = confined.envFor(root, g.modDir); err == nil {
				lp, err = l.loadPackages(loadCtx, genv, root, g, testDirs(s), changedFiles(root, s))
			}
		}
		roots, failed, typeErrs, partial := lp.roots, lp.broken, lp.typeErrs, lp.partial
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("load go packages: %w", ctx.Err())
		case loadCtx.Err() != nil:
			for _, d := range g.dirs() {
				broken[d] = fmt.Sprintf("loading took longer than %s", timeout)
			}
			continue
		case err != nil:
			// The reason goes into findings: no temporary path in it, so
			// a review says the same thing each time.
			why := got.explain(g.modDir, strings.ReplaceAll(err.Error(), root+string(filepath.Separator), ""))
			for _, d := range g.dirs() {
				broken[d] = why
			}
			continue
		}
		for d, why := range failed {
			broken[d] = got.explain(g.modDir, strings.ReplaceAll(why, root+string(filepath.Separator), ""))
		}
		for _, pkg := range roots {
			if why := pathological(pkg); why != "" {
				broken[p.repoDir(pkg)] = why
				continue
			}
			p.Packages = append(p.Packages, pkg)
		}
		for _, d := range typeErrs {
			d.Message = strings.ReplaceAll(d.Message, root+string(filepath.Separator), "")
			if defused[path.Dir(d.Path)] != "" || mentionsAny(d.Message, defusedTypes) {
				// The errors of the empty structs are the review's
				// own doing, not the change's.
				continue
			}
			p.TypeErrors = append(p.TypeErrors, d)
		}
		for _, pkg := range partial {
			if pathological(pkg) == "" {
				p.Partial = append(p.Partial, pkg)
			}
		}
		for _, pkg := range lp.repaired {
			if why := pathological(pkg); why != "" {
				broken[p.repoDir(pkg)] = why
				continue
			}
			p.Repaired = append(p.Repaired, pkg)
		}
		p.unrepaired = append(p.unrepaired, lp.unrepaired...)
		maps.Copy(p.summaries, lp.summaries)
		p.Dependencies.Checked += lp.deps.Checked
		p.Dependencies.FromCache += lp.deps.FromCache
		for f, lo := range lp.leftOut {
			if rp, ok := p.RepoPath(f); ok {
				lo.Reason = got.explain(g.modDir, strings.ReplaceAll(lo.Reason, root+string(filepath.Separator), ""))
				p.LeftOut[rp] = lo
			}
		}
	}
	// A package that type-checks in one variant and not in another (its
	// tests broken, say) is analysed where it type-checks.
	p.Packages = slices.DeleteFunc(p.Packages, func(pkg *packages.Package) bool { return broken[p.repoDir(pkg)] != "" })
	p.Repaired = slices.DeleteFunc(p.Repaired, func(pkg *packages.Package) bool { return broken[p.repoDir(pkg)] != "" })
	p.unrepaired = slices.DeleteFunc(p.unrepaired, func(pkg *packages.Package) bool { return broken[p.repoDir(pkg)] != "" })
	if err := p.parseFallback(ctx, m, broken); err != nil {
		return nil, err
	}
	if len(p.Packages)+len(p.Repaired) == 0 && len(p.Fallback) > 0 {
		p.SyntaxOnly = p.Fallback[0].Reason
	}
	return p, nil
}

// dirs returns the group's package directories relative to the tree's root.
func (g group) dirs() []string {
	out := make([]string, len(g.patterns))
	for i, pat := range g.patterns {
		out[i] = path.Join(g.modDir, pat)
	}
	return out
}

// repoDir returns the repository directory of a loaded package.
func (p *Program) repoDir(pkg *packages.Package) string {
	rel, _ := filepath.Rel(p.Root, filepath.Dir(firstFile(pkg)))
	return filepath.ToSlash(rel)
}

// parseFallback parses the changed files of the packages that could not
// be type-checked, for the syntax-only analyzers.
func (p *Program) parseFallback(ctx context.Context, m *materializer, broken map[string]string) error {
	dirs := make([]string, 0, len(broken))
	for d := range broken {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		p.Fallback = append(p.Fallback, Fallback{Dir: d, Reason: broken[d]})
	}
	for _, f := range m.files {
		why, ok := broken[path.Dir(f)]
		if !ok {
			continue
		}
		src, err := m.read(ctx, f)
		if err != nil {
			if errors.Is(err, change.ErrTooLarge) || errors.Is(err, fs.ErrNotExist) {
				p.Skipped = append(p.Skipped, Skip{Path: f, Reason: "it could not be read: " + err.Error()})
				continue
			}
			return err
		}
		file, _ := parser.ParseFile(p.Fset, filepath.Join(m.root, filepath.FromSlash(f)), src, parser.ParseComments|parser.SkipObjectResolution)
		if file == nil {
			p.Skipped = append(p.Skipped, Skip{Path: f, Reason: "it does not parse"})
			continue
		}
		// A file with syntax errors is analysed as far as it parsed.
		p.Files = append(p.Files, file)
		p.fallback[f] = why
	}
	return nil
}

// testDirs returns the directories in which the change touches a Go test
// file: only when there are some are test variants loaded, which costs a
// second type-check, and only theirs are analyzed.
func testDirs(s side) map[string]bool {
	dirs := map[string]bool{}
	for _, f := range s.files {
		if strings.HasSuffix(f, "_test.go") {
			dirs[path.Dir(f)] = true
		}
	}
	return dirs
}

// changedFiles returns the absolute names, under root, of the files the
// side changes.
func changedFiles(root string, s side) map[string]bool {
	files := make(map[string]bool, len(s.files))
	for _, f := range s.files {
		files[filepath.Join(root, filepath.FromSlash(f))] = true
	}
	return files
}

// mentionsAny reports whether msg names one of the types, as a word.
func mentionsAny(msg string, types []string) bool {
	for _, t := range types {
		for i := strings.Index(msg, t); i >= 0; {
			end := i + len(t)
			before := i == 0 || !isWordByte(msg[i-1])
			after := end == len(msg) || !isWordByte(msg[end])
			if before && after {
				return true
			}
			next := strings.Index(msg[i+1:], t)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// loaded is what loadPackages found of one module's changed packages.
type loaded struct {
	// roots type-check.
	roots []*packages.Package
	// broken are the directories (relative to root) of those that do
	// not, with why; partial those of them typed in part.
	broken  map[string]string
	partial []*packages.Package
	// repaired type-check once the function bodies holding their
	// errors are left out (leftOut, by file name); unrepaired are those
	// of them with bodies left out, as they were loaded.
	repaired, unrepaired []*packages.Package
	leftOut              map[string]LeftOut
	// typeErrs are the type and syntax errors in the repository's
	// files of the changed packages.
	typeErrs []Diagnostic
	// summaries are the dependencies' (typecheck.go).
	summaries map[*types.Package]*summary
	deps      DependencyCounts
}

// loadPackages loads one module's changed packages with go/packages
// under the sandboxed environment, with their tests when testDirs
// (directories relative to root in which test files changed) is not empty.
// An error means go list itself failed for the whole module.
func (l *Loader) loadPackages(ctx context.Context, env []string, root string, g group, testDirs map[string]bool, changed map[string]bool) (loaded, error) {
	tests := &testBodies{changed: changed}
	cfg := &packages.Config{
		// go list's answer alone: the loader type-checks (typecheck.go).
		Mode:    packages.LoadImports | packages.NeedDeps | packages.NeedTypesSizes | packages.NeedModule | packages.NeedForTest,
		Context: ctx,
		Dir:     filepath.Join(root, filepath.FromSlash(g.modDir)),
		Env:     env,
		Tests:   len(testDirs) > 0,
	}
	// What go list names is read from the tree, GOROOT and the module
	// cache only: test mains (in the build cache) are not type-checked,
	// and cgo is off.
	readable := []string{l.goRoot, l.modCache}
	parseRepo := func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
		// gosec still reads the syntactic objects (ast.Ident.Obj).
		f, err := parser.ParseFile(fset, filename, src, parser.ParseComments)
		if f != nil && len(testDirs) > 0 {
			tests.trim(filename, f)
		}
		return f, err
	}
	var summaries map[*types.Package]*summary
	var deps DependencyCounts
	var sel selection
	pkgs, err := l.loadUntil(ctx, cfg, g.patterns, func(pkgs []*packages.Package) {
		sel = newSelection(pkgs, root, testDirs)
		var needed []*packages.Package
		for _, p := range pkgs {
			if sel.considered(p) {
				needed = append(needed, p)
			}
		}
		summaries, deps = checkTypes(ctx, pkgs, needed, root, readable, parseRepo, l.typesCache)
	})
	if err != nil {
		return loaded{}, fmt.Errorf("go list: %s", firstLine(err.Error()))
	}
	// why holds, for each ill-typed package, its first error or the
	// first ill-typed import's.
	why := map[*packages.Package]string{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if inside(root, firstFile(p)) {
			tests.forgive(p)
		}
		// Visit is post-order: the imports' verdicts are final here.
		if len(p.Errors) > 0 {
			errs := make([]string, len(p.Errors))
			for i, e := range p.Errors {
				errs[i] = e.Error()
			}
			slices.Sort(errs)
			why[p] = firstLine(errs[0])
		} else {
			paths := slices.Sorted(maps.Keys(p.Imports))
			for _, ip := range paths {
				if w, ok := why[p.Imports[ip]]; ok {
					why[p] = "it imports " + ip + ", which does not type-check: " + w
					break
				}
			}
		}
		_, p.IllTyped = why[p]
	})
	// A package whose errors all lie in function bodies is typed
	// completely but for them: they are left out and it is analysed.
	repairs := repairable(root, pkgs)
	leftOut := map[string]LeftOut{}
	for p, fns := range repairs {
		for _, fd := range fns {
			f := p.Fset.File(fd.Pos())
			lo := leftOut[f.Name()]
			if name := funcName(fd); !slices.Contains(lo.Funcs, name) {
				lo.Funcs = append(lo.Funcs, name)
				lo.lines = append(lo.lines, [2]int{f.Line(fd.Pos()), f.Line(fd.End())})
			}
			if r := fileReason(p, f.Name(), why[p]); lo.Reason == "" || betterReason(r, lo.Reason, f.Name()) {
				lo.Reason = r
			}
			leftOut[f.Name()] = lo
		}
	}
	copies := withoutBodies(repairs)
	var typeErrs []Diagnostic
	var roots, partial, repaired, unrepaired []*packages.Package
	broken := map[string]string{}
	seenErr := map[string]bool{}
	found := map[string]bool{}
	var orphan []string
	for _, p := range pkgs {
		if !sel.considered(p) {
			continue
		}
		dir := sel.dir(p)
		for _, e := range p.Errors {
			if !ownError(p, e) {
				continue
			}
			d, ok := errorDiagnostic(root, e)
			key := fmt.Sprintf("%s:%d:%s", d.Path, d.Line, d.Message)
			if ok && !seenErr[key] {
				seenErr[key] = true
				typeErrs = append(typeErrs, d)
			}
		}
		if c, ok := copies[p]; ok && dir != "" {
			repaired = append(repaired, c)
			if len(repairs[p]) > 0 {
				unrepaired = append(unrepaired, p)
			}
			found[dir] = true
			continue
		}
		if w, bad := why[p]; bad {
			if dir == "" {
				orphan = append(orphan, w)
			} else if _, ok := broken[dir]; !ok {
				broken[dir] = w
			}
			if dir != "" && typedInPart(p) {
				partial = append(partial, p)
			}
			continue
		}
		if p.TypesInfo == nil {
			// go list named its files outside the tree: it was not
			// type-checked as the repository's.
			orphan = append(orphan, "go list named files outside the tree for "+p.PkgPath)
			continue
		}
		roots = append(roots, p)
		found[dir] = true
	}
	// A changed directory go list gave no package with files for (all its
	// files excluded by build constraints, say) did not load.
	for _, d := range g.dirs() {
		if !found[d] && broken[d] == "" {
			broken[d] = "go list found no package"
			if len(orphan) > 0 {
				broken[d] = orphan[0]
			}
		}
	}
	for _, lo := range leftOut {
		slices.Sort(lo.Funcs)
	}
	dropUnread(pkgs, roots, partial, repaired, unrepaired)
	return loaded{roots: roots, broken: broken, partial: partial, repaired: repaired, unrepaired: unrepaired, leftOut: leftOut, typeErrs: typeErrs, summaries: summaries, deps: deps}, nil
}

// selection says which of the packages go list gave are analysed, if
// they type-check. With Tests set, a package comes as itself, its test
// variant (package p [p.test]), its external tests (p_test) and the test
// main. In a directory where a test file changed, the test variant and
// the external tests are analysed (the variant holds the package's own
// files too, so the plain package is left out); elsewhere the package
// alone: its tests did not change, and analysing them costs without
// reporting anything on changed lines. What no analysed package imports
// is not type-checked.
type selection struct {
	root           string
	testDirs       map[string]bool
	hasTestVariant map[string]bool
}

func newSelection(pkgs []*packages.Package, root string, testDirs map[string]bool) selection {
	s := selection{root: root, testDirs: testDirs, hasTestVariant: map[string]bool{}}
	for _, p := range pkgs {
		if p.ForTest != "" && p.ForTest == p.PkgPath {
			s.hasTestVariant[p.PkgPath] = true
		}
	}
	return s
}

// dir returns p's directory relative to the root, or "" for a package
// with no file in the tree.
func (s selection) dir(p *packages.Package) string {
	f := firstFile(p)
	if f == "" || !inside(s.root, f) {
		return ""
	}
	rel, _ := filepath.Rel(s.root, filepath.Dir(f))
	return filepath.ToSlash(rel)
}

func (s selection) considered(p *packages.Package) bool {
	testsChanged := s.testDirs[s.dir(p)]
	switch {
	case strings.HasSuffix(p.PkgPath, ".test"):
		return false
	case p.ForTest != "" && !testsChanged:
		return false
	case p.ForTest == "" && testsChanged && s.hasTestVariant[p.PkgPath]:
		return false
	}
	return true
}

// fileReason returns why functions of the file named filename in p were
// left out: the first of the file's own errors in the order of their
// text, else pkgWhy, the package's first so.
func fileReason(p *packages.Package, filename, pkgWhy string) string {
	var own []string
	for _, e := range p.Errors {
		if strings.HasPrefix(e.Pos, filename+":") {
			own = append(own, e.Error())
		}
	}
	if len(own) == 0 {
		return pkgWhy
	}
	return firstLine(slices.Min(own))
}

// betterReason reports whether a says better than b why functions of the
// file named filename were left out: a file of a package and of its test
// variant is repaired in both, whose first errors differ, and the map
// of repairs gave either at random. The file's own error is better; else
// the one that sorts first.
func betterReason(a, b, filename string) bool {
	ownA, ownB := strings.HasPrefix(a, filename+":"), strings.HasPrefix(b, filename+":")
	if ownA != ownB {
		return ownA
	}
	return a < b
}

// dropUnread drops the syntax and types of the packages go list gave
// that nothing analysed reads, directly or through its imports (a
// package whose test variant is analysed in its place, the test variants
// and external tests of the packages whose tests did not change, the
// test mains): typecheck.go did not type-check them, but a package
// selected and then found broken was.
func dropUnread(pkgs []*packages.Package, analysed ...[]*packages.Package) {
	var roots []*packages.Package
	for _, ps := range analysed {
		roots = append(roots, ps...)
	}
	read := map[*packages.Package]bool{}
	packages.Visit(roots, func(p *packages.Package) bool {
		read[p] = true
		return true
	}, nil)
	for _, p := range pkgs {
		if !read[p] {
			p.Syntax, p.TypesInfo, p.Types = nil, nil, nil
		}
	}
}

// loadUntil runs go/packages, then check on what it gave, and returns
// when they are done or when ctx ends, whichever comes first. go list
// stops with ctx, and the type checker between packages, but not inside
// one: it is left to finish on its own, reading a tree that loadSide then
// removes at once, instead of holding the tree, and the review, until it
// ends, which may be never.
func (l *Loader) loadUntil(ctx context.Context, cfg *packages.Config, patterns []string, check func([]*packages.Package)) ([]*packages.Package, error) {
	if n := l.abandoned.Load(); n >= maxAbandoned {
		return nil, fmt.Errorf("%w: %d earlier loads passed their time limit and still type-check", errTypeCheckerBusy, n)
	}
	type loaded struct {
		pkgs []*packages.Package
		err  error
	}
	done := make(chan loaded, 1)
	go func() {
		pkgs, err := l.packagesLoad(cfg, patterns...)
		if err == nil {
			check(pkgs)
		}
		done <- loaded{pkgs, err}
	}()
	select {
	case r := <-done:
		return r.pkgs, r.err
	case <-ctx.Done():
		// The type checker cannot be stopped: it is counted until it
		// ends, and past maxAbandoned no other starts.
		l.abandoned.Add(1)
		go func() {
			<-done
			l.abandoned.Add(-1)
		}()
		return nil, ctx.Err()
	}
}

// maxAbandoned is how many loads past their time limit may still be
// type-checking (in memory, unstoppable) before a Loader type-checks no
// more: later changes are analysed syntax-only, and say why, until one
// ends. A pull request that gets past the guards costs the service the
// type checking of later reviews for a while, not its memory.
const maxAbandoned = 2

// errTypeCheckerBusy is a load refused for the type checkers still
// running past their time.
var errTypeCheckerBusy = errors.New("type checking is refused for now")

// environmentOnly reports whether an ill-typed package's own code is
// fine: each of its errors is the review's environment's (ownError), or
// a name undefined in an imported package that is ill-typed itself or
// lost files to build constraints (mattn/go-sqlite3 without cgo has no
// SQLiteDriver).
func environmentOnly(p *packages.Package) bool {
	if len(p.Syntax) == 0 || p.TypesInfo == nil || p.Types == nil {
		return false
	}
	for _, e := range p.Errors {
		if !ownError(p, e) {
			continue
		}
		m := undefinedIn.FindStringSubmatch(e.Msg)
		if m == nil {
			return false
		}
		env := false
		for _, imp := range p.Imports {
			if imp.Name == m[1] && (imp.IllTyped || len(imp.IgnoredFiles) > 0) {
				env = true
			}
		}
		if !env {
			return false
		}
	}
	return true
}

// namedByFailedImport reports whether name is likely the package name of
// an import that could not be resolved: the type checker names such a
// package after its path, so `jwt` of "github.com/dgrijalva/jwt-go" is
// undefined.
func namedByFailedImport(p *packages.Package, name string) bool {
	for _, e := range p.Errors {
		m := couldNotImport.FindStringSubmatch(e.Msg)
		if m != nil && strings.Contains(strings.ToLower(path.Base(m[1])), strings.ToLower(name)) {
			return true
		}
	}
	return false
}

var (
	undefinedName  = regexp.MustCompile(`^undefined: (\w+)$`)
	couldNotImport = regexp.MustCompile(`could not import (\S+)`)
)

// undefinedIn matches the type checker's "undefined: pkg.Name".
var undefinedIn = regexp.MustCompile(`^undefined: (\w+)\.\w+$`)

// ownError reports whether a package's error is the code's own, not one
// of the review's environment: an import that cannot be resolved offline,
// or a name that files excluded here (cgo, other platforms) may define.
func ownError(p *packages.Package, e packages.Error) bool {
	switch {
	case e.Kind == packages.ListError, e.Kind == packages.UnknownError:
		return false
	case strings.Contains(e.Msg, "could not import"), strings.Contains(e.Msg, "cannot find package"):
		return false
	case len(p.IgnoredFiles) > 0 && (strings.HasPrefix(e.Msg, "undefined") || strings.Contains(e.Msg, "undefined (type")):
		return false
	}
	if m := undefinedName.FindStringSubmatch(e.Msg); m != nil && namedByFailedImport(p, m[1]) {
		return false
	}
	return true
}

// errorDiagnostic turns a package error at a position in the repository
// into a TypeCheck diagnostic; false for one elsewhere or without one.
func errorDiagnostic(root string, e packages.Error) (Diagnostic, bool) {
	pos := e.Pos
	if pos == "" || pos == "-" {
		return Diagnostic{}, false
	}
	// file:line:col or file:line
	file, line := pos, 0
	for range 2 {
		i := strings.LastIndexByte(file, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(file[i+1:])
		if err != nil {
			break
		}
		file, line = file[:i], n
	}
	if line == 0 || !inside(root, file) {
		return Diagnostic{}, false
	}
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return Diagnostic{}, false
	}
	return Diagnostic{Analyzer: TypeCheck, Path: filepath.ToSlash(rel), Line: line, EndLine: line, Message: e.Msg}, true
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

// gopathEnvironment turns the module-mode environment into GOPATH mode's
// for a tree copied to root under gopath: Godeps' workspace, when the tree
// has one, comes first in GOPATH, as godep arranged it.
func gopathEnvironment(env []string, gopath, root string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "GO111MODULE="), strings.HasPrefix(kv, "GOFLAGS="), strings.HasPrefix(kv, "GOPATH="):
		default:
			out = append(out, kv)
		}
	}
	return append(out,
		"GO111MODULE=off",
		"GOFLAGS=-buildvcs=false",
		"GOPATH="+filepath.Join(root, "Godeps", "_workspace")+string(os.PathListSeparator)+gopath,
	)
}

// environment is the go command's environment (nothing of ours leaks in)
// and the local toolchain's version ("1.26.8").
func (l *Loader) environment() ([]string, string, error) {
	l.envOnce.Do(func() {
		l.env, l.goVersion, l.envErr = l.buildEnvironment()
	})
	return l.env, l.goVersion, l.envErr
}

func (l *Loader) buildEnvironment() ([]string, string, error) {
	goCmd := l.cfg.Go
	if goCmd == "" {
		goCmd = "go"
	}
	goPath, err := lookGo(goCmd)
	if err != nil {
		return nil, "", fmt.Errorf("the go command: %w", err)
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
			return nil, "", fmt.Errorf("go cache directory: %w", err)
		}
	}
	out, err := exec.Command(goPath, "env", "GOVERSION", "GOMODCACHE", "GOROOT").Output()
	if err != nil {
		return nil, "", fmt.Errorf("go env: %w", err)
	}
	goEnv := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(goEnv) != 3 {
		return nil, "", fmt.Errorf("go env printed %q", out)
	}
	// "go1.26.8", or "devel …" for a toolchain built from source, whose
	// version a go.mod is not compared with.
	goVersion := ""
	if f := strings.Fields(goEnv[0]); len(f) > 0 {
		goVersion, _ = strings.CutPrefix(f[0], "go")
		if goVersion == f[0] {
			goVersion = ""
		}
	}
	modCache := l.cfg.ModCache
	switch {
	case modCache != "":
	case l.cfg.fetching():
		// Fetching writes the cache as the sandbox's user: a cache of
		// quorum's own, never the service user's.
		modCache = filepath.Join(cacheDir, "mod")
	default:
		modCache = strings.TrimSpace(goEnv[1])
	}
	l.goPath, l.goRoot, l.modCache = goPath, strings.TrimSpace(goEnv[2]), modCache
	// The sandboxed go command's build cache, kept across loads (see
	// confine.go).
	l.sandboxCache = filepath.Join(cacheDir, "sandbox-build")
	if quorumBuild() != "" {
		l.typesCache = newTypesCache(filepath.Join(cacheDir, "types"))
	}
	if err := os.MkdirAll(l.sandboxCache, 0o700); err != nil {
		return nil, "", fmt.Errorf("go cache directory: %w", err)
	}
	if err := sandbox.Own(l.sandboxCache); err != nil {
		return nil, "", fmt.Errorf("go cache directory: %w", err)
	}
	if l.cfg.fetching() {
		if l.fetcher, err = newFetcher(l.cfg); err != nil {
			return nil, "", err
		}
		// The fetch writes the cache as the sandbox's user.
		if err := os.MkdirAll(modCache, 0o700); err != nil {
			return nil, "", fmt.Errorf("module cache: %w", err)
		}
		if err := sandbox.Own(modCache); err != nil {
			return nil, "", fmt.Errorf("module cache: %w", err)
		}
	}
	// The load is offline, and the module cache is the proxy: an import
	// no go.mod requires (a GOPATH-era tree's, say) resolves to the
	// newest version the cache holds (fetch.go has filled it).
	proxy, sumdb := "file://"+filepath.ToSlash(filepath.Join(modCache, "cache", "download")), "off"
	env := []string{
		// The go command's own PATH (go/packages starts it through the
		// dispatcher on quorum's: confine.go).
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
	return env, goVersion, nil
}

// unusedImport reports whether a type error says an import is unused
// ("imported and not used", "imported as x and not used").
func unusedImport(msg string) bool {
	return strings.Contains(msg, "imported") && strings.HasSuffix(msg, "and not used")
}
