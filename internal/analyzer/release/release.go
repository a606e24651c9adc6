// Package release defines an analyzer that reports a lock a function takes
// and never releases, and a resource it opens and neither closes nor hands
// on: the bugs a change makes when it deletes a `defer mu.Unlock()` or a
// `defer f.Close()`, which no go vet or staticcheck check reports.
//
// A lock: a call of Lock or RLock on a sync.Mutex or sync.RWMutex (or a
// type embedding one) with no Unlock or RUnlock of the same expression
// anywhere in the function, its deferred closures included, and no
// reference to the unlock method (a function that hands `mu.Unlock` to its
// caller releases it there). Functions whose name says they lock (lock,
// acquire, …) are helpers that release elsewhere and are left alone.
//
// A resource: a local variable assigned from a call that returns an
// *os.File, *sql.Rows, *sql.Stmt, *sql.Conn, net.Conn, net.Listener or
// *http.Response, never closed in the function (for a response, its Body)
// and never handed on: not returned, passed to a call, assigned elsewhere,
// stored in a composite literal or captured by a goroutine; reading a
// response's body with io.ReadAll, a decoder or a scanner does not hand it
// on.
//
// Test files are left alone: what a test leaks ends with its process.
package release

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// Analyzer reports locks never released and resources never closed.
var Analyzer = &analysis.Analyzer{
	Name:     "release",
	Doc:      "reports a lock taken and never released, and a resource opened and never closed or handed on, in one function",
	URL:      "https://github.com/quorum-review/quorum/blob/main/docs/analyzers.md#release",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

// Categories of the diagnostics.
const (
	CategoryLock     = "lock"
	CategoryResource = "resource"
)

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	unlocks := indexUnlockers(pass.TypesInfo, pass.Files)
	ins.Preorder([]ast.Node{(*ast.FuncDecl)(nil)}, func(n ast.Node) {
		fd := n.(*ast.FuncDecl)
		if fd.Body == nil || locksByName(fd.Name.Name) {
			return
		}
		// A test's leaked temp file or listener ends with its process:
		// not worth a reviewer's comment.
		if strings.HasSuffix(pass.Fset.PositionFor(fd.Pos(), false).Filename, "_test.go") {
			return
		}
		checkLocks(pass, fd.Body)
		checkLockPaths(pass, fd.Body, fd.Type.Results, unlocks)
		checkCleanupPaths(pass, fd.Body, fd.Type.Results)
		checkResources(pass, fd.Body)
	})
	return nil, nil
}

// locksByName reports whether a function's name says it takes a lock for
// its caller.
func locksByName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"lock", "acquire", "enter", "begin", "start"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// mutexMethod returns the name of a sync.Mutex or sync.RWMutex method a
// call or selector refers to ("Lock"), or "".
func mutexMethod(info *types.Info, sel *ast.SelectorExpr) string {
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok {
		return ""
	}
	recv := fn.Signature().Recv()
	if recv == nil {
		return ""
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != "sync" {
		return ""
	}
	if n := named.Obj().Name(); n != "Mutex" && n != "RWMutex" {
		return ""
	}
	return fn.Name()
}

func checkLocks(pass *analysis.Pass, body *ast.BlockStmt) {
	type lock struct {
		call   *ast.CallExpr
		x      string
		method string
	}
	var locks []lock
	released := map[string]bool{} // "x\x00Unlock"
	ast.Inspect(body, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		m := mutexMethod(pass.TypesInfo, sel)
		switch m {
		case "Unlock", "RUnlock":
			released[types.ExprString(sel.X)+"\x00"+m] = true
		}
		return true
	})
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if m := mutexMethod(pass.TypesInfo, sel); m == "Lock" || m == "RLock" {
			locks = append(locks, lock{call: call, x: types.ExprString(sel.X), method: m})
		}
		return true
	})
	for _, l := range locks {
		unlock := "Unlock"
		if l.method == "RLock" {
			unlock = "RUnlock"
		}
		if released[l.x+"\x00"+unlock] {
			continue
		}
		pass.Report(analysis.Diagnostic{
			Pos:      l.call.Pos(),
			End:      l.call.End(),
			Category: CategoryLock,
			Message:  l.x + "." + l.method + "() is never released: no " + l.x + "." + unlock + "() in this function, so the next " + l.method + " blocks forever",
		})
	}
}

// closers are the types whose values must be closed, by package path and
// name, with what closing takes ("Close", or "Body.Close").
var closers = map[string]string{
	"os.File":           "Close",
	"database/sql.Rows": "Close",
	"database/sql.Stmt": "Close",
	"database/sql.Conn": "Close",
	"net.Conn":          "Close",
	"net.Listener":      "Close",
	"net/http.Response": "Body.Close",
}

// readers take a resource to read it (or copy it), not to own it.
var readers = map[string]bool{
	"io.ReadAll": true, "io/ioutil.ReadAll": true, "io.Copy": true, "io.CopyN": true,
	"encoding/json.NewDecoder": true, "encoding/xml.NewDecoder": true,
	"bufio.NewReader": true, "bufio.NewScanner": true, "io.LimitReader": true,
	// These duplicate the file's descriptor: the file must still be closed.
	"net.FileListener": true, "net.FileConn": true, "net.FilePacketConn": true,
}

func closerOf(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return ""
	}
	return closers[named.Obj().Pkg().Path()+"."+named.Obj().Name()]
}

func checkResources(pass *analysis.Pass, body *ast.BlockStmt) {
	info := pass.TypesInfo
	type opened struct {
		v      *types.Var
		at     *ast.Ident
		closer string
	}
	var vars []opened
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 {
			return true
		}
		if _, isCall := ast.Unparen(as.Rhs[0]).(*ast.CallExpr); !isCall {
			return true
		}
		for _, lhs := range as.Lhs {
			id, ok := lhs.(*ast.Ident)
			if !ok || id.Name == "_" {
				continue
			}
			v, ok := info.Defs[id].(*types.Var)
			if !ok {
				continue // assigned, not defined here: it lives elsewhere
			}
			if c := closerOf(v.Type()); c != "" {
				vars = append(vars, opened{v: v, at: id, closer: c})
			}
		}
		return true
	})
	for _, o := range vars {
		if closedOrHandedOn(info, body, o.v, o.closer) {
			continue
		}
		what := o.at.Name + ".Close()"
		if o.closer == "Body.Close" {
			what = o.at.Name + ".Body.Close()"
		}
		pass.Report(analysis.Diagnostic{
			Pos:      o.at.Pos(),
			End:      o.at.End(),
			Category: CategoryResource,
			Message:  o.at.Name + " is never closed: no " + what + " in this function, and it is not handed on, so it leaks",
		})
	}
}

// closedOrHandedOn reports whether the function closes v or hands it (or
// its body) on to something that may.
func closedOrHandedOn(info *types.Info, body *ast.BlockStmt, v *types.Var, closer string) bool {
	found := false
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		id, ok := n.(*ast.Ident)
		if !ok || info.Uses[id] != v {
			return true
		}
		found = handedOn(info, stack, closer)
		return true
	})
	return found
}

// handedOn judges one use of the variable, given the nodes above it
// (stack ends with the identifier).
func handedOn(info *types.Info, stack []ast.Node, closer string) bool {
	i := len(stack) - 1
	parent := func(k int) ast.Node {
		if k < 0 {
			return nil
		}
		return stack[k]
	}
	// Walk up through selectors: v.Close, v.Body, v.Body.Close.
	expr := stack[i]
	path := ""
	for {
		sel, ok := parent(i - 1).(*ast.SelectorExpr)
		if !ok || sel.X != expr {
			break
		}
		path += "." + sel.Sel.Name
		expr = sel
		i--
	}
	up := parent(i - 1)
	switch p := up.(type) {
	case *ast.CallExpr:
		if p.Fun == expr {
			// A method called: the closing one releases.
			return path == "."+closer || path == ".Close"
		}
		// An argument: read by a known reader, or handed on.
		if fn, ok := typeutil.Callee(info, p).(*types.Func); ok && fn.Pkg() != nil && readers[fn.Pkg().Path()+"."+fn.Name()] {
			return false
		}
		return true
	case *ast.SelectorExpr:
		return false // a field read (resp.StatusCode)
	case *ast.ReturnStmt, *ast.CompositeLit, *ast.KeyValueExpr, *ast.SendStmt, *ast.FuncLit:
		return true
	case *ast.AssignStmt:
		for _, r := range p.Rhs {
			if r == expr {
				return true // stored elsewhere
			}
		}
		return false
	case *ast.ValueSpec, *ast.UnaryExpr:
		return true
	}
	// Captured by a closure (a goroutine, a deferred func): whatever it
	// does there counts, the walk has already looked inside it.
	return false
}
