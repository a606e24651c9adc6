// Package lenguard reports an index past what the length check before it
// ensures: `if len(args) < 2 { return }` and then `args[2]`, which panics
// when exactly two arguments are given (pressly/goose fixed this in
// 0580e2f). go vet, staticcheck and gosec do not see it: the index is
// checked at run time, and the guard right before it looks like the check.
package lenguard

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// Analyzer reports indexes past what a preceding length guard ensures.
var Analyzer = &analysis.Analyzer{
	Name:     "lenguard",
	Doc:      "report x[k] after a guard like `if len(x) < k { return }` that lets len(x) == k through",
	URL:      "https://github.com/quorum-review/quorum/blob/main/docs/analyzers.md#length-guards",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.Preorder([]ast.Node{(*ast.BlockStmt)(nil), (*ast.CaseClause)(nil), (*ast.CommClause)(nil)}, func(n ast.Node) {
		var list []ast.Stmt
		switch n := n.(type) {
		case *ast.BlockStmt:
			list = n.List
		case *ast.CaseClause:
			list = n.Body
		case *ast.CommClause:
			list = n.Body
		}
		for i, s := range list {
			ifs, ok := s.(*ast.IfStmt)
			if !ok || ifs.Else != nil || ifs.Init != nil || !terminates(pass.TypesInfo, ifs.Body) {
				continue
			}
			x, min, ok := guard(pass.TypesInfo, ifs.Cond)
			if !ok || fixedLength(pass.TypesInfo, x, list[:i]) {
				continue
			}
			check(pass, x, min, list[i+1:])
		}
	})
	return nil, nil
}

// guard reads a condition under which the function leaves: len(x) < n,
// len(x) <= n, len(x) == 0, len(x) != n (and the mirrored forms). It
// returns x and the least length the code after it may count on.
func guard(info *types.Info, cond ast.Expr) (x string, min int64, ok bool) {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok {
		return "", 0, false
	}
	op, l, r := b.Op, b.X, b.Y
	if _, isLen := lenOf(info, l); !isLen {
		// n > len(x) is len(x) < n.
		l, r = r, l
		switch op {
		case token.GTR:
			op = token.LSS
		case token.GEQ:
			op = token.LEQ
		case token.LSS, token.LEQ:
			return "", 0, false
		}
	}
	x, isLen := lenOf(info, l)
	n, isConst := intConst(info, r)
	if !isLen || !isConst {
		return "", 0, false
	}
	switch op {
	case token.LSS:
		return x, n, true
	case token.LEQ:
		return x, n + 1, true
	case token.EQL:
		if n == 0 {
			return x, 1, true
		}
	case token.NEQ:
		return x, n, true
	}
	return "", 0, false
}

// lenOf returns x of len(x), x a variable or a field of one.
func lenOf(info *types.Info, e ast.Expr) (string, bool) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	if b, ok := typeutil.Callee(info, call).(*types.Builtin); !ok || b.Name() != "len" {
		return "", false
	}
	if !simple(call.Args[0]) {
		return "", false
	}
	switch info.TypeOf(call.Args[0]).Underlying().(type) {
	case *types.Slice, *types.Basic:
		return types.ExprString(call.Args[0]), true
	}
	return "", false
}

// simple reports whether e names a variable or a field path (a, a.b.c).
func simple(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return true
	case *ast.SelectorExpr:
		return simple(e.X)
	}
	return false
}

func intConst(info *types.Info, e ast.Expr) (int64, bool) {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.Int {
		return 0, false
	}
	return constant.Int64Val(tv.Value)
}

// terminates reports whether a block ends by leaving: return, panic, a
// break, continue or goto, os.Exit, log.Fatal and its kin, t.Fatal.
func terminates(info *types.Info, b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	switch s := b.List[len(b.List)-1].(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.ExprStmt:
		call, ok := s.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		switch fn := typeutil.Callee(info, call).(type) {
		case *types.Builtin:
			return fn.Name() == "panic"
		case *types.Func:
			switch fn.Name() {
			case "Exit", "Fatal", "Fatalf", "Fatalln", "Panic", "Panicf", "Panicln", "FailNow", "Skip", "Skipf", "SkipNow", "Goexit":
				return true
			}
		}
	}
	return false
}

// check reports, in the statements after a guard on x, an index or slice
// bound of x past min, up to where x is assigned again.
func check(pass *analysis.Pass, x string, min int64, after []ast.Stmt) {
	for _, s := range after {
		// Code that looks at len(x) again, or assigns x, knows more
		// than the guard: what follows is its to answer for.
		if assigns(s, x) || mentionsLenIn(s, x) {
			return
		}
		stop := false
		ast.Inspect(s, func(n ast.Node) bool {
			if stop {
				return false
			}
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt:
				// Code under another condition may have checked
				// again.
				if mentionsLen(n, x) {
					return false
				}
			case *ast.AssignStmt:
				if assigns(n, x) {
					stop = true
					return false
				}
			case *ast.IndexExpr:
				if types.ExprString(n.X) == x {
					if k, ok := literal(pass.TypesInfo, n.Index); ok && k >= min {
						report(pass, n, x, k, min)
					}
				}
			case *ast.SliceExpr:
				if types.ExprString(n.X) == x {
					for _, bound := range []ast.Expr{n.Low, n.High} {
						if k, ok := literal(pass.TypesInfo, bound); bound != nil && ok && k > min {
							report(pass, n, x, k, min)
							break
						}
					}
				}
			}
			return true
		})
		if stop {
			return
		}
	}
}

func report(pass *analysis.Pass, n ast.Node, x string, k, min int64) {
	pass.Report(analysis.Diagnostic{
		Pos: n.Pos(),
		End: n.End(),
		Message: fmt.Sprintf("%s goes past what the length check before it ensures (len(%s) ≥ %d): it panics when len(%s) is %d",
			types.ExprString(n.(ast.Expr)), x, min, x, min),
	})
}

// literal returns the value of an integer literal: a named constant (an
// offset into a protocol's header, say) comes with checks of its own that
// the guard does not show.
func literal(info *types.Info, e ast.Expr) (int64, bool) {
	if e == nil {
		return 0, false
	}
	if _, ok := ast.Unparen(e).(*ast.BasicLit); !ok {
		return 0, false
	}
	return intConst(info, e)
}

// fixedLength reports whether x was last set, in stmts, from a regexp
// submatch: its length is the number of groups whenever it is not empty.
func fixedLength(info *types.Info, x string, stmts []ast.Stmt) bool {
	fixed := false
	for _, s := range stmts {
		as, ok := s.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			continue
		}
		for i, l := range as.Lhs {
			if types.ExprString(l) != x {
				continue
			}
			fixed = false
			if call, ok := as.Rhs[i].(*ast.CallExpr); ok {
				if fn, ok := typeutil.Callee(info, call).(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "regexp" && strings.Contains(fn.Name(), "Submatch") {
					fixed = true
				}
			}
		}
	}
	return fixed
}

// mentionsLenIn reports whether len(x) appears anywhere in n.
func mentionsLenIn(n ast.Node, x string) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		if c, ok := m.(*ast.CallExpr); ok && len(c.Args) == 1 {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "len" && types.ExprString(c.Args[0]) == x {
				found = true
			}
		}
		return !found
	})
	return found
}

// assigns reports whether s assigns to x (or takes its address).
func assigns(s ast.Node, x string) bool {
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if types.ExprString(l) == x {
					found = true
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND && types.ExprString(n.X) == x {
				found = true
			}
		}
		return !found
	})
	return found
}

// mentionsLen reports whether n's condition or header mentions len(x).
func mentionsLen(n ast.Node, x string) bool {
	var head ast.Node
	switch n := n.(type) {
	case *ast.IfStmt:
		head = n.Cond
	case *ast.ForStmt:
		head = n.Cond
	case *ast.RangeStmt:
		head = n.X
	case *ast.SwitchStmt:
		head = n.Tag
		if head == nil {
			return true // switch { case len(x) > 2: … }: conditions inside
		}
	}
	return head != nil && mentionsLenIn(head, x)
}
