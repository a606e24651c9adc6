package release

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// CategoryCleanup marks an error return that skips the cleanup the
// function's other error returns make.
const CategoryCleanup = "cleanup"

// cleanupMethods are method names that release what a value holds.
var cleanupMethods = []string{"close", "cleanup", "release", "rollback", "abort", "stop", "destroy", "free", "shutdown", "dispose"}

func isCleanup(name string) bool {
	n := strings.ToLower(name)
	for _, m := range cleanupMethods {
		if n == m {
			return true
		}
	}
	return false
}

// checkCleanupPaths reports an error return that skips the cleanup of a
// local value (`x.Close()`, `mc.cleanup()` just before the return) which
// at least two other error returns of the function make: the early
// return that forgot it (go-sql-driver/mysql, a deleted mc.cleanup()).
// Which of the function's returns need the cleanup (those after the value
// holds something) static analysis cannot tell; the logic specialist
// reports one only where the change deleted that cleanup next to it.
func checkCleanupPaths(pass *analysis.Pass, body *ast.BlockStmt, results *ast.FieldList) {
	info := pass.TypesInfo
	type ret struct {
		r       *ast.ReturnStmt
		cleaned map[types.Object]bool
	}
	var rets []ret
	calls := map[types.Object]map[string]int{} // x → method → error returns after it
	var visit func(stmts []ast.Stmt)
	visit = func(stmts []ast.Stmt) {
		for i, s := range stmts {
			ast.Inspect(s, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false
				case *ast.BlockStmt:
					visit(n.List)
					return false
				case *ast.CaseClause:
					visit(n.Body)
					return false
				case *ast.CommClause:
					visit(n.Body)
					return false
				}
				return true
			})
			r, ok := s.(*ast.ReturnStmt)
			if !ok || !errorReturn(info, r, results) || results == nil || len(results.List) == 0 {
				continue
			}
			cleaned := map[types.Object]bool{}
			for j := i - 1; j >= 0 && j >= i-3; j-- {
				x, m := cleanupCall(info, stmts[j])
				if x == nil {
					continue
				}
				cleaned[x] = true
				if calls[x] == nil {
					calls[x] = map[string]int{}
				}
				calls[x][m]++
			}
			rets = append(rets, ret{r, cleaned})
		}
	}
	visit(body.List)
	for _, r := range rets {
		for x, ms := range calls {
			// The cleanup most error returns make, if two do.
			m, n := "", 1
			for name, k := range ms {
				if k > n || k == n && m != "" && name < m {
					m, n = name, k
				}
			}
			if m == "" || r.cleaned[x] || r.r.Pos() < x.Pos() || returns(info, r.r, x) {
				continue
			}
			pass.Report(analysis.Diagnostic{
				Pos:      r.r.Pos(),
				End:      r.r.End(),
				Category: CategoryCleanup,
				Message:  "this error return skips " + x.Name() + "." + m + "(), which other error returns of the function make first: " + x.Name() + " leaks here",
			})
		}
	}
}

// cleanupCall returns the local variable and method of a statement
// `x.M()` with M a cleanup method, or nil.
func cleanupCall(info *types.Info, s ast.Stmt) (types.Object, string) {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return nil, ""
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return nil, ""
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || !isCleanup(sel.Sel.Name) {
		return nil, ""
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return nil, ""
	}
	v, ok := info.Uses[id].(*types.Var)
	if !ok || v.IsField() || v.Parent() == nil || v.Parent() == v.Pkg().Scope() {
		return nil, ""
	}
	return v, sel.Sel.Name
}

// returns reports whether r returns x (handing it to the caller).
func returns(info *types.Info, r *ast.ReturnStmt, x types.Object) bool {
	for _, e := range r.Results {
		if id, ok := ast.Unparen(e).(*ast.Ident); ok && info.Uses[id] == x {
			return true
		}
	}
	return false
}
