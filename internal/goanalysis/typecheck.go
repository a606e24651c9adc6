package goanalysis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/gcexportdata"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/objectpath"
	"honnef.co/go/tools/analysis/facts/deprecated"
)

// The loader asks go/packages for what go list says (files, imports,
// modules) and type-checks the packages itself, because go/packages
// keeps every dependency's syntax and types in one graph that lives as
// long as the program: on a change to caddy, its 959 dependencies were
// two thirds of the live heap after loading, carried through the whole
// analysis (docs/performance.md, "A large repository").
//
// Here the packages outside the repository (the standard library,
// modules) are type-checked from source without their function bodies,
// as before, each against its imports' types, and their syntax is
// dropped as each is done. Those the repository's packages import are
// then written as export data (gcexportdata, the compiler's format). The
// repository's packages are type-checked from source against one map
// into which an import's export data is decoded when first imported: its
// whole declarations, and of the packages behind it only what they refer
// to. Once loaded, the program holds of its dependencies what its own
// code can reach, as a compiler would; the dependencies' own types are
// garbage.
//
// Export data carries no comments, so the deprecations of every
// dependency (staticcheck's SA1019) are read from its syntax while it is
// checked and replayed as facts when the checker reaches it
// (summary.replay).

// typeChecker type-checks the packages go list gave for one load.
type typeChecker struct {
	ctx  context.Context
	root string
	// fset holds the repository's files and what is decoded for them;
	// depFset the dependencies' files, garbage with them once loaded (a
	// dependency's errors are kept as text only).
	fset, depFset *token.FileSet
	// parseRepo parses a file of the repository.
	parseRepo func(fset *token.FileSet, filename string, src []byte) (*ast.File, error)
	// dirs are the directories a file go list names may be read from:
	// the tree, GOROOT and the module cache, each opened as an os.Root
	// (a link out of one is not followed).
	dirs  []string
	nodes map[*packages.Package]*node

	rootsMu sync.Mutex
	roots   map[string]*os.Root

	parsedMu sync.Mutex
	parsed   map[string]*parsedFile

	// shared holds the dependencies' export data decoded for the
	// repository's packages: written before they are checked, read only
	// while they are. A dependency's export data never refers to the
	// repository's packages: one that imports one of them is checked
	// from source like them.
	shared map[string]*types.Package

	// cache keeps the dependencies' summaries across loads (typecache.go);
	// nil keeps none.
	cache *typesCache
	// depShared holds the summaries found in the cache decoded for the
	// dependencies checked from source that import them, each decoded
	// after its imports (depMu).
	depMu     sync.Mutex
	depShared map[string]*types.Package
}

// A node is one package of the load.
type node struct {
	p    *packages.Package
	kind nodeKind
	done chan struct{}
	// cut are the imports that close an import cycle: not waited for.
	cut map[*packages.Package]bool
	// imported says that a package checked from source imports this one
	// (kind fromExport): its export data is written.
	imported bool
	// sum is an outside package's summary (kind fromExport), and
	// decodeErr why its export data could not be read.
	sum       *summary
	decodeErr error
	// key is an outside package's key in the cache, when keyed; hit says
	// its summary came from there (and so did its imports'): it was not
	// checked, and depTypes are its types decoded for the dependencies
	// that import it, or depErr why they could not be.
	key      typesKey
	keyed    bool
	hit      bool
	depTypes *types.Package
	depErr   error
	// contents are the files' bytes the key was computed from, which
	// the check then parses (not a second read, which a fetch writing
	// the module cache meanwhile could make differ); nil once checked.
	contents [][]byte
}

type nodeKind int

const (
	// unneeded: no package analysed reads it (a test main, a test
	// variant of unchanged tests); it gets an empty package.
	unneeded nodeKind = iota
	// fromSource: a package of the repository, type-checked from its
	// syntax with all its type information.
	fromSource
	// fromExport: a package outside the repository, summarised.
	fromExport
)

// A summary is what a review keeps of a package outside the repository.
type summary struct {
	// data is its export data, for a package the repository's import;
	// err says why it could not be written.
	data []byte
	err  error
	// deprecated are its objects documented as deprecated, by path, and
	// pkgDeprecated the package's own deprecation.
	deprecated    []deprecation
	pkgDeprecated string
}

type deprecation struct {
	path objectpath.Path
	msg  string
}

// importerFunc is a types.Importer.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

type parsedFile struct {
	once sync.Once
	f    *ast.File
	err  error
}

// checkTypes type-checks pkgs, as go list gave them, and their
// dependencies; needed are the packages that will be analysed, and
// only what they import is type-checked. It returns the summaries of the
// packages outside the repository, by their types.
func checkTypes(ctx context.Context, pkgs []*packages.Package, needed []*packages.Package, root string, readable []string, parseRepo func(*token.FileSet, string, []byte) (*ast.File, error), cache *typesCache) (map[*types.Package]*summary, DependencyCounts) {
	tc := &typeChecker{ctx: ctx, root: root, fset: token.NewFileSet(), depFset: token.NewFileSet(), parseRepo: parseRepo,
		dirs: append([]string{root}, readable...), roots: map[string]*os.Root{},
		nodes: map[*packages.Package]*node{}, parsed: map[string]*parsedFile{}, shared: map[string]*types.Package{},
		cache: cache, depShared: map[string]*types.Package{}}
	defer tc.closeRoots()
	// The order is found depth-first, from the needed packages first;
	// an import that closes a cycle (go list reports the cycle as the
	// package's error) is cut.
	const (
		white = iota
		grey
		black
	)
	color := map[*packages.Package]int{}
	var order []*node
	var visit func(p *packages.Package, isNeeded bool)
	visit = func(p *packages.Package, isNeeded bool) {
		if color[p] != white {
			return
		}
		color[p] = grey
		n := &node{p: p, done: make(chan struct{}), cut: map[*packages.Package]bool{}}
		if isNeeded {
			n.kind = fromExport
			if inside(root, firstFile(p)) || len(p.CompiledGoFiles) == 0 && inside(root, p.Dir) {
				n.kind = fromSource
			}
		}
		tc.nodes[p] = n
		for _, imp := range p.Imports {
			if color[imp] == grey {
				n.cut[imp] = true
			}
			visit(imp, isNeeded)
		}
		order = append(order, n)
		color[p] = black
	}
	for _, p := range needed {
		visit(p, true)
	}
	for _, p := range pkgs {
		visit(p, false)
	}
	// A package outside the repository that imports one of it (a module
	// requiring the repository's) is checked from source like it: its
	// export data would refer to a package that is not summarised.
	for _, n := range order {
		if n.kind != fromExport {
			continue
		}
		for _, imp := range n.p.Imports {
			if k := tc.nodes[imp].kind; k == fromSource {
				n.kind = fromSource
				break
			}
		}
	}
	for _, n := range order {
		if n.kind == fromSource {
			for _, imp := range n.p.Imports {
				tc.nodes[imp].imported = true
			}
		}
	}

	// The dependencies first, in parallel, each after its imports; then
	// the repository's imports of them are decoded, one by one, into the
	// shared map, which is only read from then on; then the repository's
	// packages, in parallel, each after its imports.
	tc.run(order, func(n *node) bool { return n.kind == fromExport })
	for _, n := range order {
		if n.kind == fromExport && n.imported {
			tc.decode(n)
		}
		if n.sum != nil {
			// Decoded or never to be: only the deprecations are read
			// from here on.
			n.sum.data = nil
		}
	}
	tc.run(order, func(n *node) bool { return n.kind != fromExport })

	// What the checker and the analyzers see of a dependency is what the
	// repository's packages decoded of it, or an empty package.
	sums := map[*types.Package]*summary{}
	var counts DependencyCounts
	for _, n := range order {
		if n.kind != fromExport || n.sum == nil {
			continue
		}
		if n.hit {
			counts.FromCache++
		} else {
			counts.Checked++
		}
		p := n.p
		p.Fset, p.Syntax = tc.fset, nil
		p.Types = tc.shared[p.PkgPath]
		if p.Types == nil {
			p.Types = types.NewPackage(p.PkgPath, p.Name)
			p.Types.MarkComplete()
		}
		sums[p.Types] = n.sum
	}
	return sums, counts
}

// DependencyCounts counts a load's packages outside the repository.
type DependencyCounts struct {
	// Checked were type-checked from source; FromCache had their
	// summaries from an earlier load.
	Checked, FromCache int
}

// run checks the nodes of order that pick chooses, each once its imports
// are done (those of the nodes not chosen are done already). A panic in
// one (the type checker, the deprecations' reading, on code the change
// chose) is that package's error; the service goes on.
func (tc *typeChecker) run(order []*node, pick func(*node) bool) {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, n := range order {
		if !pick(n) {
			continue
		}
		wg.Go(func() {
			defer close(n.done)
			for _, imp := range n.p.Imports {
				if !n.cut[imp] {
					<-tc.nodes[imp].done
				}
			}
			if tc.ctx.Err() != nil {
				tc.empty(n.p)
				n.p.Errors = append(n.p.Errors, packages.Error{Pos: "-", Msg: "type checking was cancelled", Kind: packages.UnknownError})
				n.p.IllTyped = true
				return
			}
			sem <- struct{}{}
			defer func() { <-sem }()
			defer func() {
				if x := recover(); x != nil {
					// Nothing of the half-made check is kept: without
					// syntax and types the package is neither repaired
					// nor analysed in part, and no import of it decodes.
					n.sum, n.contents, n.keyed = nil, nil, false
					tc.empty(n.p)
					n.p.Syntax, n.p.TypesInfo, n.p.TypeErrors = nil, nil, nil
					n.p.Errors = append(n.p.Errors, packages.Error{Pos: "-", Msg: fmt.Sprintf("type checking %s panicked: %v", n.p.PkgPath, x), Kind: packages.UnknownError})
					n.p.IllTyped = true
				}
			}()
			switch n.kind {
			case unneeded:
				tc.empty(n.p)
			case fromSource:
				tc.checkSource(n)
			case fromExport:
				if !tc.cached(n) {
					tc.checkDependency(n)
					tc.store(n)
				}
			}
		})
	}
	wg.Wait()
}

// decode decodes n's export data into the shared map, or records why it
// cannot be.
func (tc *typeChecker) decode(n *node) {
	switch {
	case n.sum == nil:
		return
	case n.sum.err != nil:
		n.decodeErr = n.sum.err
		return
	}
	if pkg := tc.shared[n.p.PkgPath]; pkg != nil && pkg.Complete() {
		return
	}
	if _, err := gcexportdata.Read(bytes.NewReader(n.sum.data), tc.fset, tc.shared, n.p.PkgPath); err != nil {
		n.decodeErr = err
		if n.hit {
			// Whole, by its checksum, yet not export data this build
			// reads: no later load is to stumble on it.
			tc.cache.remove(n.key)
		}
	}
}

// empty gives p an empty package: nothing analysed reads it.
func (tc *typeChecker) empty(p *packages.Package) {
	p.Fset = tc.fset
	if p.PkgPath == "unsafe" {
		p.Types = types.Unsafe
	} else {
		p.Types = types.NewPackage(p.PkgPath, p.Name)
		p.Types.MarkComplete()
	}
}

// importer returns the importer of n's package: an import's types as
// checked, but for a package of the repository importing a dependency,
// which gets the dependency's export data as decoded into the shared map.
func (tc *typeChecker) importer(n *node) importerFunc {
	return func(path string) (*types.Package, error) {
		if path == "unsafe" {
			return types.Unsafe, nil
		}
		ip := n.p.Imports[path]
		if ip == nil {
			return nil, fmt.Errorf("no metadata for %s", path)
		}
		if n.cut[ip] {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		in := tc.nodes[ip]
		if in.hit && n.kind == fromExport {
			return tc.decodeDependency(in)
		}
		if n.kind != fromSource || in.kind != fromExport {
			if ip.Types == nil {
				return nil, fmt.Errorf("%s was not type-checked", path)
			}
			return ip.Types, nil
		}
		if in.decodeErr != nil {
			return nil, in.decodeErr
		}
		if pkg := tc.shared[ip.PkgPath]; pkg != nil && pkg.Complete() {
			return pkg, nil
		}
		// Not checked: the load was cancelled, or its check panicked.
		return nil, fmt.Errorf("%s was not type-checked", path)
	}
}

// checkSource type-checks a package of the repository from its syntax,
// with all its type information. (A package outside it checked so, which
// imports one of it, has no function bodies.)
func (tc *typeChecker) checkSource(n *node) {
	p := n.p
	if p.PkgPath == "unsafe" {
		tc.empty(p)
		p.Syntax, p.TypesInfo = []*ast.File{}, &types.Info{}
		return
	}
	p.Fset = tc.fset
	for _, name := range p.CompiledGoFiles {
		f, err := tc.parseShared(name)
		if err != nil {
			p.Errors = append(p.Errors, parseErrors(err)...)
		}
		if f != nil {
			p.Syntax = append(p.Syntax, f)
		}
	}
	p.TypesInfo = &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Instances:    map[*ast.Ident]types.Instance{},
		Scopes:       map[ast.Node]*types.Scope{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		FileVersions: map[*ast.File]string{},
	}
	p.Types = types.NewPackage(p.PkgPath, p.Name)
	tc.typeCheck(n, tc.fset, tc.importer(n), !inside(tc.root, firstFile(p)), p.TypesInfo)
}

// checkDependency type-checks a package outside the repository without
// its function bodies, against its imports' types, and summarises it.
func (tc *typeChecker) checkDependency(n *node) {
	p := n.p
	if p.PkgPath == "unsafe" {
		tc.empty(p)
		return
	}
	p.Fset = tc.depFset
	for i, name := range p.CompiledGoFiles {
		var src []byte
		if i < len(n.contents) {
			src = n.contents[i]
		}
		f, err := tc.parseDependency(tc.depFset, name, src)
		if err != nil {
			p.Errors = append(p.Errors, parseErrors(err)...)
		}
		if f != nil {
			p.Syntax = append(p.Syntax, f)
		}
	}
	n.contents = nil
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}}
	p.Types = types.NewPackage(p.PkgPath, p.Name)
	tc.typeCheck(n, tc.depFset, tc.importer(n), true, info)
	n.sum = summarise(tc.depFset, p.Types, p.Syntax, info, n.imported || n.keyed)
	// Its errors are in Errors as text: those in TypeErrors would keep
	// the dependencies' file set.
	p.Syntax, p.TypeErrors = nil, nil
}

// typeCheck runs the type checker on p's syntax, recording its errors
// as go/packages does. Without bodies (a package outside the repository),
// an import used only in them is unused: that error is not the package's.
func (tc *typeChecker) typeCheck(n *node, fset *token.FileSet, imp importerFunc, noBodies bool, info *types.Info) {
	p := n.p
	conf := &types.Config{
		Importer:         imp,
		IgnoreFuncBodies: noBodies,
		Sizes:            p.TypesSizes,
		Error: func(err error) {
			te, ok := err.(types.Error)
			switch {
			case !ok:
				p.Errors = append(p.Errors, packages.Error{Pos: "-", Msg: err.Error(), Kind: packages.UnknownError})
			case noBodies && unusedImport(te.Msg):
			default:
				p.TypeErrors = append(p.TypeErrors, te)
				p.Errors = append(p.Errors, packages.Error{Pos: te.Fset.Position(te.Pos).String(), Msg: te.Msg, Kind: packages.TypeError})
			}
		},
	}
	conf.GoVersion = goVersionOf(p)
	err := types.NewChecker(conf, fset, p.Types, info).Files(p.Syntax)
	if err != nil && len(p.Errors) == 0 && !(noBodies && unusedImport(err.Error())) {
		p.Errors = append(p.Errors, packages.Error{Pos: "-", Msg: err.Error(), Kind: packages.UnknownError})
	}
	p.IllTyped = len(p.Errors) > 0
	for _, imp := range p.Imports {
		p.IllTyped = p.IllTyped || !n.cut[imp] && imp.IllTyped
	}
}

// parseShared parses a file of a package checked from source once,
// whichever of the package's variants asks.
func (tc *typeChecker) parseShared(filename string) (*ast.File, error) {
	tc.parsedMu.Lock()
	pf := tc.parsed[filename]
	if pf == nil {
		pf = &parsedFile{}
		tc.parsed[filename] = pf
	}
	tc.parsedMu.Unlock()
	pf.once.Do(func() {
		// A panic is the file's error for every variant that asks.
		defer func() {
			if x := recover(); x != nil {
				pf.f, pf.err = nil, &os.PathError{Op: "parse", Path: filepath.Base(filename), Err: fmt.Errorf("the parser panicked: %v", x)}
			}
		}()
		if !inside(tc.root, filename) {
			pf.f, pf.err = tc.parseDependency(tc.fset, filename, nil)
			return
		}
		src, err := tc.readFile(filename)
		if err != nil {
			pf.err = err
			return
		}
		pf.f, pf.err = tc.parseRepo(tc.fset, filename, src)
	})
	return pf.f, pf.err
}

// parseDependency parses a file outside the repository without what
// type-checking its declarations does not need (trim).
func (tc *typeChecker) parseDependency(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
	if src == nil {
		var err error
		if src, err = tc.readFile(filename); err != nil {
			return nil, err
		}
	}
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if f != nil {
		trim(f)
	}
	return f, err
}

// maxSourceFile is the largest Go file the loader reads (the largest of
// the standard library is under 1 MB; generated tables of modules run to
// a few).
const maxSourceFile = 64 << 20

// readFile reads a file go list named, if it lies in one of tc.dirs,
// through that directory's os.Root: a symbolic link leading out of it (a
// go command in the sandbox could leave one in the module cache it
// fills) is not followed. Only a regular file is read (a FIFO would
// block), up to maxSourceFile.
func (tc *typeChecker) readFile(filename string) ([]byte, error) {
	// A file refused is the package's error, as a file that does not
	// parse is: the package is not analysed as if it were whole.
	refused := func(format string, args ...any) error {
		return &os.PathError{Op: "read", Path: filepath.Base(filename), Err: fmt.Errorf(format, args...)}
	}
	for _, dir := range tc.dirs {
		if dir == "" || !inside(dir, filename) {
			continue
		}
		rel, err := filepath.Rel(dir, filename)
		if err != nil {
			return nil, refused("%v", err)
		}
		r, err := tc.openRoot(dir)
		if err != nil {
			return nil, refused("%v", err)
		}
		f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fi, err := f.Stat()
		switch {
		case err != nil:
			return nil, err
		case !fi.Mode().IsRegular():
			return nil, refused("not a regular file")
		case fi.Size() > maxSourceFile:
			return nil, refused("larger than %d MiB", maxSourceFile>>20)
		}
		src, err := io.ReadAll(io.LimitReader(f, maxSourceFile+1))
		if err == nil && len(src) > maxSourceFile {
			err = refused("larger than %d MiB", maxSourceFile>>20)
		}
		return src, err
	}
	// go list names only files of the tree, GOROOT and the module cache;
	// anything else is not read into a review.
	return nil, refused("outside the tree, GOROOT and the module cache")
}

// openRoot returns dir opened as an os.Root, once per load.
func (tc *typeChecker) openRoot(dir string) (*os.Root, error) {
	tc.rootsMu.Lock()
	defer tc.rootsMu.Unlock()
	if r := tc.roots[dir]; r != nil {
		return r, nil
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	tc.roots[dir] = r
	return r, nil
}

func (tc *typeChecker) closeRoots() {
	tc.rootsMu.Lock()
	defer tc.rootsMu.Unlock()
	for _, r := range tc.roots {
		r.Close()
	}
}

// parseErrors turns a parser's error into the package's errors, as
// go/packages does.
func parseErrors(err error) []packages.Error {
	var list scanner.ErrorList
	var pathErr *os.PathError
	switch {
	case errors.As(err, &list):
		out := make([]packages.Error, len(list))
		for i, e := range list {
			out[i] = packages.Error{Pos: e.Pos.String(), Msg: e.Msg, Kind: packages.ParseError}
		}
		return out
	case errors.As(err, &pathErr):
		return []packages.Error{{Pos: pathErr.Path + ":1", Msg: pathErr.Err.Error(), Kind: packages.ParseError}}
	}
	return []packages.Error{{Pos: "-", Msg: err.Error(), Kind: packages.UnknownError}}
}

// summarise reads pkg's deprecations from its syntax (staticcheck's own
// reading, run on it alone) and, with export, writes its export data.
func summarise(fset *token.FileSet, pkg *types.Package, files []*ast.File, info *types.Info, export bool) *summary {
	sum := &summary{}
	var enc objectpath.Encoder
	pass := &analysis.Pass{
		Analyzer:  deprecated.Analyzer,
		Fset:      fset,
		Files:     files,
		Pkg:       pkg,
		TypesInfo: info,
		ExportObjectFact: func(obj types.Object, f analysis.Fact) {
			if obj == nil {
				return
			}
			if path, err := enc.For(obj); err == nil {
				sum.deprecated = append(sum.deprecated, deprecation{path, f.(*deprecated.IsDeprecated).Msg})
			}
		},
		ExportPackageFact: func(f analysis.Fact) { sum.pkgDeprecated = f.(*deprecated.IsDeprecated).Msg },
		AllObjectFacts:    func() []analysis.ObjectFact { return nil },
		AllPackageFacts:   func() []analysis.PackageFact { return nil },
	}
	// Its result is the facts, which are kept here.
	_, _ = deprecated.Analyzer.Run(pass)
	if export {
		sum.data, sum.err = exportData(fset, pkg)
	}
	return sum
}

// exportData returns pkg's export data.
func exportData(fset *token.FileSet, pkg *types.Package) (data []byte, err error) {
	defer func() {
		if x := recover(); x != nil {
			data, err = nil, fmt.Errorf("its export data could not be written: %v", x)
		}
	}()
	var buf bytes.Buffer
	if err := gcexportdata.Write(&buf, fset, pkg); err != nil {
		return nil, fmt.Errorf("its export data could not be written: %v", err)
	}
	return bytes.Clone(buf.Bytes()), nil
}

// replay is the deprecation analyzer's pass on a summarised package:
// the deprecations read from its syntax become facts of the objects the
// repository's packages decoded (an object they did not is used nowhere
// here), and its result is the analyzer's.
func (s *summary) replay(pass *analysis.Pass) (any, error) {
	if s.pkgDeprecated != "" {
		pass.ExportPackageFact(&deprecated.IsDeprecated{Msg: s.pkgDeprecated})
	}
	for _, d := range s.deprecated {
		if obj, err := objectpath.Object(pass.Pkg, d.path); err == nil && obj.Pkg() == pass.Pkg {
			pass.ExportObjectFact(obj, &deprecated.IsDeprecated{Msg: d.msg})
		}
	}
	out := deprecated.Result{Objects: map[types.Object]*deprecated.IsDeprecated{}, Packages: map[*types.Package]*deprecated.IsDeprecated{}}
	for _, f := range pass.AllObjectFacts() {
		out.Objects[f.Object] = f.Fact.(*deprecated.IsDeprecated)
	}
	for _, f := range pass.AllPackageFacts() {
		out.Packages[f.Package] = f.Fact.(*deprecated.IsDeprecated)
	}
	return out, nil
}

// goVersionOf is the Go version p is checked at: its module's.
func goVersionOf(p *packages.Package) string {
	if p.Module != nil && p.Module.GoVersion != "" {
		return "go" + p.Module.GoVersion
	}
	return ""
}

// cached looks n, a package outside the repository, up in the cache,
// once its imports are done: a hit when its summary is there and its
// imports' were too. It keys n when it can be kept: go list reported no
// error of it, its files could be read, and its imports are keyed.
func (tc *typeChecker) cached(n *node) bool {
	p := n.p
	if tc.cache == nil || len(p.Errors) > 0 || len(n.cut) > 0 {
		return false
	}
	if p.PkgPath == "unsafe" {
		// Go's own, with nothing to check or keep.
		n.key = dependencyKey("", nil, "unsafe", "unsafe", "unsafe", nil, nil, nil)
		n.keyed, n.hit, n.depTypes = true, true, types.Unsafe
		tc.empty(p)
		return true
	}
	imports := make(map[string]typesKey, len(p.Imports))
	allHit := true
	for path, ip := range p.Imports {
		in := tc.nodes[ip]
		if !in.keyed {
			return false
		}
		imports[path] = in.key
		allHit = allHit && in.hit
	}
	contents := make([][]byte, len(p.CompiledGoFiles))
	for i, name := range p.CompiledGoFiles {
		src, err := tc.readFile(name)
		if err != nil {
			return false
		}
		contents[i] = src
	}
	n.key = dependencyKey(goVersionOf(p), p.TypesSizes, p.ID, p.PkgPath, p.Name, p.CompiledGoFiles, contents, imports)
	n.keyed = true
	if !allHit {
		n.contents = contents
		return false
	}
	sum, ok := tc.cache.get(n.key)
	if !ok {
		n.contents = contents
		return false
	}
	n.sum, n.hit = sum, true
	p.Fset = tc.depFset
	return true
}

// store keeps n's summary in the cache when n was keyed and it and its
// imports type-checked without error; the export data is then dropped
// unless the repository's packages import n.
func (tc *typeChecker) store(n *node) {
	if n.keyed && n.sum != nil && n.sum.err == nil && !n.p.IllTyped && len(n.p.Errors) == 0 && tc.ctx.Err() == nil {
		if err := tc.cache.put(n.key, n.sum); err != nil {
			// Its dependents could never be found: not kept either.
			n.keyed = false
		}
	} else {
		n.keyed = false
	}
	if !n.imported && n.sum != nil {
		n.sum.data = nil
	}
}

// decodeDependency returns the types of in, a package whose summary came
// from the cache, for a dependency checked from source: decoded from its
// export data into depShared after its imports (all from the cache too),
// so that no package is decoded in part and completed later while
// another goroutine reads it.
func (tc *typeChecker) decodeDependency(in *node) (*types.Package, error) {
	tc.depMu.Lock()
	defer tc.depMu.Unlock()
	var decode func(n *node) error
	decode = func(n *node) error {
		if n.depTypes != nil || n.depErr != nil {
			return n.depErr
		}
		for _, imp := range n.p.Imports {
			if err := decode(tc.nodes[imp]); err != nil {
				n.depErr = err
				return err
			}
		}
		n.depTypes, n.depErr = gcexportdata.Read(bytes.NewReader(n.sum.data), tc.depFset, tc.depShared, n.p.PkgPath)
		if n.depErr != nil {
			tc.cache.remove(n.key)
		}
		return n.depErr
	}
	if err := decode(in); err != nil {
		return nil, err
	}
	return in.depTypes, nil
}
