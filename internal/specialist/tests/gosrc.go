package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
)

// goFunc is a function or method a Go file declares.
type goFunc struct {
	key  string // "Name" or "Recv.Name"
	name string
	// from and to are the lines of the declaration, from the func
	// keyword to the closing brace.
	from, to int
	// body is the body's lines, normalized (see normLine), without blank
	// and bracket-only lines.
	body []string
	// delegates marks a body that only hands its arguments to another
	// call (return c.genFile(name, false)): nothing of its own to test.
	delegates bool
	decl      *ast.FuncDecl
}

// goSource is a parsed Go file: its functions, by key, and the names it
// declares at the top level.
type goSource struct {
	fset  *token.FileSet
	file  *ast.File
	src   string
	funcs []*goFunc
	decls map[string]bool
}

// parseGo parses a Go file; nil when it does not parse.
func parseGo(name string, lines []string) *goSource {
	if lines == nil {
		return nil
	}
	src := strings.Join(lines, "\n")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	g := &goSource{fset: fset, file: f, src: src, decls: map[string]bool{}}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			fn := &goFunc{key: d.Name.Name, name: d.Name.Name, decl: d,
				from: fset.PositionFor(d.Pos(), false).Line, to: fset.PositionFor(d.End(), false).Line}
			if d.Recv != nil && len(d.Recv.List) == 1 {
				fn.key = typeName(d.Recv.List[0].Type) + "." + d.Name.Name
			}
			if d.Body != nil {
				for l := fset.PositionFor(d.Body.Lbrace, false).Line + 1; l < fset.PositionFor(d.Body.Rbrace, false).Line && l <= len(lines); l++ {
					if t := normLine(lines[l-1]); t != "" && !rePunct.MatchString(t) {
						fn.body = append(fn.body, t)
					}
				}
			}
			fn.delegates = delegates(d.Body)
			g.funcs = append(g.funcs, fn)
			if d.Recv == nil {
				g.decls[d.Name.Name] = true
			} else {
				g.decls[fn.key] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					g.decls[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							g.decls[n.Name] = true
						}
					}
				}
			}
		}
	}
	return g
}

// delegates reports whether a body is one call, returned or not, given
// only names, fields and literals, or returns a field as it is (a getter:
// `return c.connectionGood`).
func delegates(b *ast.BlockStmt) bool {
	if b == nil || len(b.List) != 1 {
		return false
	}
	var call ast.Expr
	switch s := b.List[0].(type) {
	case *ast.ReturnStmt:
		if len(s.Results) == 1 {
			call = s.Results[0]
		}
		if _, ok := call.(*ast.SelectorExpr); ok {
			return true
		}
	case *ast.ExprStmt:
		call = s.X
	}
	c, ok := call.(*ast.CallExpr)
	if !ok {
		return false
	}
	for _, a := range c.Args {
		switch a.(type) {
		case *ast.Ident, *ast.BasicLit, *ast.SelectorExpr:
		default:
			return false
		}
	}
	return true
}

// text returns the source of a node, its runs of white space made one
// space.
func (g *goSource) text(n ast.Node) string {
	from, to := g.fset.PositionFor(n.Pos(), false).Offset, g.fset.PositionFor(n.End(), false).Offset
	if from < 0 || to > len(g.src) || from > to {
		return ""
	}
	return normLine(g.src[from:to])
}

// lines returns the first and last line of a node.
func (g *goSource) lines(n ast.Node) (from, to int) {
	return g.fset.PositionFor(n.Pos(), false).Line, g.fset.PositionFor(n.End(), false).Line
}

// funcAt returns the function declared across line, or nil.
func (g *goSource) funcAt(line int) *goFunc {
	for _, f := range g.funcs {
		if line >= f.from && line <= f.to {
			return f
		}
	}
	return nil
}

// funcByKey returns the function of key, or nil.
func (g *goSource) funcByKey(key string) *goFunc {
	if g == nil {
		return nil
	}
	for _, f := range g.funcs {
		if f.key == key {
			return f
		}
	}
	return nil
}

// callName is the name a call calls: f for f(), Sel for x.Sel().
func callName(c *ast.CallExpr) string {
	switch fn := c.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	case *ast.IndexExpr:
		return callName(&ast.CallExpr{Fun: fn.X})
	case *ast.IndexListExpr:
		return callName(&ast.CallExpr{Fun: fn.X})
	}
	return ""
}

// normLine is a line of code trimmed, its runs of white space made one
// space: what stays of a line moved to another indentation.
func normLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// similarBodies reports whether two function bodies are mostly the same
// lines: a function moved, perhaps lightly adapted to its new place.
func similarBodies(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	set := map[string]bool{}
	for _, l := range a {
		set[looseLine(l)] = true
	}
	same := 0
	for _, l := range b {
		if set[looseLine(l)] {
			same++
		}
	}
	return float64(same) >= 0.5*float64(max(len(a), len(b)))
}

// exercised reports whether the package's tests exercise f, a function
// of x's package at head: a test names it (a method on a value of its
// type, where syntax tells the type), or names a function of the package
// that calls it, directly or through others. The package is read at the
// first question, once (pkg).
func (r *review) exercised(x *file, f *goFunc) (bool, error) {
	p, err := r.pkg(path.Dir(x.path))
	if err != nil {
		return false, err
	}
	return p.covered[f.key], nil
}

// goPackage is what the specialist knows of a Go package at head: its
// functions, its types and results for resolving names, its tests, and
// the functions they exercise (by key).
type goPackage struct {
	tt      typeTable
	byKey   map[string]*goFunc
	byName  map[string][]*goFunc
	covered map[string]bool
	// testRefs are the uses of names in its tests, each once.
	testRefs []ref
}

// reaches reports whether refs reach f.
func (p *goPackage) reaches(refs []ref, f *goFunc) bool {
	for _, rf := range refs {
		if rf.name == f.name && slices.Contains(targets(rf, p.byKey, p.byName), f) {
			return true
		}
	}
	return false
}

// pkg returns the Go package in dir, read once. Only the files the change
// touches stay parsed for the review: of the package's other files the
// names of their functions are kept, and its tests are dropped once read.
func (r *review) pkg(dir string) (*goPackage, error) {
	if p, ok := r.pkgs[dir]; ok {
		return p, nil
	}
	tests, err := r.testPaths(dir)
	if err != nil {
		return nil, err
	}
	p := &goPackage{tt: typeTable{results: map[string]string{}, types: map[string]bool{}},
		byKey: map[string]*goFunc{}, byName: map[string][]*goFunc{}, covered: map[string]bool{}}
	if len(tests) > 0 {
		var dropped []*goFunc
		err := r.packageSources(dir, func(g *goSource, touched bool) {
			p.tt.addFile(g.file)
			for _, f := range g.funcs {
				p.byKey[f.key] = f
				p.byName[f.name] = append(p.byName[f.name], f)
			}
			if !touched {
				dropped = append(dropped, g.funcs...)
			}
		})
		if err != nil {
			return nil, err
		}
		srcs := make([]testSource, len(tests))
		for i, t := range tests {
			if srcs[i], err = r.testSource(t); err != nil {
				return nil, err
			}
			if srcs[i].g != nil {
				p.tt.addFile(srcs[i].g.file)
			}
		}
		var queue []*goFunc
		reach := func(refs []ref) {
			for _, rf := range refs {
				for _, g := range targets(rf, p.byKey, p.byName) {
					if !p.covered[g.key] {
						p.covered[g.key] = true
						queue = append(queue, g)
					}
				}
			}
		}
		seen := map[ref]bool{}
		for i := range srcs {
			refs := srcs[i].refs(p.tt)
			reach(refs)
			for _, rf := range refs {
				if !seen[rf] {
					seen[rf] = true
					p.testRefs = append(p.testRefs, rf)
				}
			}
			srcs[i] = testSource{}
		}
		for len(queue) > 0 {
			f := queue[0]
			queue = queue[1:]
			reach(p.tt.refsOf(f.decl, true))
		}
		// What is kept of a file the change does not touch is its
		// functions' names: their syntax goes.
		for _, f := range dropped {
			f.decl, f.body = nil, nil
		}
	}
	if r.pkgs == nil {
		r.pkgs = map[string]*goPackage{}
	}
	r.pkgs[dir] = p
	return p, nil
}

// packageSources calls fn with each source file of the Go package in dir
// at head, parsed, and whether the change touches it: all of them when
// the change's source can list them, else those the change touches. The
// files the change touches are parsed once for the review; the others
// are the caller's to keep or drop.
func (r *review) packageSources(dir string, fn func(g *goSource, touched bool)) error {
	seen := map[string]bool{}
	for _, x := range r.files {
		if x.eco.name == "go" && !x.test && x.f.Status != change.StatusDeleted && path.Dir(x.path) == dir {
			seen[x.path] = true
			if g := r.goHead(x); g != nil {
				fn(g, true)
			}
		}
	}
	listDir := dir
	if listDir == "." {
		listDir = ""
	}
	files, err := r.c.ListFiles(r.ctx, r.c.HeadSHA, listDir)
	if err != nil {
		if r.ctx.Err() != nil {
			return r.ctx.Err()
		}
		return nil
	}
	for _, p := range files {
		if path.Dir(p) != dir || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || seen[p] {
			continue
		}
		data, err := r.c.ReadFile(r.ctx, p)
		if err != nil {
			if r.ctx.Err() != nil {
				return r.ctx.Err()
			}
			continue
		}
		if g := parseGo(p, strings.Split(string(data), "\n")); g != nil {
			fn(g, false)
		}
	}
	return nil
}

// testSource is a test file: parsed, or, when it does not parse, the
// names it uses.
type testSource struct {
	g     *goSource
	names []string
}

// refs returns the uses of names in the test file: by syntax where it
// parses, else every name it uses, as if selected from a value of
// unknown type.
func (ts testSource) refs(tt typeTable) []ref {
	if ts.g == nil {
		out := make([]ref, len(ts.names))
		for i, n := range ts.names {
			out[i] = ref{name: n}
		}
		return out
	}
	var out []ref
	for _, f := range ts.g.funcs {
		out = append(out, tt.refsOf(f.decl, false)...)
	}
	return out
}

// testPaths returns the tests of the package in dir at head: all its
// _test.go files when the change's source can list them, else those the
// change touches.
func (r *review) testPaths(dir string) ([]string, error) {
	tests, known, err := r.packageTests(dir)
	if err != nil {
		return nil, err
	}
	if !known {
		tests = nil
		for _, x := range r.files {
			if x.eco.name == "go" && x.test && x.f.NewPath != "" && path.Dir(x.f.NewPath) == dir {
				tests = append(tests, x.f.NewPath)
			}
		}
	}
	return tests, nil
}

// testSource reads the test file at p at head; an empty one when it
// cannot be read. A test file the change touches is parsed once for the
// review; the package's others are read for what they call and dropped
// (nats-server's server package has 7.9 MB of them, 86 MB of syntax
// kept through the whole review when they were kept too).
func (r *review) testSource(p string) (testSource, error) {
	data, err := r.c.ReadFile(r.ctx, p)
	if err != nil {
		return testSource{}, r.ctx.Err()
	}
	lines := strings.Split(string(data), "\n")
	var g *goSource
	if r.touches(p) {
		g = r.goParsed("head:"+p, p, lines)
	} else {
		g = parseGo(p, lines)
	}
	if g != nil {
		return testSource{g: g}, nil
	}
	var names []string
	for _, l := range mask(string(data), syntaxC) {
		names = append(names, reIdent.FindAllString(l, -1)...)
	}
	return testSource{names: names}, nil
}

// goHead and goBase return x parsed at head and at base, nil when it is
// not there or does not parse.
func (r *review) goHead(x *file) *goSource { return r.goParsed("head:"+x.path, x.path, x.head) }

func (r *review) goBase(x *file) *goSource {
	return r.goParsed("base:"+x.f.OldPath, x.f.OldPath, r.baseLines(x))
}

func (r *review) goParsed(key, name string, lines []string) *goSource {
	if g, ok := r.parsed[key]; ok {
		return g
	}
	if r.parsed == nil {
		r.parsed = map[string]*goSource{}
	}
	g := parseGo(name, lines)
	r.parsed[key] = g
	return g
}

// removedDecls returns the names that the change's Go source declared at
// base and declares nowhere at head: functions, methods (by name), types,
// constants and variables removed or renamed.
// shrunkFuncs returns the names of the Go functions of the change's
// source files that it took logic out of: at least three lines deleted
// within the function, and its body at least three lines shorter.
func (r *review) shrunkFuncs() map[string]bool {
	out := map[string]bool{}
	for _, y := range r.files {
		if y.eco.name != "go" || y.test || y.f.Status != change.StatusModified {
			continue
		}
		b := r.goBase(y)
		if b == nil {
			continue
		}
		for _, fn := range b.funcs {
			net := 0
			for _, h := range y.f.Hunks {
				for _, l := range h.Lines {
					if l.Kind == change.KindDeleted && l.OldNumber >= fn.from && l.OldNumber <= fn.to && strings.TrimSpace(l.Text) != "" {
						net++
					}
				}
			}
			if net < 3 {
				continue
			}
			if h := r.goParsed("head:"+y.path, y.path, r.headLines(y)); h != nil {
				for _, hf := range h.funcs {
					if hf.key == fn.key && len(fn.body)-len(hf.body) >= 3 {
						out[fn.name] = true
					}
				}
			}
		}
	}
	return out
}

func (r *review) removedDecls() map[string]bool {
	if r.goneDecls != nil {
		return r.goneDecls
	}
	was, is := map[string]bool{}, map[string]bool{}
	for _, y := range r.files {
		if y.eco.name != "go" || y.test {
			continue
		}
		if b := r.goBase(y); b != nil {
			for n := range b.decls {
				was[n] = true
			}
			for _, f := range b.funcs {
				was[f.name] = true
			}
		}
		if y.f.Status != change.StatusDeleted {
			if h := r.goParsed("head:"+y.path, y.path, r.headLines(y)); h != nil {
				for n := range h.decls {
					is[n] = true
				}
				for _, f := range h.funcs {
					is[f.name] = true
				}
			}
		}
	}
	r.goneDecls = map[string]bool{}
	for n := range was {
		bare := n[strings.LastIndexByte(n, '.')+1:]
		switch {
		case !is[n] && !is[bare]:
			r.goneDecls[bare] = true
		case !is[n]:
			r.goneDecls[n] = true // a method gone, its name still used elsewhere
		}
	}
	return r.goneDecls
}

// testsRemovedCode reports whether the Go test n, removed from x, used
// something the change removes from the source: the test went with the
// code it tested.
func (r *review) testsRemovedCode(x *file, n string) bool {
	if x.eco.name != "go" {
		return false
	}
	gone := maps.Clone(r.removedDecls())
	// A function the change kept but took logic out of counts too: the
	// test checked what it no longer does (filebrowser fb6aeba moved the
	// scope collision check out of CreateUserHome into the store, and
	// TestCreateUserHomeRejectsCollision with it).
	for name := range r.shrunkFuncs() {
		gone[name] = true
	}
	if len(gone) == 0 {
		return false
	}
	base := r.goBase(x)
	if base == nil {
		return false
	}
	for _, d := range base.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != n {
			continue
		}
		used := map[string]bool{}
		identsOf(fd.Body, used)
		for u := range used {
			if gone[u] {
				return true
			}
		}
		// A method gone whose name the test uses, on a type the test
		// names (TestResponse_Flush, in response_test.go, calls
		// res.Flush() of the Response whose Flush is gone).
		for g := range gone {
			recv, name, ok := strings.Cut(g, ".")
			if ok && used[name] && (used[recv] || strings.Contains(n, recv) || subject(x.path) == strings.ToLower(recv)) {
				return true
			}
		}
	}
	return false
}

// touches reports whether the change touches the file at p (at head).
func (r *review) touches(p string) bool {
	for _, x := range r.files {
		if x.path == p {
			return true
		}
	}
	return false
}
