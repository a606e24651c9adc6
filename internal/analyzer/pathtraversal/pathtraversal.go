// Package pathtraversal reports a name from outside the program, an
// archive entry's name or a URL query value, joined into a file path that
// is then created, written or opened, with nothing on the way checking
// that the result stays inside the directory it was joined to: zip slip
// and its cousins (CWE-22).
//
// gosec's G305 sees the classic form, `filepath.Join(dest, f.Name)` with
// f a *zip.File or *tar.Header in one function. Real extractors spread it
// over several: the entry's header comes through an interface and a type
// assertion, the path is joined in one method and written in a helper,
// and the check (`strings.HasPrefix(path, dest)`, `filepath.Rel`,
// `filepath.IsLocal`, a `..` test, a CheckPath method of the package) sits
// in the caller. This analyzer follows the name through the package's own
// functions (into callees' parameters, out of their results, up to the
// callers that may have checked it) on SSA, and reports where the name
// enters the path.
package pathtraversal

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"
)

// Analyzer reports untrusted names joined into file paths that are used
// with no check that they stay inside their directory.
var Analyzer = &analysis.Analyzer{
	Name:     "pathtraversal",
	Doc:      "report archive entry names and URL query values joined into file paths that are written or opened without a check that they stay inside the directory",
	URL:      "https://cwe.mitre.org/data/definitions/22.html",
	Requires: []*analysis.Analyzer{buildssa.Analyzer},
	Run:      run,
}

// maxDepth bounds how many calls deep a name is followed, into callees
// and up to callers.
const maxDepth = 4

// source is a value from outside the program: what it is, in words.
type source struct {
	v    ssa.Value
	what string
	// url says the name came with a request (a field it is stored to is
	// a use: the path is built to be used).
	url bool
}

// flow is what a value reaches within a function and the functions it is
// passed to.
type flow struct {
	// checked: some check (a prefix test, filepath.Rel, filepath.IsLocal,
	// a comparison with "..", a function of the package doing one) was
	// given the value or a path built from it.
	checked bool
	// joins are the places the raw value entered a path; used says a
	// path built from it was created, written or opened.
	joins []token.Pos
	used  bool
	// stored says a path built from it was stored to a struct field.
	stored bool
	// returned is how the value leaves through a return: 0 not, 1 as
	// it came, 2 joined into a path.
	returned int
}

type checker struct {
	pass    *analysis.Pass
	callers map[*ssa.Function][]ssa.CallInstruction
	params  map[paramKey]*flow
	checks  map[*ssa.Function]bool
}

type paramKey struct {
	fn     *ssa.Function
	i      int
	joined bool
}

func run(pass *analysis.Pass) (any, error) {
	res, ok := pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA)
	if !ok || res == nil {
		return nil, nil
	}
	c := &checker{
		pass:    pass,
		callers: map[*ssa.Function][]ssa.CallInstruction{},
		params:  map[paramKey]*flow{},
		checks:  map[*ssa.Function]bool{},
	}
	for _, fn := range res.SrcFuncs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if call, ok := instr.(ssa.CallInstruction); ok {
					if f := call.Common().StaticCallee(); f != nil {
						c.callers[f] = append(c.callers[f], call)
					}
				}
			}
		}
	}
	reported := map[token.Pos]bool{}
	for _, fn := range res.SrcFuncs {
		// Tests extract what they made themselves.
		if strings.HasSuffix(pass.Fset.PositionFor(fn.Pos(), false).Filename, "_test.go") {
			continue
		}
		// Each read of h.Name is a value of its own, and the headers
		// checked in one loop are often used in the next: a check of
		// one read of a kind of name (tar.Header.Name) in a function
		// counts for all.
		srcs := sources(fn)
		flows := make([]*flow, len(srcs))
		checked := map[string]bool{}
		for i, s := range srcs {
			flows[i] = &flow{}
			c.trace(flows[i], s.v, false, 0, map[ssa.Value]bool{})
			if flows[i].checked {
				checked[s.what] = true
			}
		}
		for i, s := range srcs {
			f := flows[i]
			if checked[s.what] || !(f.used || s.url && f.stored) || len(f.joins) == 0 {
				continue
			}
			chain, ok := c.unchecked(fn, maxDepth, map[*ssa.Function]bool{})
			if !ok {
				continue
			}
			for _, pos := range f.joins {
				if reported[pos] {
					continue
				}
				reported[pos] = true
				c.report(pos, s, chain)
			}
		}
	}
	return nil, nil
}

func (c *checker) report(pos token.Pos, s source, chain []ssa.CallInstruction) {
	msg := fmt.Sprintf("%s is joined into a file path that is used with no check that the result stays inside the directory: a name like \"../../x\" reaches outside it (zip slip, CWE-22); check it with filepath.IsLocal, or the joined path with filepath.Rel or a prefix test", s.what)
	if s.url {
		msg = fmt.Sprintf("%s is joined into a file path with no check for \"..\": a crafted URL reaches files outside the directory (CWE-22); reject names that are not filepath.IsLocal", s.what)
	}
	d := analysis.Diagnostic{Pos: pos, Message: msg}
	// The callers that could have checked the name, so a review can tell
	// which change in them made this path unchecked.
	for _, call := range chain {
		d.Related = append(d.Related, analysis.RelatedInformation{Pos: call.Pos(), Message: "called from here, without a check"})
	}
	c.pass.Report(d)
}

// sources returns the untrusted names fn reads: the Name and Linkname of
// archive headers, and URL query values.
func sources(fn *ssa.Function) []source {
	var out []source
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch v := instr.(type) {
			case *ssa.Field:
				if w := headerField(v.X.Type(), v.Field); w != "" {
					out = append(out, source{v: v, what: w})
				}
			case *ssa.UnOp:
				if fa, ok := v.X.(*ssa.FieldAddr); ok && v.Op == token.MUL {
					if w := headerField(fa.X.Type(), fa.Field); w != "" {
						out = append(out, source{v: v, what: w})
					}
				}
			case *ssa.Call:
				if w := queryValue(v.Common()); w != "" {
					out = append(out, source{v: v, what: w, url: true})
				}
			}
		}
	}
	return out
}

// headerField names field i of an archive header struct t (or a pointer
// to one) when it is the entry's name or link target, else "".
func headerField(t types.Type, i int) string {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return ""
	}
	st, ok := n.Underlying().(*types.Struct)
	if !ok || i >= st.NumFields() {
		return ""
	}
	name := st.Field(i).Name()
	if name != "Name" && name != "Linkname" {
		return ""
	}
	pkg, tn := n.Obj().Pkg().Path(), n.Obj().Name()
	if !archivePackage(pkg) || !strings.Contains(tn, "Header") && tn != "File" && tn != "Entry" {
		return ""
	}
	return fmt.Sprintf("the archive entry's %s (%s.%s.%s)", strings.ToLower(map[string]string{"Name": "name", "Linkname": "link target"}[name]), n.Obj().Pkg().Name(), tn, name)
}

// archivePackage reports whether a package path is an archive format's:
// the standard library's and the common third-party readers (rar, 7z,
// cpio, ar, and archive libraries).
func archivePackage(path string) bool {
	switch path {
	case "archive/zip", "archive/tar":
		return true
	}
	last := path[strings.LastIndex(path, "/")+1:]
	for _, k := range []string{"rardecode", "sevenzip", "7z", "cpio", "unarr", "zip", "tar", "archive", "archiver"} {
		if strings.Contains(last, k) {
			return true
		}
	}
	return false
}

// queryValue describes a call returning a value of the request's URL
// query or form, or "".
func queryValue(call *ssa.CallCommon) string {
	f := call.StaticCallee()
	if f == nil || f.Signature.Recv() == nil {
		return ""
	}
	recv := f.Signature.Recv().Type()
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	n, ok := recv.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return ""
	}
	switch n.Obj().Pkg().Path() + "." + n.Obj().Name() + "." + f.Name() {
	case "net/url.Values.Get":
		return "a URL query value (url.Values.Get)"
	case "net/http.Request.FormValue", "net/http.Request.PostFormValue":
		return "a form value (http.Request." + f.Name() + ")"
	}
	return ""
}

// trace follows v (joined: already a path built from the untrusted name)
// through fn's instructions and the package's functions it is passed to,
// recording into f.
func (c *checker) trace(f *flow, v ssa.Value, joined bool, depth int, seen map[ssa.Value]bool) {
	if v == nil || seen[v] {
		return
	}
	seen[v] = true
	refs := v.Referrers()
	if refs == nil {
		return
	}
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.Phi, *ssa.ChangeType, *ssa.Convert, *ssa.MakeInterface, *ssa.Slice, *ssa.TypeAssert, *ssa.ChangeInterface, *ssa.Extract, *ssa.IndexAddr, *ssa.Index, *ssa.Lookup:
			c.trace(f, r.(ssa.Value), joined, depth, seen)
		case *ssa.UnOp:
			if r.Op == token.MUL {
				c.trace(f, r, joined, depth, seen)
			}
		case *ssa.BinOp:
			switch r.Op {
			case token.ADD:
				c.trace(f, r, joined || pathConcat(r), depth, seen)
				if !joined && pathConcat(r) {
					f.joins = append(f.joins, r.Pos())
				}
			case token.EQL, token.NEQ:
				if isDotDot(r.X) || isDotDot(r.Y) {
					f.checked = true
				}
			}
		case *ssa.Store:
			if r.Val != v {
				continue
			}
			switch a := r.Addr.(type) {
			case *ssa.IndexAddr:
				// An element of the array a variadic call's slice is
				// built from.
				if alloc, ok := a.X.(*ssa.Alloc); ok {
					c.trace(f, alloc, joined, depth, seen)
				}
			case *ssa.Alloc:
				c.trace(f, a, joined, depth, seen)
			case *ssa.FieldAddr:
				if joined {
					f.stored = true
				}
			}
		case *ssa.Return:
			f.returned = max(f.returned, map[bool]int{false: 1, true: 2}[joined])
		case ssa.CallInstruction:
			c.call(f, r, v, joined, depth, seen)
		}
	}
}

// call follows v into a call that takes it.
func (c *checker) call(f *flow, call ssa.CallInstruction, v ssa.Value, joined bool, depth int, seen map[ssa.Value]bool) {
	common := call.Common()
	if common.IsInvoke() {
		if checkName(common.Method.Name()) {
			f.checked = true
		}
		return
	}
	callee := common.StaticCallee()
	if callee == nil {
		return
	}
	result, _ := call.(*ssa.Call)
	if callee.Pkg != nil && callee.Pkg.Pkg == c.pass.Pkg {
		if depth >= maxDepth {
			return
		}
		for i, a := range common.Args {
			if a != v {
				continue
			}
			s := c.param(callee, i, joined, depth+1)
			if s == nil {
				continue
			}
			f.checked = f.checked || s.checked
			f.stored = f.stored || s.stored
			if s.used {
				f.used = true
				if !joined && len(s.joins) > 0 {
					// The callee builds the path: the name enters it
					// at this call.
					f.joins = append(f.joins, call.Pos())
				}
			}
			if s.returned > 0 && result != nil {
				c.trace(f, result, joined || s.returned == 2, depth, seen)
			}
		}
		return
	}
	name := funcName(callee)
	switch {
	case name == "path/filepath.Base" || name == "path.Base":
		return // a base name has no directory in it
	case name == "path/filepath.Join" || name == "path.Join":
		if !joined {
			f.joins = append(f.joins, call.Pos())
		}
		if result != nil {
			c.trace(f, result, true, depth, seen)
		}
	case checkFunc(name, common) || checkName(callee.Name()):
		f.checked = true
	case sinks[name]:
		if joined {
			f.used = true
		}
	case strings.HasPrefix(name, "strings.") || strings.HasPrefix(name, "fmt.Sprint") || strings.HasPrefix(name, "path/filepath.") || strings.HasPrefix(name, "path."):
		if result != nil {
			c.trace(f, result, joined, depth, seen)
		}
	}
}

// param returns what parameter i of fn reaches (nil for a function with
// no body or a parameter being traced already).
func (c *checker) param(fn *ssa.Function, i int, joined bool, depth int) *flow {
	k := paramKey{fn, i, joined}
	if f, ok := c.params[k]; ok {
		return f
	}
	c.params[k] = nil // a recursive call answers nothing
	if len(fn.Blocks) == 0 || i >= len(fn.Params) {
		return nil
	}
	f := &flow{}
	c.trace(f, fn.Params[i], joined, depth, map[ssa.Value]bool{})
	c.params[k] = f
	return f
}

// unchecked returns a chain of calls by which fn is reached in the
// package, up to depth calls back, with no caller on it checking an
// untrusted name it reads (it reads one and checks it); false when every
// way to fn passes a check. A function no function of the package calls
// is reached from outside, unchecked.
func (c *checker) unchecked(fn *ssa.Function, depth int, seen map[*ssa.Function]bool) (chain []ssa.CallInstruction, ok bool) {
	if depth == 0 || seen[fn] || len(c.callers[fn]) == 0 {
		return nil, true
	}
	seen[fn] = true
	defer delete(seen, fn)
	for _, call := range c.callers[fn] {
		g := call.Parent()
		if c.checksNames(g) {
			continue
		}
		if more, ok := c.unchecked(g, depth-1, seen); ok {
			return append([]ssa.CallInstruction{call}, more...), true
		}
	}
	return nil, false
}

// checksNames reports whether fn checks an untrusted name it reads.
func (c *checker) checksNames(fn *ssa.Function) bool {
	if ok, done := c.checks[fn]; done {
		return ok
	}
	c.checks[fn] = false
	for _, s := range sources(fn) {
		f := &flow{}
		c.trace(f, s.v, false, 0, map[ssa.Value]bool{})
		if f.checked {
			c.checks[fn] = true
			return true
		}
	}
	return false
}

// funcName is "pkg/path.Func" or "pkg/path.Type.Method".
func funcName(f *ssa.Function) string {
	if f.Pkg == nil || f.Pkg.Pkg == nil {
		if f.Object() != nil && f.Object().Pkg() != nil {
			if recv := f.Signature.Recv(); recv != nil {
				return f.Object().Pkg().Path() + "." + recvName(recv.Type()) + "." + f.Name()
			}
			return f.Object().Pkg().Path() + "." + f.Name()
		}
		return f.Name()
	}
	if recv := f.Signature.Recv(); recv != nil {
		return f.Pkg.Pkg.Path() + "." + recvName(recv.Type()) + "." + f.Name()
	}
	return f.Pkg.Pkg.Path() + "." + f.Name()
}

func recvName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return t.String()
}

// sinks are the functions that create, write or open the path they are
// given.
var sinks = map[string]bool{
	"os.Create": true, "os.OpenFile": true, "os.Open": true, "os.Mkdir": true, "os.MkdirAll": true,
	"os.WriteFile": true, "os.ReadFile": true, "os.Symlink": true, "os.Link": true, "os.Rename": true,
	"os.Chmod": true, "os.Chown": true, "os.Lchown": true, "os.Chtimes": true, "os.Remove": true,
	"os.RemoveAll": true, "os.Truncate": true, "io/ioutil.WriteFile": true, "io/ioutil.ReadFile": true,
	"net/http.ServeFile": true,
}

// checkFunc reports whether a call of a function from another package
// checks a path: a prefix test, filepath.Rel or IsLocal, a search for
// "..", a secure join.
func checkFunc(name string, common *ssa.CallCommon) bool {
	switch name {
	case "strings.HasPrefix", "path/filepath.Rel", "path/filepath.IsLocal", "path/filepath.HasPrefix",
		"github.com/cyphar/filepath-securejoin.SecureJoin", "github.com/cyphar/filepath-securejoin.SecureJoinVFS":
		return true
	case "strings.Contains", "strings.Index", "strings.LastIndex", "strings.Count", "strings.HasSuffix":
		for _, a := range common.Args {
			if isDotDot(a) {
				return true
			}
		}
	}
	return false
}

// checkName reports whether a method called through an interface is a
// check by its name (CheckPath, ValidatePath, SanitizeName, IsSafe…).
func checkName(name string) bool {
	for _, p := range []string{"Check", "Validate", "Sanitize", "Sanitise", "IsSafe", "Secure"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isDotDot reports whether v is the constant "..".
func isDotDot(v ssa.Value) bool {
	k, ok := v.(*ssa.Const)
	return ok && k.Value != nil && k.Value.Kind() == constant.String && strings.Contains(constant.StringVal(k.Value), "..")
}

// pathConcat reports whether a string concatenation puts a path
// separator next to its operand: dir + "/" + name.
func pathConcat(b *ssa.BinOp) bool {
	for _, o := range []ssa.Value{b.X, b.Y} {
		if k, ok := o.(*ssa.Const); ok && k.Value != nil && k.Value.Kind() == constant.String {
			s := constant.StringVal(k.Value)
			if strings.HasSuffix(s, "/") || strings.HasPrefix(s, "/") {
				return true
			}
		}
	}
	return false
}
