package tests

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// goBodies returns whether a line of a Go file lies inside a function
// body; when the file does not parse, every line does.
func goBodies(name, src string) func(int) bool {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return func(int) bool { return true }
	}
	type span struct{ from, to int }
	var spans []span
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				spans = append(spans, span{fset.PositionFor(n.Body.Lbrace, false).Line, fset.PositionFor(n.Body.Rbrace, false).Line})
			}
			return false
		case *ast.FuncLit:
			spans = append(spans, span{fset.PositionFor(n.Body.Lbrace, false).Line, fset.PositionFor(n.Body.Rbrace, false).Line})
			return false
		}
		return true
	})
	return func(line int) bool {
		for _, s := range spans {
			if line >= s.from && line <= s.to {
				return true
			}
		}
		return false
	}
}

// export is an exported function or method a Go file declares.
type export struct {
	key  string // "Name" or "Recv.Name"
	name string
	line int
}

// interfaceMethods are methods that satisfy well-known interfaces: they
// are exercised through the interface (fmt, json, sort, io, http), and a
// test rarely names them.
var interfaceMethods = []string{
	"String", "GoString", "Error", "Unwrap", "Is", "As", "Format",
	"MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText", "MarshalBinary", "UnmarshalBinary",
	"MarshalYAML", "UnmarshalYAML", "Scan", "Value", "LogValue",
	"Len", "Less", "Swap", "Read", "Write", "Close", "ReadFrom", "WriteTo", "Seek",
	"ServeHTTP", "RoundTrip", "Kind", "Timeout", "Temporary",
}

// goExports returns the exported functions and methods of exported types
// that src declares, or nil when it does not parse. Package main exports
// nothing.
func goExports(name string, src []byte) []export {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil || f.Name.Name == "main" {
		return nil
	}
	var out []export
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || !fd.Name.IsExported() {
			continue
		}
		e := export{key: fd.Name.Name, name: fd.Name.Name, line: fset.PositionFor(fd.Name.Pos(), false).Line}
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			recv := typeName(fd.Recv.List[0].Type)
			if recv == "" || !ast.IsExported(recv) || slices.Contains(interfaceMethods, fd.Name.Name) {
				continue
			}
			e.key = recv + "." + fd.Name.Name
		}
		out = append(out, e)
	}
	return out
}

// untestedExports finds exported Go functions and methods the change adds
// that no test of their package (nor any test the change touches) names:
// new in the repository (not moved from elsewhere in the change), not
// reached by the package's tests through tested code, and not a mere
// delegation to another call.
// Files with an untested-change finding are passed over: that finding
// already says the file's new code has no test.
func (r *review) untestedExports(skip map[string]bool) error {
	byDir := map[string][]*file{}
	for _, x := range r.files {
		if x.eco.name != "go" || x.test || x.f.Status == change.StatusDeleted || skip[x.path] || !isSource(x.eco, x.path) {
			continue
		}
		byDir[path.Dir(x.path)] = append(byDir[path.Dir(x.path)], x)
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)

	// The tests the change touches, anywhere: an export tested from
	// another package's test counts.
	var changedTests []string
	for _, x := range r.files {
		if x.eco.name == "go" && x.test && x.f.NewPath != "" {
			changedTests = append(changedTests, x.f.NewPath)
		}
	}

	for _, dir := range dirs {
		var news []export
		var owners []*file
		for _, x := range byDir[dir] {
			head := r.goHead(x)
			for _, e := range r.newExports(x) {
				fn := head.funcByKey(e.key)
				if !x.f.Changed(e.line) || r.movedFunc(x, fn) {
					continue
				}
				if fn != nil {
					if fn.delegates {
						continue
					}
					tested, err := r.exercised(x, fn)
					if err != nil {
						return err
					}
					if tested {
						continue
					}
				}
				news = append(news, e)
				owners = append(owners, x)
			}
		}
		if len(news) == 0 {
			continue
		}
		tests, known, err := r.packageTests(dir)
		if err != nil {
			return err
		}
		if !known {
			continue // the package's other tests cannot be seen: say nothing
		}
		for _, p := range changedTests {
			if !slices.Contains(tests, p) {
				tests = append(tests, p)
			}
		}
		pkg, err := r.pkg(dir)
		if err != nil {
			return err
		}
		// The package's own tests were read by pkg; the changed tests
		// of other packages are read here.
		var srcs []string
		refs := slices.Clone(pkg.testRefs)
		for _, p := range tests {
			data, err := r.c.ReadFile(r.ctx, p)
			if err != nil {
				if r.ctx.Err() != nil {
					return r.ctx.Err()
				}
				continue
			}
			srcs = append(srcs, string(data))
			if path.Dir(p) != dir {
				ts, err := r.testSource(p)
				if err != nil {
					return err
				}
				refs = append(refs, ts.refs(pkg.tt)...)
			}
		}
		for i, e := range news {
			// A method is referred to on a value of its type, where
			// syntax tells the type; a function by its name.
			if fn := pkg.byKey[e.key]; fn != nil && e.key != e.name {
				if pkg.reaches(refs, fn) {
					continue
				}
			} else if re := regexp.MustCompile(`\b` + regexp.QuoteMeta(e.name) + `\b`); slices.ContainsFunc(srcs, re.MatchString) {
				continue
			}
			what := "function " + e.name
			if e.key != e.name {
				what = "method " + e.key
			}
			r.add(specialist.Finding{
				Rule: RuleUntestedExport, Severity: sevExport, Path: owners[i].path, Line: e.line,
				Headline: fmt.Sprintf("New exported %s is not referenced by any test", what),
				Body: fmt.Sprintf("No test of package %s refers to %s, so nothing checks what it does. "+
					"Add a test that calls it, in %s.", dirName(owners[i].path), e.name, suggestTest(owners[i].eco, owners[i].path)),
			})
		}
	}
	return nil
}

// movedFunc reports whether fn, new in x, is moved rather than written
// anew: a function of the same name that the change removes or renames
// (from any of its Go files, in any package, with any receiver) had
// mostly the same body.
func (r *review) movedFunc(x *file, fn *goFunc) bool {
	if fn == nil {
		return false
	}
	for _, y := range r.files {
		if y.eco.name != "go" || y.test || y.f.OldPath == "" {
			continue
		}
		base := r.goBase(y)
		if base == nil {
			continue
		}
		var head *goSource
		if y.f.Status != change.StatusDeleted {
			head = r.goHead(y)
		}
		for _, old := range base.funcs {
			// Exported or unexported on the way: reverse becomes Reverse.
			if !strings.EqualFold(old.name, fn.name) || (y == x && old.key == fn.key) {
				continue
			}
			if head != nil && head.funcByKey(old.key) != nil && y != x {
				continue // still there: a new function of the same name
			}
			if similarBodies(old.body, fn.body) {
				return true
			}
		}
	}
	return false
}

// baseLines and headLines return a file's lines at base and at head,
// read if the diff did not need them; nil where the file is not.
func (r *review) baseLines(x *file) []string {
	return r.lazyLines(x, &x.base, &x.baseMask, r.c.BaseSHA, x.f.OldPath)
}

func (r *review) headLines(x *file) []string {
	if x.f.Status == change.StatusDeleted {
		return x.head
	}
	return r.lazyLines(x, &x.head, &x.headMask, r.c.HeadSHA, x.f.NewPath)
}

func (r *review) lazyLines(x *file, lines, masked *[]string, rev, p string) []string {
	if *lines != nil || p == "" {
		return *lines
	}
	raw, m, err := r.read(rev, p, x.eco)
	if err != nil {
		return nil
	}
	*lines, *masked = raw, m
	return raw
}

// newExports returns the exports of a Go file at head that it did not
// have at base.
func (r *review) newExports(x *file) []export {
	if x.head == nil {
		return nil
	}
	head := goExports(x.path, []byte(strings.Join(x.head, "\n")))
	if x.f.OldPath == "" || len(head) == 0 {
		return head
	}
	base := r.baseLines(x)
	if base == nil {
		return nil
	}
	old := map[string]bool{}
	for _, e := range goExports(x.f.OldPath, []byte(strings.Join(base, "\n"))) {
		old[e.key] = true
	}
	var out []export
	for _, e := range head {
		if !old[e.key] {
			out = append(out, e)
		}
	}
	return out
}

// packageTests returns the paths of the _test.go files in dir at head, and
// whether that list is complete: when the change's source can list
// directories it is; otherwise only for a directory the change creates,
// whose files are all in the change.
func (r *review) packageTests(dir string) ([]string, bool, error) {
	isTest := func(p string) bool { return path.Dir(p) == dir && strings.HasSuffix(p, "_test.go") }
	listDir := dir
	if listDir == "." {
		listDir = ""
	}
	files, err := r.c.ListFiles(r.ctx, r.c.HeadSHA, listDir)
	if !errors.Is(err, change.ErrNoListing) {
		if err != nil {
			if r.ctx.Err() != nil {
				return nil, false, r.ctx.Err()
			}
			return nil, false, nil
		}
		var out []string
		for _, p := range files {
			if isTest(p) {
				out = append(out, p)
			}
		}
		return out, true, nil
	}
	if dir == "." {
		return nil, false, nil
	}
	existed, err := r.exists(r.c.BaseSHA, dir)
	if err != nil || existed {
		return nil, false, err
	}
	var out []string
	for _, f := range r.c.Files {
		if isTest(f.NewPath) {
			out = append(out, f.NewPath)
		}
	}
	for _, s := range r.c.Skipped {
		if isTest(s.File.NewPath) {
			out = append(out, s.File.NewPath)
		}
	}
	return out, true, nil
}
