// Package sqlinject is an analyzer that reports SQL text built from values
// that are not constant and handed to a database API as the query.
//
// # The rule
//
// A sink is the query argument of
//
//   - database/sql: (*DB), (*Tx) and (*Conn) Query, QueryContext, QueryRow,
//     QueryRowContext, Exec, ExecContext, Prepare, PrepareContext (a *Stmt
//     runs the text given to Prepare, so its Prepare is the sink);
//   - pgx v4 and v5: (*pgx.Conn), pgx.Tx, (*pgxpool.Pool), (*pgxpool.Conn),
//     (*pgxpool.Tx) Query, QueryRow, Exec, Prepare, and (*pgx.Batch).Queue;
//     (*pgconn.PgConn) Exec and ExecParams;
//   - sqlx: (*DB), (*Tx), (*Conn) and the Queryer/Execer/Ext interfaces:
//     the database/sql methods plus Queryx, QueryRowx, Get, Select,
//     NamedExec, NamedQuery, MustExec, Preparex, PrepareNamed and their
//     Context forms, and the package functions of the same names;
//   - gorm (gorm.io/gorm and github.com/jinzhu/gorm): (*DB) Raw, Exec,
//     Where, Or, Not, Order, Having, Joins and Group.
//
// Types are matched by package path and type name, so the libraries need
// not be in the analysed module's go.mod at any particular version. The
// query is the last string parameter before the variadic arguments (the
// first parameter for gorm's Where and Order, which take any).
//
// The analyzer follows the query back through the SSA form of the function
// (so every statement form counts: an inline argument, a return, a local
// variable, a phi of several assignments, q += … in branches, a variable
// captured by a closure, the parameter of a helper of the same package
// whose callers are known, the result of a helper of the same package) and
// reports every place where the text is built from a value that is not
// safe:
//
//   - fmt.Sprintf, Sprint, Sprintln, Appendf (and Fprintf into a builder);
//   - string concatenation with + or +=;
//   - writes to a local strings.Builder or bytes.Buffer;
//   - strings.Join of such elements.
//
// A part is safe when it is a constant; a number or boolean (whatever the
// verb, its text cannot close a quote); the result of strconv's Itoa,
// FormatInt, FormatUint, FormatFloat or FormatBool (so "$" +
// strconv.Itoa(i) placeholder lists pass); an identifier or literal quoted
// with the driver's own function (pq.QuoteIdentifier, pq.QuoteLiteral,
// pgx.Identifier{…}.Sanitize(), (*pgconn.PgConn).EscapeString, gorm's
// (*Statement).Quote) or escaped by doubling its quote character with
// strings.ReplaceAll/Replace; a value looked up in a map whose every value
// is constant (a map literal of constants, local or in a package variable
// the package never writes otherwise); a variable whose every assignment
// is safe (a switch whose every case assigns a constant is a phi of
// constants); an unexported struct field whose every store in the package
// is safe; the parameter of an unexported function of the package, called
// directly only, whose every caller passes a safe value; strings.Join or
// strings.Repeat of safe parts.
//
// The report is placed where the unsafe part enters the text (the
// fmt.Sprintf call, the + or +=, the WriteString), which is where the fix
// goes and where gosec's G201/G202 put theirs; the message names the sink,
// and the function calling it when that is another one (no line number:
// the text of a finding must not change when lines above it move). One
// report a line; none in _test.go files, which are not attack surface.
//
// # Limits
//
// The analysis stays inside one package: a query built by a function of
// another package, or passed to a sink through an interface of the
// program's own (a DBTX interface as sqlc generates) is not followed. A
// builder passed to another function is trusted with what it writes
// there; slices are followed through append, make and literals only.
// Values from struct fields that are exported, from function results of
// other packages and from parameters of exported functions are unknown
// and so unsafe when they are spliced in; a query that is only passed
// through (db.Query(q) with q a parameter) is not reported, since nothing
// was built here. The analyzer does not know where a value comes from
// (gosec's taint analysis, G701, does): a non-constant table name chosen
// by the program itself is reported unless it is chosen from a constant
// set as above.
package sqlinject
