package tests

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// A Go test's checks, read from its syntax: a removed check is reported
// only when what it checked is still there (the call under test still
// called in that test, its result still assigned) and no longer checked.
// A check removed with its subject (the call no longer returns an error,
// so `if err != nil { t.Fatal(err) }` went with the err), rewritten (into
// require.NoError(t, err), a helper given t) or dropped beside a check
// that stays on the same result is not.

// assign is a variable's assignment in a test: from a call (named call)
// or from anything else (call "").
type assign struct {
	v    string
	pos  token.Pos
	call string
}

// check is a use of variables that checks them: an assertion (t.Errorf,
// require.Equal…) with the conditions it runs under, a helper given the
// test's t, or a return.
type testCheck struct {
	pos    token.Pos
	line   int
	vars   map[string]bool
	assert bool
}

type funcFacts struct {
	assigns []assign
	checks  []testCheck
}

// assertMethods are testing.TB's methods that fail a test.
var assertMethods = map[string]bool{"Error": true, "Errorf": true, "Fatal": true, "Fatalf": true, "Fail": true, "FailNow": true}

// factsOf reads the assignments and checks of a function's body.
func factsOf(fset *token.FileSet, fd *ast.FuncDecl) funcFacts {
	var ff funcFacts
	if fd.Body == nil {
		return ff
	}
	tvars := map[string]bool{"t": true, "tb": true}
	ast.Inspect(fd, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok && ft.Params != nil {
			for _, p := range ft.Params.List {
				if s := exprString(p.Type); strings.Contains(s, "testing.") {
					for _, n := range p.Names {
						tvars[n.Name] = true
					}
				}
			}
		}
		return true
	})
	// Assertion objects: what a call given the test's t returns, as
	// require.New(t), qt.New(t) or is.New(t) do.
	avars := map[string]bool{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Rhs) == 1 {
			if c, ok := as.Rhs[0].(*ast.CallExpr); ok && takesT(c, tvars) {
				for _, l := range as.Lhs {
					if id, ok := l.(*ast.Ident); ok && !tvars[id.Name] {
						avars[id.Name] = true
					}
				}
			}
		}
		return true
	})
	isAssert := func(c *ast.CallExpr) bool {
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return false
		}
		return (tvars[id.Name] && assertMethods[sel.Sel.Name]) || avars[id.Name] ||
			((id.Name == "assert" || id.Name == "require") && sel.Sel.IsExported())
	}
	addAssign := func(lhs []ast.Expr, rhs []ast.Expr, pos token.Pos) {
		for i, l := range lhs {
			id, ok := l.(*ast.Ident)
			if !ok || id.Name == "_" {
				continue
			}
			call := ""
			var r ast.Expr
			switch {
			case len(rhs) == 1:
				r = rhs[0]
			case i < len(rhs):
				r = rhs[i]
			}
			if c, ok := ast.Unparen(r).(*ast.CallExpr); ok {
				call = callName(c)
			}
			ff.assigns = append(ff.assigns, assign{v: id.Name, pos: pos, call: call})
		}
	}
	var stack []ast.Node
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.AssignStmt:
			addAssign(n.Lhs, n.Rhs, n.Pos())
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(n.Names))
			for i, id := range n.Names {
				lhs[i] = id
			}
			addAssign(lhs, n.Values, n.Pos())
		case *ast.RangeStmt:
			addAssign([]ast.Expr{n.Key, n.Value}, nil, n.Pos())
		case *ast.ReturnStmt:
			vars := map[string]bool{}
			for _, e := range n.Results {
				identsOf(e, vars)
			}
			ff.checks = append(ff.checks, testCheck{pos: n.Pos(), line: fset.PositionFor(n.Pos(), false).Line, vars: vars})
		case *ast.CallExpr:
			assert := isAssert(n)
			helper := takesT(n, tvars) || takesT(n, avars)
			if !assert && !helper {
				break
			}
			vars := map[string]bool{}
			for _, a := range n.Args {
				subjectsOf(a, vars)
			}
			if assert {
				// The conditions it runs under are part of what it checks.
				for _, s := range stack[:len(stack)-1] {
					if is, ok := s.(*ast.IfStmt); ok && n.Pos() > is.Body.Lbrace {
						subjectsOf(is.Init, vars)
						subjectsOf(is.Cond, vars)
					}
				}
			}
			for v := range tvars {
				delete(vars, v)
			}
			for v := range avars {
				delete(vars, v)
			}
			ff.checks = append(ff.checks, testCheck{pos: n.Pos(), line: fset.PositionFor(n.Pos(), false).Line, vars: vars, assert: assert})
		}
		return true
	})
	return ff
}

// takesT reports whether a call is given one of vars.
func takesT(c *ast.CallExpr, vars map[string]bool) bool {
	for _, a := range c.Args {
		if id, ok := a.(*ast.Ident); ok && vars[id.Name] {
			return true
		}
	}
	return false
}

// subjectsOf adds the variables an expression checks the value of: the
// names it uses, but not the receiver of a method given arguments (in
// c.Get("k") the result is checked, not c), a function called, nor a
// selected field's or method's name. The receiver of an accessor, a
// method given nothing, is checked: desc.Err() checks desc as desc.err
// did.
func subjectsOf(n ast.Node, into map[string]bool) {
	if n == nil {
		return
	}
	skip := map[*ast.Ident]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				skip[fn] = true // the function called, not a value checked
			case *ast.SelectorExpr:
				if id, ok := fn.X.(*ast.Ident); ok && len(n.Args) > 0 {
					skip[id] = true
				}
			}
		case *ast.SelectorExpr:
			skip[n.Sel] = true
		case *ast.Ident:
			if !skip[n] {
				into[n.Name] = true
			}
		}
		return true
	})
}

func identsOf(n ast.Node, into map[string]bool) {
	if n == nil {
		return
	}
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			into[id.Name] = true
		}
		return true
	})
}

// exprString is a type expression's text, enough to tell *testing.T.
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// unchecked counts the assignments of v from call that no check uses
// before v is assigned again, and all such assignments.
func (ff funcFacts) unchecked(v, call string) (unchecked, all int) {
	for i, a := range ff.assigns {
		if a.v != v || a.call != call {
			continue
		}
		all++
		end := token.Pos(-1)
		for _, b := range ff.assigns[i+1:] {
			if b.v == v && b.pos > a.pos {
				end = b.pos
				break
			}
		}
		checked := false
		for _, c := range ff.checks {
			if c.pos > a.pos && (end < 0 || c.pos < end) && c.vars[v] {
				checked = true
				break
			}
		}
		if !checked {
			unchecked++
		}
	}
	return unchecked, all
}

// goRemovedAssertions finds, per test function of a Go test file, checks
// the change deletes while the result they checked is still produced by
// the same call and no longer checked.
func (r *review) goRemovedAssertions(x *file) {
	base, head := r.goBase(x), r.goParsed("head:"+x.path, x.path, r.headLines(x))
	if base == nil || head == nil {
		return
	}
	deleted := map[int]bool{}
	for _, l := range x.removedLines() {
		deleted[l.OldNumber] = true
	}
	headDecls := map[string]*ast.FuncDecl{}
	for _, d := range head.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			headDecls[funcKey(fd)] = fd
		}
	}
	for _, d := range base.file.Decls {
		bd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		hd := headDecls[funcKey(bd)]
		if hd == nil {
			continue // removed or renamed: the test-deleted check's
		}
		bf, hf := factsOf(base.fset, bd), factsOf(head.fset, hd)
		var gone []testCheck
		var what []string
		for _, c := range bf.checks {
			if !c.assert || !deleted[c.line] {
				continue
			}
			for v := range c.vars {
				var prod *assign
				for i := range bf.assigns {
					if a := bf.assigns[i]; a.v == v && a.pos < c.pos {
						prod = &bf.assigns[i]
					}
				}
				if prod == nil || prod.call == "" {
					continue
				}
				ub, _ := bf.unchecked(v, prod.call)
				uh, all := hf.unchecked(v, prod.call)
				if all > 0 && uh > ub {
					gone = append(gone, c)
					what = append(what, fmt.Sprintf("`%s` from %s", v, prod.call))
					break
				}
			}
		}
		if len(gone) == 0 {
			continue
		}
		first := strings.TrimSpace(x.base[gone[0].line-1])
		line, cause := deletionSite(x, gone[0].line)
		r.add(specialist.Finding{
			Rule: RuleAssertionRemoved, Severity: sevAssert, Path: x.path, Line: line, EndLine: line, Cause: cause,
			Headline: assertHeadline(len(gone), first),
			Body: fmt.Sprintf("In %s the change deletes the check of %s, while the call is still made and its result "+
				"still assigned, and nothing else checks it: the test now accepts behavior it used to reject. "+
				"If the check was wrong, replace it with the right one; if the behavior changed on purpose, assert the new behavior.",
				bd.Name.Name, list(dedupe(what))),
		})
	}
}

func funcKey(fd *ast.FuncDecl) string {
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		return typeName(fd.Recv.List[0].Type) + "." + fd.Name.Name
	}
	return fd.Name.Name
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// nearestAddedOld returns the new-file number of the added line nearest
// to the deleted line of old number n, in its hunk; 0 when it has none.
func (r *review) nearestAddedOld(x *file, n int) int {
	line, _ := deletionSite(x, n)
	return line
}

// deletionSite places a finding about the deleted base line n: on the
// nearest line the hunk adds, or, in a hunk that only deletes, on the head
// line the deletion stands before (or after, at the end of the hunk), with
// a cause naming the deleted line, so the finding sits where the reader
// sees the deletion instead of on the file as a whole.
func deletionSite(x *file, n int) (line int, cause string) {
	for _, h := range x.f.Hunks {
		for i, l := range h.Lines {
			if l.Kind != change.KindDeleted || l.OldNumber != n {
				continue
			}
			if a := nearestAdded(h, i); a > 0 {
				return a, ""
			}
			cause = fmt.Sprintf("the change deleted line %d `%s` of the base here", n, strings.TrimSpace(l.Text))
			for _, m := range h.Lines[i+1:] {
				if m.Kind != change.KindDeleted {
					return m.NewNumber, cause
				}
			}
			for j := i - 1; j >= 0; j-- {
				if h.Lines[j].Kind != change.KindDeleted {
					return h.Lines[j].NewNumber, cause
				}
			}
			return 0, ""
		}
	}
	return 0, ""
}
