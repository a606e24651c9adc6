package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
)

// The unchanged code a changed file's prompt section may end with: the
// definitions its changed code uses and, for Go, the callers of its changed
// functions. Everything is read from git objects at the change's head
// through change.Change, never from a working tree, and nothing is built,
// loaded or run. The section is reference for the model, not part of the
// diff: its lines are written "  12 | code", unlike a hunk's "+" and " ",
// and a finding on one is dropped like any finding off the changed lines.

const (
	// contextHeader opens the section; the system prompt names it.
	contextHeader = "Context (unchanged code, for reference; do not report on it):\n"

	// contextShare is the share, in percent, of a request's budget the
	// section may take, so that a small context window spends itself on
	// the diff.
	contextShare = 25

	// maxContextFiles bounds the source files of one directory read for
	// the section: a package (or directory) with more gets no section.
	maxContextFiles = 200
	// maxContextBytes bounds their total size, for the same reason: it
	// bounds what is read, parsed and type-checked for one package.
	maxContextBytes = 2 << 20
	// maxContextReadBytes bounds what the sections of one change read in
	// all, however many directories it touches.
	maxContextReadBytes = 16 << 20

	// maxShortBody is how many lines a function may have to be shown
	// whole as a definition; a longer one shows its doc and signature.
	maxShortBody = 12
	// maxDeclLines bounds any one definition shown.
	maxDeclLines = 30
	// maxCallers is how many call sites are shown for each changed
	// function.
	maxCallers = 3
	// maxDefinitions bounds the definitions shown for one file.
	maxDefinitions = 20
	// symbolLines is how many lines a definition found by the symbol index
	// (not Go) shows, its own line included.
	symbolLines = 6
)

// errNoImports is what the type checker's importer answers: no
// dependency of the package is ever read.
var errNoImports = errors.New("imports are not resolved for the prompt's context")

// codeContext renders the context sections of one request plan's files.
// It remembers each directory's package, so that several changed files of
// one package cost one type check.
type codeContext struct {
	c    *change.Change
	pkgs map[string]*goPackage
	// read is what the sections have read so far.
	read int
}

func newCodeContext(c *change.Change) *codeContext {
	return &codeContext{c: c, pkgs: map[string]*goPackage{}}
}

// render returns the context section for f, whose head content is src,
// within limit characters; "" when there is none or it has no room.
// shown are the lines of f the section already shows (hunks and whole
// functions): a definition there is not repeated.
func (cc *codeContext) render(ctx context.Context, f *change.File, src []byte, shown map[int]bool, limit int) string {
	if limit <= len(contextHeader) {
		return ""
	}
	var items []string
	switch p := f.Path(); {
	case strings.HasSuffix(p, ".go"):
		items = cc.goItems(ctx, f, shown)
	case symbolLanguage(p) != "":
		items = cc.symbolItems(ctx, f, src, shown)
	}
	var b strings.Builder
	for _, it := range items {
		// An item that does not fit is left out; a smaller one after it
		// may still fit.
		if len(contextHeader)+b.Len()+len(it) <= limit {
			b.WriteString(it)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return contextHeader + b.String()
}

// contextLine writes one line of the section: number, bar, text. Text
// that is not UTF-8 is mended, since the request is JSON.
func contextLine(b *strings.Builder, n int, text string) {
	text = strings.ToValidUTF8(strings.TrimSuffix(text, "\r"), "\uFFFD")
	fmt.Fprintf(b, "%6d | %s\n", n, text)
}

// changedLines are f's added or modified lines at head.
func changedLines(f *change.File) map[int]bool {
	out := map[int]bool{}
	for _, n := range f.AddedLines() {
		out[n] = true
	}
	return out
}

// listDir lists dir ("." for the root) at the change's head.
func (cc *codeContext) listDir(ctx context.Context, dir string) ([]string, error) {
	if dir == "." {
		dir = ""
	}
	return cc.c.ListFiles(ctx, cc.c.HeadSHA, dir)
}

// readSources reads the files of paths that keep accepts, at head, each
// at most maxWholeFuncsSource bytes (a larger one is left out), and
// reports false when they are more than maxContextFiles or
// maxContextBytes, or the change's sections have read
// maxContextReadBytes. A symbolic link is a blob holding the link's
// target: it is read as that text, never followed.
func (cc *codeContext) readSources(ctx context.Context, paths []string, keep func(string) bool) (map[string][]byte, bool) {
	var want []string
	for _, p := range paths {
		if keep(p) {
			want = append(want, p)
		}
	}
	if len(want) > maxContextFiles {
		return nil, false
	}
	out := map[string][]byte{}
	total := 0
	for _, p := range want {
		if ctx.Err() != nil {
			return nil, false
		}
		data, err := cc.c.ReadFile(ctx, p)
		if err != nil || len(data) > maxWholeFuncsSource {
			continue
		}
		total += len(data)
		cc.read += len(data)
		if total > maxContextBytes || cc.read > maxContextReadBytes {
			return nil, false
		}
		out[p] = data
	}
	return out, true
}

// goPackage is a package of a changed Go file, parsed and type-checked at
// head.
type goPackage struct {
	fset  *token.FileSet
	files map[string]*ast.File // by path
	order []string
	src   map[string][]byte
	info  *types.Info
	// decls finds the declaration of a package-level object or method by
	// the position of its name.
	decls map[token.Pos]goDecl
}

// goDecl is one declaration a name is defined by: a function, or one
// spec of a general declaration.
type goDecl struct {
	path string
	fn   *ast.FuncDecl
	gen  *ast.GenDecl
	spec ast.Spec
}

// goPackageOf returns the package f belongs to: the files of its
// directory at head with its package clause, tests only when f is a
// test. Files a linux/amd64 build with cgo would exclude (by name or
// build constraint) are left out, so that a pair like x_linux.go and
// x_windows.go does not define a name twice. Imports are not resolved:
// the checker goes on past every error they cause, and the package's own
// names are what the section shows. nil when the package is over the
// bounds or f does not parse.
func (cc *codeContext) goPackageOf(ctx context.Context, f *change.File) *goPackage {
	p := f.Path()
	dir := path.Dir(p)
	test := strings.HasSuffix(p, "_test.go")
	// The package clause is all a key needs; the file is parsed whole
	// with the others.
	src, err := cc.c.ReadFile(ctx, p)
	if err != nil || len(src) > maxWholeFuncsSource {
		return nil
	}
	head, _ := parser.ParseFile(token.NewFileSet(), p, src, parser.PackageClauseOnly)
	if head == nil || head.Name == nil {
		return nil
	}
	name := head.Name.Name
	key := fmt.Sprintf("%s\x00%s\x00%t", dir, name, test)
	if pkg, ok := cc.pkgs[key]; ok {
		return pkg
	}
	cc.pkgs[key] = nil
	paths, err := cc.listDir(ctx, dir)
	if err != nil {
		return nil
	}
	srcs, ok := cc.readSources(ctx, paths, func(q string) bool {
		return path.Dir(q) == dir && strings.HasSuffix(q, ".go") && (test || !strings.HasSuffix(q, "_test.go"))
	})
	if !ok {
		return nil
	}
	// MatchFile reads a file's header through OpenFile: from what was
	// read at head, never from disk.
	bctx := build.Default
	bctx.GOOS, bctx.GOARCH, bctx.CgoEnabled = "linux", "amd64", true
	bctx.OpenFile = func(q string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(srcs[path.Join(dir, path.Base(q))])), nil
	}
	pkg := &goPackage{fset: token.NewFileSet(), files: map[string]*ast.File{}, src: srcs, decls: map[token.Pos]goDecl{}}
	for _, q := range slices.Sorted(maps.Keys(srcs)) {
		if q != p {
			if ok, err := bctx.MatchFile(dir, path.Base(q)); err != nil || !ok {
				continue
			}
		}
		file, _ := parser.ParseFile(pkg.fset, q, srcs[q], parser.ParseComments|parser.SkipObjectResolution)
		if file == nil || file.Name == nil || file.Name.Name != name {
			continue
		}
		pkg.files[q] = file
		pkg.order = append(pkg.order, q)
	}
	if pkg.files[p] == nil {
		return nil
	}
	pkg.info = &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{
		Importer:    importerFunc(func(string) (*types.Package, error) { return nil, errNoImports }),
		FakeImportC: true,
		Error:       func(error) {},
	}
	files := make([]*ast.File, 0, len(pkg.order))
	for _, q := range pkg.order {
		files = append(files, pkg.files[q])
	}
	if !typeCheck(ctx, conf, dir, pkg.fset, files, pkg.info) {
		return nil
	}
	for _, q := range pkg.order {
		for _, d := range pkg.files[q].Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				pkg.decls[d.Name.Pos()] = goDecl{path: q, fn: d}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						pkg.decls[s.Name.Pos()] = goDecl{path: q, gen: d, spec: s}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							pkg.decls[n.Pos()] = goDecl{path: q, gen: d, spec: s}
						}
					}
				}
			}
		}
	}
	cc.pkgs[key] = pkg
	return pkg
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// goItems returns the section's items for the Go file f: the
// definitions its changed functions use, then their callers.
func (cc *codeContext) goItems(ctx context.Context, f *change.File, shown map[int]bool) []string {
	pkg := cc.goPackageOf(ctx, f)
	if pkg == nil {
		return nil
	}
	p := f.Path()
	file := pkg.files[p]
	changed := changedLines(f)
	line := func(pos token.Pos) int { return pkg.fset.Position(pos).Line }
	touches := func(n ast.Node, lines map[int]bool) bool {
		for l := line(n.Pos()); l <= line(n.End()); l++ {
			if lines[l] {
				return true
			}
		}
		return false
	}

	// The changed functions, and what they define.
	var funcs []*ast.FuncDecl
	defined := map[types.Object]bool{}
	for _, d := range file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && touches(fd, changed) {
			funcs = append(funcs, fd)
			if obj := pkg.info.Defs[fd.Name]; obj != nil {
				defined[obj] = true
			}
		}
	}
	if len(funcs) == 0 {
		return nil
	}

	// What they use that the package defines elsewhere, in order of first
	// use.
	var items []string
	seen := map[token.Pos]bool{}
	for _, fd := range funcs {
		ast.Inspect(fd, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || len(items) >= maxDefinitions {
				return true
			}
			obj := pkg.info.Uses[id]
			if obj == nil || obj.Pkg() == nil || defined[obj] || seen[obj.Pos()] {
				return true
			}
			d, ok := pkg.decls[obj.Pos()]
			if !ok {
				// A local, a field, a parameter: not a package-level name.
				return true
			}
			seen[obj.Pos()] = true
			node := d.node()
			if d.path == p && (touches(node, changed) || covered(line(node.Pos()), line(node.End()), shown)) {
				// In the diff, or shown whole already.
				return true
			}
			items = append(items, pkg.renderDecl(d, id.Name))
			return true
		})
	}

	// Where the package calls them.
	for _, fd := range funcs {
		obj := pkg.info.Defs[fd.Name]
		if obj == nil {
			continue
		}
		n := 0
		for _, q := range pkg.order {
			for _, d := range pkg.files[q].Decls {
				caller, ok := d.(*ast.FuncDecl)
				if !ok || n >= maxCallers || (q == p && touches(caller, changed)) {
					continue
				}
				ast.Inspect(caller, func(x ast.Node) bool {
					call, ok := x.(*ast.CallExpr)
					if !ok || n >= maxCallers {
						return n < maxCallers
					}
					var id *ast.Ident
					switch fun := ast.Unparen(call.Fun).(type) {
					case *ast.Ident:
						id = fun
					case *ast.SelectorExpr:
						id = fun.Sel
					case *ast.IndexExpr: // a generic function instantiated
						if x, ok := fun.X.(*ast.Ident); ok {
							id = x
						}
					}
					if id == nil || pkg.info.Uses[id] != obj {
						return true
					}
					l := line(call.Pos())
					var b strings.Builder
					fmt.Fprintf(&b, "-- %s is called from %s:%d, in func %s:\n", fd.Name.Name, shownPath(q), l, funcName(caller))
					contextLine(&b, l, lineOf(pkg.src[q], l))
					items = append(items, b.String())
					n++
					return true
				})
			}
		}
	}
	return items
}

// node is the syntax a declaration shows.
func (d goDecl) node() ast.Node {
	if d.fn != nil {
		return d.fn
	}
	if len(d.gen.Specs) == 1 {
		return d.gen
	}
	return d.spec
}

// renderDecl renders d, found as the definition of name: its doc comment
// and signature, a short function whole, a type or value declaration up
// to maxDeclLines.
func (pkg *goPackage) renderDecl(d goDecl, name string) string {
	line := func(pos token.Pos) int { return pkg.fset.Position(pos).Line }
	node := d.node()
	start, end := line(node.Pos()), line(node.End())
	var doc *ast.CommentGroup
	kind := "func"
	switch {
	case d.fn != nil:
		doc = d.fn.Doc
		if d.fn.Recv != nil {
			kind = "method"
		}
		if d.fn.Body != nil && end-start+1 > maxShortBody {
			end = line(d.fn.Body.Lbrace)
		}
	case d.gen == node:
		doc = d.gen.Doc
		kind = d.gen.Tok.String()
	default:
		kind = d.gen.Tok.String()
		switch s := d.spec.(type) {
		case *ast.TypeSpec:
			doc = s.Doc
		case *ast.ValueSpec:
			doc = s.Doc
		}
	}
	if doc != nil {
		start = line(doc.Pos())
	}
	end = min(end, start+maxDeclLines-1)
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s %s, defined at %s:%d:\n", kind, name, shownPath(d.path), line(node.Pos()))
	src := pkg.src[d.path]
	for n := start; n <= end; n++ {
		contextLine(&b, n, lineOf(src, n))
	}
	if full := line(node.End()); end < full {
		fmt.Fprintf(&b, "%6s | ... (%d more lines, not shown)\n", "", full-end)
	}
	return b.String()
}

// funcName is "F" for a function and "T.M" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// covered reports whether every line from start to end is in shown.
func covered(start, end int, shown map[int]bool) bool {
	for n := start; n <= end; n++ {
		if !shown[n] {
			return false
		}
	}
	return true
}

// lineOf returns line n (from 1) of src, "" past its end.
func lineOf(src []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return string(src)
}

// The symbol index for languages other than Go is a few regular
// expressions over definition lines, not a parser: Go's standard library
// has no Python or JavaScript parser, the analyzers that parse them do so
// for their own checks and not over the head of every file of a directory,
// and what the model needs is where a called name is defined and its
// first lines, which a definition line gives. A miss (a definition split
// over lines, a name bound some other way) only means less context; it
// can never put a finding anywhere, since the section is reference only.
var (
	pythonDef = regexp.MustCompile(`^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)`)
	jsDef     = regexp.MustCompile(`^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:declare[ \t]+)?(?:(?:async[ \t]+)?function[ \t]*\*?[ \t]*|(?:abstract[ \t]+)?class[ \t]+|interface[ \t]+|type[ \t]+|(?:const|let|var)[ \t]+)([A-Za-z_$][\w$]*)`)
	// calledName finds a name followed by "(", a call or a constructor.
	calledName = regexp.MustCompile(`([A-Za-z_$][\w$]*)[ \t]*\(`)
)

// symbolLanguage names the symbol index's language of path, "" for none.
func symbolLanguage(p string) string {
	switch path.Ext(p) {
	case ".py", ".pyi":
		return "python"
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return "js"
	}
	return ""
}

// notCalls are keywords and builtins written before "(" that name no
// definition worth showing.
var notCalls = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "catch": true, "return": true, "function": true,
	"typeof": true, "await": true, "super": true, "require": true, "import": true, "elif": true, "and": true,
	"or": true, "not": true, "in": true, "print": true, "len": true, "str": true, "int": true, "isinstance": true,
	"def": true, "class": true, "with": true, "assert": true, "lambda": true, "yield": true, "new": true,
}

// symbolItems returns the section's items for a Python or JavaScript
// file: where the names its changed lines call are defined, in the same
// file outside what the section shows or in another file of its
// directory of the same language.
func (cc *codeContext) symbolItems(ctx context.Context, f *change.File, src []byte, shown map[int]bool) []string {
	p := f.Path()
	lang := symbolLanguage(p)
	changed := changedLines(f)
	var called []string
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind != change.KindAdded {
				continue
			}
			for _, m := range calledName.FindAllStringSubmatch(l.Text, -1) {
				if name := m[1]; !notCalls[name] && !slices.Contains(called, name) {
					called = append(called, name)
				}
			}
		}
	}
	if len(called) == 0 {
		return nil
	}
	srcs := map[string][]byte{p: src}
	if paths, err := cc.listDir(ctx, path.Dir(p)); err == nil {
		others, ok := cc.readSources(ctx, paths, func(q string) bool {
			return q != p && path.Dir(q) == path.Dir(p) && symbolLanguage(q) == lang
		})
		if ok {
			for q, data := range others {
				srcs[q] = data
			}
		}
	}
	def := pythonDef
	if lang == "js" {
		def = jsDef
	}
	// The changed file first, then the others by path.
	order := append([]string{p}, slices.Sorted(func(yield func(string) bool) {
		for q := range srcs {
			if q != p && !yield(q) {
				return
			}
		}
	})...)
	defs := map[string][]string{}
	for _, q := range order {
		lines := strings.Split(string(srcs[q]), "\n")
		for i, text := range lines {
			m := def.FindStringSubmatch(text)
			if m == nil || !slices.Contains(called, m[1]) || len(defs[m[1]]) >= 2 {
				continue
			}
			n := i + 1
			if q == p && (changed[n] || shown[n]) {
				continue
			}
			defs[m[1]] = append(defs[m[1]], renderSymbol(q, lines, i, m[1]))
		}
	}
	var items []string
	for _, name := range called {
		items = append(items, defs[name]...)
		if len(items) >= maxDefinitions {
			break
		}
	}
	return items
}

// renderSymbol renders the definition of name on line i (from 0) of
// lines and up to symbolLines-1 lines after it, ending early where the
// indentation falls back to the definition's (the line is shown when it
// closes the definition, like "}").
func renderSymbol(p string, lines []string, i int, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s, defined at %s:%d:\n", name, shownPath(p), i+1)
	indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " \t"))
	end := i
	for j := i + 1; j < len(lines) && j < i+symbolLines; j++ {
		trimmed := strings.TrimLeft(lines[j], " \t")
		if strings.TrimSpace(trimmed) == "" {
			continue
		}
		if len(lines[j])-len(trimmed) <= indent {
			if strings.HasPrefix(trimmed, "}") || strings.HasPrefix(trimmed, ")") {
				end = j
			}
			break
		}
		end = j
	}
	// Blank lines after the last one shown are left out.
	for j := i; j <= end; j++ {
		contextLine(&b, j+1, lines[j])
	}
	return b.String()
}

// shownLines are the lines of f's head its hunks show.
func shownLines(f *change.File) map[int]bool {
	out := map[int]bool{}
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind != change.KindDeleted {
				out[l.NewNumber] = true
			}
		}
	}
	return out
}
