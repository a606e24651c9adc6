package performance

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// The analyzers below work with or without type information: with it they
// resolve what a call really is; without it (a syntax-only review) they
// match the package name the file imports, and stay silent where only
// types could tell.

// RegexpInLoop reports a regular expression compiled inside a loop from a
// pattern the loop does not change (a constant, or with types a parameter
// or variable set before the loop and not assigned in it), or compiled
// from a constant pattern inside an HTTP handler: it is compiled again on
// every iteration or request.
var RegexpInLoop = &analysis.Analyzer{
	Name:     "regexpinloop",
	Doc:      "report regexp.Compile/MustCompile of a loop-invariant pattern inside a loop, or of a constant one inside an HTTP handler",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runRegexpInLoop,
}

// DeferInLoop reports defer directly inside a loop: the deferred calls
// (and what they hold: files, locks, rows) pile up until the function
// returns.
var DeferInLoop = &analysis.Analyzer{
	Name:     "deferinloop",
	Doc:      "report defer statements inside loops",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runDeferInLoop,
}

// ConcatInLoop reports s += … on a string declared outside a loop, which
// copies the whole string on every iteration (quadratic).
var ConcatInLoop = &analysis.Analyzer{
	Name:     "concatinloop",
	Doc:      "report string concatenation with += inside loops",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runConcatInLoop,
}

// QueryInLoop reports a database query inside a loop: one round trip per
// iteration (the N+1 query pattern).
var QueryInLoop = &analysis.Analyzer{
	Name:     "queryinloop",
	Doc:      "report database queries (database/sql, sqlx, pgx) inside loops",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runQueryInLoop,
}

// Analyzers are the performance specialist's own analyzers.
var Analyzers = []*analysis.Analyzer{RegexpInLoop, DeferInLoop, ConcatInLoop, QueryInLoop}

// enclosingLoop returns the innermost loop whose body holds the node at
// the top of stack, without crossing a function literal (whose body runs
// when it is called, not per iteration); nil when there is none.
func enclosingLoop(stack []ast.Node) ast.Node {
	for i := len(stack) - 2; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit, *ast.FuncDecl:
			return nil
		case *ast.ForStmt:
			if stack[i+1] == n.Body {
				return n
			}
		case *ast.RangeStmt:
			if stack[i+1] == n.Body {
				return n
			}
		}
	}
	return nil
}

// enclosingFunc returns the type of the innermost function holding the
// node at the top of stack.
func enclosingFunc(stack []ast.Node) *ast.FuncType {
	for i := len(stack) - 2; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			return n.Type
		case *ast.FuncDecl:
			return n.Type
		}
	}
	return nil
}

// importName returns the name under which file imports path, or "".
func importName(file *ast.File, path string) string {
	for _, imp := range file.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err != nil || p != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}

// fileOf returns the file of the node at the bottom of stack.
func fileOf(stack []ast.Node) *ast.File {
	if f, ok := stack[0].(*ast.File); ok {
		return f
	}
	return nil
}

// pkgFunc reports whether call calls the function path.name, by types
// when there are any, else by the name the file imports path as.
func pkgFunc(pass *analysis.Pass, file *ast.File, call *ast.CallExpr, path string, names ...string) (string, bool) {
	if pass.TypesInfo != nil {
		fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func)
		if !ok || fn.Pkg() == nil || fn.Pkg().Path() != path || fn.Signature().Recv() != nil {
			return "", false
		}
		for _, n := range names {
			if fn.Name() == n {
				return n, true
			}
		}
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || file == nil || id.Name != importName(file, path) {
		return "", false
	}
	for _, n := range names {
		if sel.Sel.Name == n {
			return n, true
		}
	}
	return "", false
}

// constantString reports whether e is a constant string: a literal, or
// by types any constant expression.
func constantString(pass *analysis.Pass, e ast.Expr) bool {
	if pass.TypesInfo != nil {
		tv, ok := pass.TypesInfo.Types[e]
		return ok && tv.Value != nil
	}
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.STRING
}

// isHandler reports whether ft is an HTTP handler's signature: it takes an
// http.ResponseWriter and an *http.Request.
func isHandler(pass *analysis.Pass, file *ast.File, ft *ast.FuncType) bool {
	if ft == nil || ft.Params == nil {
		return false
	}
	var w, r bool
	for _, field := range ft.Params.List {
		if pass.TypesInfo != nil {
			t := pass.TypesInfo.TypeOf(field.Type)
			if t == nil {
				continue
			}
			switch types.TypeString(t, nil) {
			case "net/http.ResponseWriter":
				w = true
			case "*net/http.Request":
				r = true
			}
			continue
		}
		name := importName(file, "net/http")
		if name == "" {
			return false
		}
		switch types.ExprString(field.Type) {
		case name + ".ResponseWriter":
			w = true
		case "*" + name + ".Request":
			r = true
		}
	}
	return w && r
}

func runRegexpInLoop(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.WithStack([]ast.Node{(*ast.CallExpr)(nil)}, func(n ast.Node, push bool, stack []ast.Node) bool {
		if !push {
			return true
		}
		call := n.(*ast.CallExpr)
		fn, ok := pkgFunc(pass, fileOf(stack), call, "regexp", "Compile", "MustCompile", "CompilePOSIX", "MustCompilePOSIX")
		if !ok || len(call.Args) != 1 {
			return true
		}
		constant := constantString(pass, call.Args[0])
		loop := enclosingLoop(stack)
		switch {
		case loop != nil && constant:
			pass.Reportf(call.Pos(), "regexp.%s compiles a constant pattern on every iteration of the loop\n"+
				"Compiling a regular expression is far more expensive than matching with it. Compile it once, in a package-level variable (var re = regexp.MustCompile(…)), and use that.", fn)
		case loop != nil && loopInvariant(pass, call.Args[0], loop):
			pass.Reportf(call.Pos(), "regexp.%s compiles the same pattern on every iteration of the loop\n"+
				"The pattern does not change inside the loop, and compiling a regular expression is far more expensive than matching with it. Compile it once, before the loop, and use the result in it.", fn)
		case constant && isHandler(pass, fileOf(stack), enclosingFunc(stack)):
			pass.Reportf(call.Pos(), "regexp.%s compiles a constant pattern on every request\n"+
				"This handler compiles the same regular expression for each request. Compile it once, in a package-level variable (var re = regexp.MustCompile(…)), and use that.", fn)
		}
		return true
	})
	return nil, nil
}

// loopInvariant reports whether e has the same value on every iteration
// of loop: constants, and variables declared outside the loop that
// nothing in it assigns to or takes the address of, combined with + or
// parentheses. It needs types; without them nothing is invariant.
func loopInvariant(pass *analysis.Pass, e ast.Expr, loop ast.Node) bool {
	if pass.TypesInfo == nil {
		return false
	}
	if constantString(pass, e) {
		return true
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.BinaryExpr:
		return e.Op == token.ADD && loopInvariant(pass, e.X, loop) && loopInvariant(pass, e.Y, loop)
	case *ast.Ident:
		v, ok := pass.TypesInfo.Uses[e].(*types.Var)
		if !ok || v.IsField() || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() || (v.Pos() >= loop.Pos() && v.Pos() < loop.End()) {
			// Package variables may change anywhere.
			return false
		}
		return !changedIn(pass, v, loop)
	}
	return false
}

// changedIn reports whether anything in n assigns to v or takes its
// address.
func changedIn(pass *analysis.Pass, v *types.Var, n ast.Node) bool {
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && (pass.TypesInfo.Uses[id] == v || pass.TypesInfo.Defs[id] == v)
	}
	changed := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			changed = changed || slices.ContainsFunc(n.Lhs, is)
		case *ast.IncDecStmt:
			changed = changed || is(n.X)
		case *ast.UnaryExpr:
			changed = changed || (n.Op == token.AND && is(n.X))
		case *ast.RangeStmt:
			changed = changed || (n.Key != nil && is(n.Key)) || (n.Value != nil && is(n.Value))
		}
		return !changed
	})
	return changed
}

func runDeferInLoop(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.WithStack([]ast.Node{(*ast.DeferStmt)(nil)}, func(n ast.Node, push bool, stack []ast.Node) bool {
		if push && enclosingLoop(stack) != nil {
			pass.Reportf(n.Pos(), "defer inside a loop runs only when the function returns\n"+
				"Every iteration adds a deferred call, and whatever it releases (a file, a lock, rows, a response body) stays held until the whole loop and function finish. Move the loop body into a function of its own, or release the resource explicitly at the end of the iteration.")
		}
		return true
	})
	return nil, nil
}

func runConcatInLoop(pass *analysis.Pass) (any, error) {
	if pass.TypesInfo == nil {
		// Without types, += on a number looks the same.
		return nil, nil
	}
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.WithStack([]ast.Node{(*ast.AssignStmt)(nil)}, func(n ast.Node, push bool, stack []ast.Node) bool {
		as := n.(*ast.AssignStmt)
		if !push || as.Tok != token.ADD_ASSIGN || len(as.Lhs) != 1 {
			return true
		}
		loop := enclosingLoop(stack)
		if loop == nil {
			return true
		}
		id, ok := ast.Unparen(as.Lhs[0]).(*ast.Ident)
		if !ok {
			return true
		}
		v, ok := pass.TypesInfo.Uses[id].(*types.Var)
		if !ok {
			return true
		}
		if b, ok := v.Type().Underlying().(*types.Basic); !ok || b.Info()&types.IsString == 0 {
			return true
		}
		// A string declared inside the loop starts afresh each time: only
		// one that grows across iterations is quadratic.
		if v.Pos() >= loop.Pos() && v.Pos() < loop.End() {
			return true
		}
		pass.Reportf(as.Pos(), "string concatenation with += in a loop copies the whole string on every iteration\n"+
			"Building a string this way takes time quadratic in its length. Use a strings.Builder (or a bytes.Buffer) and call String once after the loop.")
		return true
	})
	return nil, nil
}

// queryMethods are the methods that make a round trip to the database.
var queryMethods = map[string]bool{
	"Query": true, "QueryContext": true, "QueryRow": true, "QueryRowContext": true,
	"Exec": true, "ExecContext": true,
	// sqlx
	"Get": true, "GetContext": true, "Select": true, "SelectContext": true,
	"Queryx": true, "QueryxContext": true, "QueryRowx": true, "QueryRowxContext": true,
	"NamedExec": true, "NamedExecContext": true, "NamedQuery": true, "NamedQueryContext": true,
}

// databasePackages are the packages whose query methods count.
var databasePackages = []string{
	"database/sql",
	"github.com/jmoiron/sqlx",
	"github.com/jackc/pgx/v5", "github.com/jackc/pgx/v5/pgxpool", "github.com/jackc/pgx/v5/pgconn",
	"github.com/jackc/pgx/v4", "github.com/jackc/pgx/v4/pgxpool",
}

func isDatabasePackage(path string) bool {
	for _, p := range databasePackages {
		if path == p {
			return true
		}
	}
	return false
}

// isQuery reports whether call is a query method of a database package's
// type; without types, a query method called on anything in a file that
// imports one (and no other candidate) is taken as one.
func isQuery(pass *analysis.Pass, file *ast.File, call *ast.CallExpr) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !queryMethods[sel.Sel.Name] {
		return "", false
	}
	if pass.TypesInfo != nil {
		s := pass.TypesInfo.Selections[sel]
		if s == nil {
			return "", false
		}
		fn, ok := s.Obj().(*types.Func)
		if !ok || fn.Pkg() == nil || !isDatabasePackage(fn.Pkg().Path()) {
			return "", false
		}
		return sel.Sel.Name, true
	}
	if file == nil {
		return "", false
	}
	for _, p := range databasePackages {
		if importName(file, p) != "" {
			// Get and Select are too common a name to guess on.
			if sel.Sel.Name == "Get" || sel.Sel.Name == "Select" {
				return "", false
			}
			return sel.Sel.Name, true
		}
	}
	return "", false
}

// searches reports whether a loop breaks out of itself: it looks for the
// first thing that works (a row under one of a few aliases, a replica
// that answers), not one round trip per item (prest 8313b87 looks a
// stored query up under the database's alias, then under none).
func searches(loop ast.Node) bool {
	var body *ast.BlockStmt
	switch l := loop.(type) {
	case *ast.ForStmt:
		body = l.Body
	case *ast.RangeStmt:
		body = l.Body
	}
	found := false
	var visit func(n ast.Node, nested bool) bool
	visit = func(n ast.Node, nested bool) bool {
		if found || n == nil {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			// A plain break in these ends them, not the loop: only a
			// labelled one may leave it.
			ast.Inspect(n, func(m ast.Node) bool {
				if m == ast.Node(n) {
					return true
				}
				return visit(m, true)
			})
			return false
		case *ast.BranchStmt:
			if n.Tok == token.BREAK && (!nested || n.Label != nil) {
				found = true
			}
		}
		return true
	}
	ast.Inspect(body, func(n ast.Node) bool { return visit(n, false) })
	return found
}

func runQueryInLoop(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.WithStack([]ast.Node{(*ast.CallExpr)(nil)}, func(n ast.Node, push bool, stack []ast.Node) bool {
		loop := enclosingLoop(stack)
		if !push || loop == nil || searches(loop) {
			return true
		}
		call := n.(*ast.CallExpr)
		m, ok := isQuery(pass, fileOf(stack), call)
		if !ok {
			return true
		}
		category := "query"
		if strings.HasPrefix(m, "Exec") || strings.HasPrefix(m, "NamedExec") {
			category = "exec"
		}
		pass.Report(analysis.Diagnostic{
			Pos:      call.Pos(),
			End:      call.End(),
			Category: category,
			Message: "database " + m + " inside a loop: one round trip per iteration (N+1 queries)\n" +
				"Each iteration waits for the database. Fetch the rows in one query (WHERE id = ANY($1), IN (…), a JOIN) or batch the statements, outside the loop.",
		})
		return true
	})
	return nil, nil
}
