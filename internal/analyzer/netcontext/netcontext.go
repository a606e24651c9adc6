// Package netcontext reports the cancel function of golang.org/x/net/
// context's WithCancel, WithDeadline and WithTimeout discarded with the
// blank identifier: the context leaks until its parent ends. go vet's
// lostcancel knows only the standard library's context package and is
// silent on code written against x/net/context, which most Go code before
// Go 1.7 was (jackc/pgx fixed such leaks in c540b65e).
//
// Only the discarded form is reported: it needs no flow analysis, and it
// is found whether or not x/net/context itself could be loaded.
package netcontext

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Analyzer reports discarded cancel functions of x/net/context.
var Analyzer = &analysis.Analyzer{
	Name:             "netcontext",
	Doc:              "report cancel functions of golang.org/x/net/context discarded with _ (go vet's lostcancel checks only the standard library's context)",
	URL:              "https://pkg.go.dev/golang.org/x/tools/go/analysis/passes/lostcancel",
	Requires:         []*analysis.Analyzer{inspect.Analyzer},
	RunDespiteErrors: true,
	Run:              run,
}

const netContext = "golang.org/x/net/context"

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.Preorder([]ast.Node{(*ast.AssignStmt)(nil), (*ast.ValueSpec)(nil)}, func(n ast.Node) {
		var lhs []ast.Expr
		var rhs []ast.Expr
		switch n := n.(type) {
		case *ast.AssignStmt:
			lhs, rhs = n.Lhs, n.Rhs
		case *ast.ValueSpec:
			for _, id := range n.Names {
				lhs = append(lhs, id)
			}
			rhs = n.Values
		}
		if len(lhs) != 2 || len(rhs) != 1 {
			return
		}
		call, ok := ast.Unparen(rhs[0]).(*ast.CallExpr)
		if !ok {
			return
		}
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return
		}
		switch sel.Sel.Name {
		case "WithCancel", "WithDeadline", "WithTimeout":
		default:
			return
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return
		}
		pkg, ok := pass.TypesInfo.Uses[x].(*types.PkgName)
		if !ok || pkg.Imported().Path() != netContext {
			return
		}
		if id, ok := lhs[1].(*ast.Ident); ok && id.Name == "_" {
			pass.Report(analysis.Diagnostic{
				Pos:     n.Pos(),
				End:     n.End(),
				Message: "the cancel function returned by " + x.Name + "." + sel.Sel.Name + " should be called, not discarded, to avoid a context leak",
			})
		}
	})
	return nil, nil
}
