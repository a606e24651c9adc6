package sqlinject

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// methods is a set of method or function names.
type methods map[string]bool

func set(names ...string) methods {
	m := methods{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

var (
	stdlibMethods = set("Query", "QueryContext", "QueryRow", "QueryRowContext",
		"Exec", "ExecContext", "Prepare", "PrepareContext")
	pgxMethods  = set("Query", "QueryRow", "Exec", "Prepare", "QueryFunc")
	sqlxMethods = set("Query", "QueryContext", "QueryRow", "QueryRowContext",
		"Exec", "ExecContext", "Prepare", "PrepareContext",
		"Queryx", "QueryxContext", "QueryRowx", "QueryRowxContext",
		"Get", "GetContext", "Select", "SelectContext",
		"NamedExec", "NamedExecContext", "NamedQuery", "NamedQueryContext",
		"MustExec", "MustExecContext", "Preparex", "PreparexContext",
		"PrepareNamed", "PrepareNamedContext")
	gormMethods = set("Raw", "Exec", "Where", "Or", "Not", "Order", "Having", "Joins", "Group")
)

// sinkTypes maps "package path.Type" (or "package path." for package
// functions) to the methods whose query argument is a sink.
var sinkTypes = map[string]methods{
	"database/sql.DB":   stdlibMethods,
	"database/sql.Tx":   stdlibMethods,
	"database/sql.Conn": stdlibMethods,

	"github.com/jackc/pgx/v5.Conn":          pgxMethods,
	"github.com/jackc/pgx/v5.Tx":            pgxMethods,
	"github.com/jackc/pgx/v5.Batch":         set("Queue"),
	"github.com/jackc/pgx/v5/pgxpool.Pool":  pgxMethods,
	"github.com/jackc/pgx/v5/pgxpool.Conn":  pgxMethods,
	"github.com/jackc/pgx/v5/pgxpool.Tx":    pgxMethods,
	"github.com/jackc/pgx/v5/pgconn.PgConn": set("Exec", "ExecParams", "Prepare"),
	"github.com/jackc/pgx/v4.Conn":          pgxMethods,
	"github.com/jackc/pgx/v4.Tx":            pgxMethods,
	"github.com/jackc/pgx/v4.Batch":         set("Queue"),
	"github.com/jackc/pgx/v4/pgxpool.Pool":  pgxMethods,
	"github.com/jackc/pgx/v4/pgxpool.Conn":  pgxMethods,
	"github.com/jackc/pgconn.PgConn":        set("Exec", "ExecParams", "Prepare"),

	"github.com/jmoiron/sqlx.DB":              sqlxMethods,
	"github.com/jmoiron/sqlx.Tx":              sqlxMethods,
	"github.com/jmoiron/sqlx.Conn":            sqlxMethods,
	"github.com/jmoiron/sqlx.Queryer":         sqlxMethods,
	"github.com/jmoiron/sqlx.QueryerContext":  sqlxMethods,
	"github.com/jmoiron/sqlx.Execer":          sqlxMethods,
	"github.com/jmoiron/sqlx.ExecerContext":   sqlxMethods,
	"github.com/jmoiron/sqlx.Ext":             sqlxMethods,
	"github.com/jmoiron/sqlx.ExtContext":      sqlxMethods,
	"github.com/jmoiron/sqlx.Preparer":        sqlxMethods,
	"github.com/jmoiron/sqlx.PreparerContext": sqlxMethods,
	"github.com/jmoiron/sqlx.":                sqlxMethods,

	"gorm.io/gorm.DB":           gormMethods,
	"github.com/jinzhu/gorm.DB": gormMethods,
}

// sink returns the name of the database API call calls, and its query
// argument, when it is one.
func sink(call *ssa.CallCommon) (string, ssa.Value, bool) {
	fn, args := callee(call)
	if fn == nil || fn.Pkg() == nil {
		return "", nil, false
	}
	recvName, ptr := recvType(fn)
	ms, ok := sinkTypes[fn.Pkg().Path()+"."+recvName]
	if !ok || !ms[fn.Name()] {
		return "", nil, false
	}
	sig := fn.Signature()
	n := sig.Params().Len()
	if sig.Variadic() {
		n--
	}
	idx := -1
	for i := range n {
		if isString(sig.Params().At(i).Type()) {
			idx = i
		}
	}
	if idx < 0 {
		idx = 0
	}
	if idx >= len(args) {
		return "", nil, false
	}
	name := fn.Pkg().Name() + "."
	switch {
	case recvName == "":
	case ptr:
		name = "(*" + name + recvName + ")."
	default:
		name += recvName + "."
	}
	return name + fn.Name(), args[idx], true
}

// callee returns the function or method call calls, and its arguments
// without the receiver; nil when it is dynamic.
func callee(call *ssa.CallCommon) (*types.Func, []ssa.Value) {
	if call.IsInvoke() {
		return call.Method, call.Args
	}
	f := call.StaticCallee()
	if f == nil {
		return nil, nil
	}
	obj, ok := f.Object().(*types.Func)
	if !ok {
		return nil, nil
	}
	args := call.Args
	if obj.Signature().Recv() != nil && len(args) > 0 {
		args = args[1:]
	}
	return obj, args
}

// recvType returns the name of fn's receiver type ("" for a function) and
// whether it is a pointer.
func recvType(fn *types.Func) (string, bool) {
	recv := fn.Signature().Recv()
	if recv == nil {
		return "", false
	}
	t := recv.Type()
	ptr := false
	if p, ok := t.(*types.Pointer); ok {
		t, ptr = p.Elem(), true
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Obj().Name(), ptr
	}
	return "", false
}

// funcIs reports whether fn is the function or method path.name, where
// name is "Func" or "Type.Method".
func funcIs(fn *types.Func, path string, names ...string) bool {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != path {
		return false
	}
	full := fn.Name()
	if r, _ := recvType(fn); r != "" {
		full = r + "." + full
	}
	for _, n := range names {
		if n == full {
			return true
		}
	}
	return false
}

// quoting reports whether fn quotes or escapes its argument for SQL with
// the driver's own function.
func quoting(fn *types.Func) bool {
	return funcIs(fn, "github.com/lib/pq", "QuoteIdentifier", "QuoteLiteral") ||
		funcIs(fn, "github.com/jackc/pgx/v5", "Identifier.Sanitize") ||
		funcIs(fn, "github.com/jackc/pgx/v4", "Identifier.Sanitize") ||
		funcIs(fn, "github.com/jackc/pgx/v5/pgconn", "PgConn.EscapeString") ||
		funcIs(fn, "github.com/jackc/pgconn", "PgConn.EscapeString") ||
		funcIs(fn, "gorm.io/gorm", "Statement.Quote") ||
		funcIs(fn, "strconv", "Itoa", "FormatInt", "FormatUint", "FormatFloat", "FormatBool")
}

// queryBuilder reports whether fn returns the text of a query built by
// a query builder, which puts values in placeholders: huandu's
// go-sqlbuilder, squirrel and goqu.
func queryBuilder(fn *types.Func) bool {
	if fn == nil || fn.Pkg() == nil {
		return false
	}
	switch path := fn.Pkg().Path(); {
	case path == "github.com/huandu/go-sqlbuilder":
		return fn.Name() == "Build" || fn.Name() == "BuildWithFlavor" || fn.Name() == "BuildNamed"
	case path == "github.com/Masterminds/squirrel":
		return fn.Name() == "ToSql" || fn.Name() == "MustSql"
	case strings.HasPrefix(path, "github.com/doug-martin/goqu"):
		return fn.Name() == "ToSQL"
	}
	return false
}

// passThrough returns the index of the argument (receiver excluded) whose
// text fn returns changed only in ways that cannot add a quote: sqlx's
// Rebind and In, and strings' case and trimming functions; -1 otherwise.
func passThrough(fn *types.Func) int {
	switch {
	case funcIs(fn, "github.com/jmoiron/sqlx", "DB.Rebind", "Tx.Rebind", "In"):
		return 0
	case funcIs(fn, "github.com/jmoiron/sqlx", "Rebind"):
		return 1
	case funcIs(fn, "strings", "ToUpper", "ToLower", "TrimSpace", "Trim", "TrimLeft", "TrimRight", "TrimPrefix", "TrimSuffix"):
		return 0
	}
	return -1
}

// isString reports whether t is a string type.
func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// isInert reports whether values of t print without quotes of any kind:
// numbers and booleans.
func isInert(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&(types.IsInteger|types.IsFloat|types.IsBoolean|types.IsComplex) != 0
}

// quoteChars are the characters that delimit SQL literals and identifiers.
const quoteChars = "'\"`"

// isEscape reports whether replacing old with new escapes a quote
// character: doubling it or prefixing it with a backslash.
func isEscape(old, new string) bool {
	return len(old) == 1 && strings.Contains(quoteChars, old) && (new == old+old || new == `\`+old)
}
