// Package printnewline reports a Println-style call whose last argument
// is a constant string ending in a newline: the call adds one of its own,
// so the output has a blank line nobody meant.
//
// go vet's printf pass had this check ("arg list ends with redundant
// newline"); the printf pass of golang.org/x/tools v0.52.0, which quorum
// pins, no longer reports it for the Go versions it analyses, while the
// toolchain's own go vet still does (docs/analyzers.md). On real code it
// caught a bug a fix commit was about (etcd-io/bbolt 8547e9ef).
package printnewline

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// Analyzer reports Println-style calls ending with a redundant newline.
var Analyzer = &analysis.Analyzer{
	Name:     "printnewline",
	Doc:      "report Println-style calls whose last argument ends with a newline the call adds anyway",
	URL:      "https://pkg.go.dev/golang.org/x/tools/go/analysis/passes/printf",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

// printers are the functions and methods that print their arguments
// followed by a newline, by package path and name ("Type.Method" for a
// method).
var printers = map[string]bool{
	"fmt.Println": true, "fmt.Fprintln": true, "fmt.Sprintln": true, "fmt.Appendln": true,
	"log.Println": true, "log.Fatalln": true, "log.Panicln": true,
	"log.Logger.Println": true, "log.Logger.Fatalln": true, "log.Logger.Panicln": true,
	"testing.common.Log": true, "testing.common.Error": true, "testing.common.Fatal": true, "testing.common.Skip": true,
}

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.Preorder([]ast.Node{(*ast.CallExpr)(nil)}, func(n ast.Node) {
		call := n.(*ast.CallExpr)
		if len(call.Args) == 0 || call.Ellipsis.IsValid() {
			return
		}
		fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func)
		if !ok || fn.Pkg() == nil || !printers[qualified(fn)] {
			return
		}
		last := call.Args[len(call.Args)-1]
		tv, ok := pass.TypesInfo.Types[last]
		if !ok || tv.Value == nil || tv.Value.Kind() != constant.String || !strings.HasSuffix(constant.StringVal(tv.Value), "\n") {
			return
		}
		d := analysis.Diagnostic{
			Pos:     call.Pos(),
			End:     call.End(),
			Message: fmt.Sprintf("%s arg list ends with redundant newline", name(fn)),
		}
		// A literal is fixed in place; a named constant may serve
		// elsewhere and is left alone.
		if lit, ok := last.(*ast.BasicLit); ok {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				fixed := strings.TrimSuffix(s, "\n")
				repl := strconv.Quote(fixed)
				if strings.HasPrefix(lit.Value, "`") && !strings.Contains(fixed, "`") {
					repl = "`" + fixed + "`"
				}
				d.SuggestedFixes = []analysis.SuggestedFix{{
					Message:   "Remove the redundant newline",
					TextEdits: []analysis.TextEdit{{Pos: lit.Pos(), End: lit.End(), NewText: []byte(repl)}},
				}}
			}
		}
		pass.Report(d)
	})
	return nil, nil
}

// qualified is "pkgpath.Func" or "pkgpath.Type.Method".
func qualified(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return fn.Pkg().Path() + "." + fn.Name()
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return fn.Pkg().Path() + "." + n.Obj().Name() + "." + fn.Name()
	}
	return ""
}

// name is how the message names the function: "fmt.Fprintln",
// "(*log.Logger).Println", "(*testing.common).Log".
func name(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return fn.Pkg().Name() + "." + fn.Name()
	}
	return fn.FullName()
}
