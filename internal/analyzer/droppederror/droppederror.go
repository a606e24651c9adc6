// Package droppederror defines an analyzer that reports a call whose error
// result is dropped: a statement that calls a function or method of the
// same repository returning an error, and does nothing with the error.
//
// It is what a change makes when it turns
//
//	if err := a.AddMappings(sub, m...); err != nil { … }
//
// into a bare `a.AddMappings(sub, m...)` (nats-server, reverted fix
// cc9c2d1f), which no go vet or staticcheck check reports (SA4006 sees
// only an error assigned and never read). Only the repository's own
// functions count: the standard library's and modules' (fmt.Println,
// Close, Write) are dropped on purpose far more often than by mistake, and
// their authors' conventions are not the repository's. Deferred and go
// calls, test files, and methods whose names say they clean up (Close,
// Flush, Stop, …) are left alone. quorum reports what the change
// introduced, so a call that dropped its error at base is not reported.
package droppederror

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// Analyzer reports dropped errors of the repository's own functions.
var Analyzer = &analysis.Analyzer{
	Name:     "droppederror",
	Doc:      "reports a call of the repository's own function whose error result is dropped",
	URL:      "https://github.com/quorum-review/quorum/blob/main/docs/analyzers.md#dropped-errors",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

// cleanup names methods whose errors are routinely dropped on purpose.
var cleanup = map[string]bool{
	"Close": true, "Flush": true, "Stop": true, "Shutdown": true, "Sync": true,
	"Release": true, "Unlock": true, "Rollback": true, "Remove": true, "RemoveAll": true,
}

var errorType = types.Universe.Lookup("error").Type()

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.Preorder([]ast.Node{(*ast.ExprStmt)(nil)}, func(n ast.Node) {
		call, ok := ast.Unparen(n.(*ast.ExprStmt).X).(*ast.CallExpr)
		if !ok || strings.HasSuffix(pass.Fset.PositionFor(call.Pos(), false).Filename, "_test.go") {
			return
		}
		fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func)
		if !ok || fn.Pkg() == nil || cleanup[fn.Name()] || !sameRepository(pass.Pkg.Path(), fn.Pkg().Path()) {
			return
		}
		res := fn.Signature().Results()
		if res.Len() == 0 || !types.Identical(res.At(res.Len()-1).Type(), errorType) {
			return
		}
		pass.Report(analysis.Diagnostic{
			Pos:     call.Pos(),
			End:     call.End(),
			Message: "the error returned by " + fn.Name() + " is dropped: check it, or say why it cannot fail",
		})
	})
	return nil, nil
}

// sameRepository reports whether two import paths belong to one
// repository: for a path whose first element is a host ("github.com/a/b/…"),
// the same first three elements; otherwise the same first element.
func sameRepository(a, b string) bool {
	root := func(p string) string {
		parts := strings.Split(p, "/")
		n := 1
		if strings.Contains(parts[0], ".") {
			n = 3
		}
		return strings.Join(parts[:min(n, len(parts))], "/")
	}
	return root(a) == root(b)
}
