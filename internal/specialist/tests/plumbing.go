package tests

import (
	"go/ast"
	"go/token"
	"strings"
)

// Lines of Go that add no behavior a test could check: an error, new in a
// call's results, handed up or reported (`ok, err := s.Exists(id)`, `if
// err != nil { return false, err }`, `return ok, nil` for `return ok`),
// and statements that only make calls the change removes elsewhere,
// rearranged (builder calls rewritten as one method chain). The first is
// a path the package's tests rarely can inject (a database error); the
// second is the same calls in another shape.

// plumbing returns the lines of a Go file at head that only
// plumb an error or rearrange calls the change removes.
func (r *review) plumbing(head *goSource) map[int]bool {
	out := map[int]bool{}
	if head == nil {
		return out
	}
	removed := r.removedCalls()
	mark := func(n ast.Node) {
		from, to := head.lines(n)
		for l := from; l <= to; l++ {
			out[l] = true
		}
	}
	ast.Inspect(head.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			v := errCond(n.Cond)
			if v == "" || n.Else != nil || !handlesErr(n.Body.List, v) {
				return true
			}
			if n.Init != nil && !r.errAdded(head, n.Init) {
				// A new call: its line is logic; what handles its
				// error is not.
				from, _ := head.lines(n.Body)
				for l := from + 1; l <= head.fset.PositionFor(n.End(), false).Line; l++ {
					out[l] = true
				}
				return false
			}
			mark(n)
			return false
		case *ast.AssignStmt:
			if r.errAdded(head, n) {
				mark(n)
				return false
			}
		case *ast.ReturnStmt:
			if r.nilAdded(head, n) {
				mark(n)
				return false
			}
		}
		if s, ok := n.(ast.Stmt); ok && simpleStmt(s) && knownCalls(head, s, removed) {
			mark(s)
			return false
		}
		return true
	})
	return out
}

// errCond returns the error variable a condition tests against nil
// (`err != nil`), or "".
func errCond(e ast.Expr) string {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok || b.Op != token.NEQ {
		return ""
	}
	x, y := b.X, b.Y
	if isNil(x) {
		x, y = y, x
	}
	id, ok := x.(*ast.Ident)
	if !ok || !isNil(y) || !isErrName(id.Name) {
		return ""
	}
	return id.Name
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

// isErrName reports whether a variable's name says it holds an error.
func isErrName(n string) bool {
	return n == "err" || strings.HasSuffix(n, "Err") || strings.HasSuffix(n, "err")
}

// handlesErr reports whether statements only hand up or report the error
// in v: returns of zero values, names and the error (wrapped or not),
// calls given it (a log line, an error response) or a branch out of a
// loop. A condition that tells one error from another
// (`errors.Is(err, sql.ErrNoRows)`) is a decision a test can check.
func handlesErr(stmts []ast.Stmt, v string) bool {
	if len(stmts) == 0 {
		return false
	}
	for _, s := range stmts {
		switch s := s.(type) {
		case *ast.ReturnStmt:
			for _, e := range s.Results {
				if !plainValue(e, v) {
					return false
				}
			}
		case *ast.ExprStmt:
			c, ok := s.X.(*ast.CallExpr)
			if !ok || !uses(c, v) {
				return false
			}
		case *ast.BranchStmt:
			if s.Tok != token.BREAK && s.Tok != token.CONTINUE {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// plainValue reports whether a returned value computes nothing new: a
// literal, a name, a field, an empty composite, or a call given the error
// v (fmt.Errorf("…: %w", err)).
func plainValue(e ast.Expr, v string) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit, *ast.Ident, *ast.SelectorExpr:
		return true
	case *ast.CompositeLit:
		return len(e.Elts) == 0
	case *ast.UnaryExpr:
		return plainValue(e.X, v)
	case *ast.CallExpr:
		return uses(e, v)
	}
	return false
}

// uses reports whether n uses the variable v.
func uses(n ast.Node, v string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == v {
			found = true
		}
		return !found
	})
	return found
}

// errAdded reports whether an assignment only captures an error from a
// call the change's base already made: an error variable among its
// targets, and the call's function called on a line the change removes
// (`ok := s.Exists(id)` became `ok, err := s.Exists(id)`).
func (r *review) errAdded(head *goSource, s ast.Stmt) bool {
	as, ok := s.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return false
	}
	hasErr := false
	for _, l := range as.Lhs {
		if id, ok := l.(*ast.Ident); ok && isErrName(id.Name) {
			hasErr = true
		}
	}
	c, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !hasErr || !ok {
		return false
	}
	fn := head.text(c.Fun)
	if fn == "" {
		return false
	}
	fn += "("
	for t := range r.moved.exact[goEco] {
		if strings.Contains(t, fn) {
			return true
		}
	}
	return false
}

// nilAdded reports whether a return only adds a nil error to one the
// change removes: `return ok, nil` for `return ok`.
func (r *review) nilAdded(head *goSource, s *ast.ReturnStmt) bool {
	n := len(s.Results)
	if n < 2 || !isNil(s.Results[n-1]) {
		return false
	}
	parts := make([]string, n-1)
	for i, e := range s.Results[:n-1] {
		parts[i] = head.text(e)
	}
	return r.moved.exact[goEco]["return "+strings.Join(parts, ", ")]
}

// simpleStmt reports whether a statement holds no other statements.
func simpleStmt(s ast.Stmt) bool {
	switch s.(type) {
	case *ast.ExprStmt, *ast.AssignStmt, *ast.ReturnStmt, *ast.DeclStmt, *ast.DeferStmt, *ast.GoStmt, *ast.SendStmt, *ast.IncDecStmt:
		return true
	}
	return false
}

// knownCalls reports whether a statement makes calls and every one of
// them is a call the change removes, by name and arguments: the same
// calls rearranged. A function literal in it is new code: not known.
func knownCalls(g *goSource, s ast.Stmt, removed map[string]bool) bool {
	n, known := 0, true
	ast.Inspect(s, func(nd ast.Node) bool {
		switch nd := nd.(type) {
		case *ast.FuncLit:
			known = false
		case *ast.CallExpr:
			n++
			if !removed[callSig(g, nd)] {
				known = false
			}
		}
		return known
	})
	return known && n > 0
}

// callSig is a call's name and arguments, qualifiers aside: a method
// called on a builder variable and on the chain's previous call alike.
func callSig(g *goSource, c *ast.CallExpr) string {
	name := callName(c)
	if name == "" {
		return ""
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = looseLine(g.text(a))
	}
	return name + "(" + strings.Join(args, ",") + ")"
}

// removedCalls returns the signatures of the calls that start on lines
// the change's Go files remove.
func (r *review) removedCalls() map[string]bool {
	if r.goneCalls != nil {
		return r.goneCalls
	}
	r.goneCalls = map[string]bool{}
	for _, y := range r.files {
		if y.eco.name != "go" || y.test || y.f.OldPath == "" {
			continue
		}
		deleted := map[int]bool{}
		for _, l := range y.removedLines() {
			deleted[l.OldNumber] = true
		}
		if len(deleted) == 0 {
			continue
		}
		base := r.goBase(y)
		if base == nil {
			continue
		}
		ast.Inspect(base.file, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok && deleted[base.fset.PositionFor(c.Pos(), false).Line] {
				r.goneCalls[callSig(base, c)] = true
			}
			return true
		})
	}
	return r.goneCalls
}

// goEco is the Go ecosystem.
var goEco = ecosystemOf("x.go")
