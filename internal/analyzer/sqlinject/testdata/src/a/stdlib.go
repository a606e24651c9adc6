package a

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/squirrel"
	"github.com/lib/pq"
)

type store struct {
	db    *sql.DB
	table string
}

// The four inline shapes.

func inlineSprintf(db *sql.DB, id string) error {
	rows, err := db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = '%s'", id)) // want `SQL injection: the query passed to \(\*sql\.DB\)\.Query is built with fmt\.Sprintf from a value that is not constant`
	if err != nil {
		return err
	}
	return rows.Close()
}

func returned(db *sql.DB, id string) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = '%s'", id)) // want `\(\*sql\.DB\)\.Query is built with fmt\.Sprintf`
}

func formatVariable(db *sql.DB, field string) {
	const q = "UPDATE users SET %s = 1"
	db.Exec(fmt.Sprintf(q, field)) // want `\(\*sql\.DB\)\.Exec is built with fmt\.Sprintf`
}

func (s *store) concat(name string) {
	s.db.Query("SELECT * FROM users WHERE name = '" + name + "'") // want `\(\*sql\.DB\)\.Query is built with string concatenation`
}

// Through a local variable, on another line than the sink.

func local(ctx context.Context, tx *sql.Tx, name string) {
	q := fmt.Sprintf("DELETE FROM users WHERE name = '%s'", name) // want `\(\*sql\.Tx\)\.ExecContext is built with fmt\.Sprintf`
	tx.ExecContext(ctx, q)
}

// A phi of several assignments, and q += … in branches.

func branches(conn *sql.Conn, ctx context.Context, name, email string, admin bool) {
	q := "SELECT id FROM users WHERE true"
	if name != "" {
		q += " AND name = '" + name + "'" // want `\(\*sql\.Conn\)\.QueryRowContext is built with string concatenation`
	}
	if email != "" {
		q += fmt.Sprintf(" AND email = '%s'", email) // want `fmt\.Sprintf`
	}
	if admin {
		q += " AND admin" // ok: a constant
	}
	conn.QueryRowContext(ctx, q)
}

func phi(db *sql.DB, byName bool, v string) {
	var q string
	if byName {
		q = "SELECT id FROM users WHERE name = '" + v + "'" // want `string concatenation`
	} else {
		q = "SELECT id FROM users WHERE email = $1"
	}
	db.Prepare(q)
}

// strings.Builder and bytes.Buffer.

func builder(db *sql.DB, cols []string, name string) {
	var b strings.Builder
	b.WriteString("SELECT id FROM users WHERE name = '")
	b.WriteString(name) // want `\(\*sql\.DB\)\.Query is built with a strings\.Builder`
	b.WriteString("'")
	db.Query(b.String())
}

func buffer(db *sql.DB, name string) {
	buf := new(bytes.Buffer)
	fmt.Fprintf(buf, "SELECT id FROM users WHERE name = '%s'", name) // want `fmt\.Fprintf`
	db.Exec(buf.String())
}

// A helper that builds, and a helper that runs.

func where(name string) string {
	return "name = '" + name + "'" // want `string concatenation`
}

func viaHelper(db *sql.DB, name string) {
	db.Query("SELECT id FROM users WHERE " + where(name))
}

func (s *store) exec(q string) { s.db.Exec(q) }

func (s *store) viaRunner(id string) {
	s.exec("DELETE FROM users WHERE id = '" + id + "'") // want `\(\*sql\.DB\)\.Exec in store\.exec is built with string concatenation`
}

// A closure's captured query.

func closure(db *sql.DB, name string) {
	q := "SELECT 1"
	run := func() { db.Query(q) }
	q = "SELECT id FROM users WHERE name = '" + name + "'" // want `Query in a function literal in closure is built with string concatenation`
	run()
}

// Not reported.

func constant(db *sql.DB) {
	db.Query("SELECT id FROM users WHERE name = $1", "x") // ok: placeholders
	const table = "users"
	db.Query("SELECT id FROM " + table)               // ok: a constant
	db.Query(fmt.Sprintf("SELECT id FROM %s", table)) // ok: a constant
}

func integers(db *sql.DB, id int, limit int64, ok bool) {
	db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = %d LIMIT %d", id, limit)) // ok: integers cannot inject
	db.Query("SELECT * FROM users WHERE id = " + strconv.Itoa(id))                 // ok: an integer's text
	db.Query(fmt.Sprintf("SELECT * FROM users WHERE admin = %v", ok))              // ok: a boolean
}

func placeholders(db *sql.DB, ids []string) {
	var ph []string
	args := []any{}
	for i, id := range ids {
		ph = append(ph, "$"+strconv.Itoa(i+1))
		args = append(args, id)
	}
	db.Query("SELECT * FROM users WHERE id IN ("+strings.Join(ph, ", ")+")", args...) // ok: placeholders only
	marks := strings.Repeat("?, ", len(ids))
	db.Query("SELECT * FROM users WHERE id IN (" + marks + "?)") // ok: placeholders only
	ps := make([]string, len(ids))
	for i := range ids {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	db.Query(fmt.Sprintf("SELECT * FROM users WHERE id IN (%s)", strings.Join(ps, ","))) // ok: placeholders only
}

func quoted(db *sql.DB, table, name string) {
	db.Exec("DROP TABLE " + pq.QuoteIdentifier(table))                                                      // ok: quoted by the driver
	db.Exec(fmt.Sprintf("SELECT * FROM %s WHERE n = %s", pq.QuoteIdentifier(table), pq.QuoteLiteral(name))) // ok: quoted by the driver
	db.Exec(`DROP TABLE "` + strings.ReplaceAll(table, `"`, `""`) + `"`)                                    // ok: the quote doubled
	db.Exec("DROP TABLE " + quoteIdent(table))                                                              // ok: a helper that escapes
}

func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

var sortColumns = map[string]string{"name": "name", "created": "created_at"}

func sortedBy(db *sql.DB, sort, dir string) {
	col, ok := sortColumns[sort]
	if !ok {
		col = "id"
	}
	db.Query("SELECT * FROM users ORDER BY " + col) // ok: a column from a constant map
	var order string
	switch dir {
	case "asc":
		order = "ASC"
	case "desc":
		order = "DESC"
	default:
		return
	}
	db.Query("SELECT * FROM users ORDER BY id " + order) // ok: a switch of constants
	local := map[string]string{"a": "x", "b": "y"}
	db.Query("SELECT " + local[sort] + " FROM users") // ok: a local map of constants
}

func newStore(db *sql.DB) *store { return &store{db: db, table: "users"} }

func (s *store) fromField(id int) {
	s.db.Query(fmt.Sprintf("SELECT * FROM %s WHERE id = $1", s.table), id) // ok: a field only ever set to a constant
}

func passedThrough(db *sql.DB, q string) {
	db.Query(q) // ok: not built here
}

var tableName = "users"

func fromGlobal(db *sql.DB) {
	db.Query("SELECT * FROM " + tableName) // ok: an unexported variable set only to a constant
}

func innerOnly(db *sql.DB, ids string) {
	db.Query("SELECT 1 FROM t WHERE " + cond("a") + " AND " + cond("b")) // ok: a helper called with constants
}

func cond(col string) string { return col + " = 1" }

func notSQL(name string) string {
	return fmt.Sprintf("hello %s", name) // ok: not a query
}

// Store methods that take a fragment of SQL from their callers, all in
// the package.

type Querier interface {
	GetBy(condition string, value any) error
}

func (s *store) GetBy(condition string, value any) error {
	row := s.db.QueryRow("SELECT * FROM users WHERE "+condition, value) // ok: every caller passes a constant
	return row.Err()
}

func (s *store) byAlias(alias string) error { return s.GetBy("alias = ?", alias) }

func byHost(q Querier, host string) error { return q.GetBy("host = ?", host) }

func (s *store) upsert(cols ...string) string {
	return "ON CONFLICT(" + strings.Join(cols, ", ") + ") DO UPDATE SET" // ok: every caller passes constants
}

func (s *store) setAttr(id int, v string) {
	s.db.Exec("INSERT INTO attrs (id, value) VALUES (?, ?) "+s.upsert("id")+" value = ?", id, v, v)
}

func (s *store) byNameUnsafe(name string) error {
	return s.GetBy("name = '"+name+"'", nil) // want `\(\*sql\.DB\)\.QueryRow in store\.GetBy is built with string concatenation`
}

func built(db *sql.DB, name string) {
	query, args, _ := squirrel.Select("id").From("users").Where("name = ?", name).ToSql()
	db.Query(query+" FOR UPDATE", args...) // ok: a query builder's text
}

func (s *store) run(q string) { s.db.Exec(q) }

const querySubscribers = "SELECT * FROM subscribers WHERE %query% ORDER BY %order%"

func template(db *sql.DB, cond, order string) {
	stmt := strings.ReplaceAll(querySubscribers, "%query%", cond) // want `\(\*sql\.DB\)\.Query is built with strings\.ReplaceAll`
	stmt = strings.ReplaceAll(stmt, "%order%", "id")
	db.Query(stmt)
}

var sortFields = []string{"name", "created_at"}

func contains(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var allowedTables = map[string]bool{"users": true, "groups": true}

func guardedSort(db *sql.DB, orderBy, order, table, col string) error {
	if !contains(orderBy, sortFields) {
		orderBy = "created_at"
	}
	if order != "ASC" && order != "DESC" {
		order = "DESC"
	}
	db.Query("SELECT * FROM users ORDER BY " + orderBy + " " + order) // ok: checked against constants
	if !allowedTables[table] {
		return nil
	}
	if _, ok := allowedTables[table]; !ok {
		return nil
	}
	db.Query("SELECT * FROM " + table) // ok: a key of a map of constants
	if col == "name" || col == "email" {
		db.Query("SELECT " + col + " FROM users") // ok: compared with constants
	}
	db.Query("SELECT " + col + " FROM users") // want `string concatenation`
	return nil
}

func otherFormatters(db *sql.DB, name string, n int) {
	db.Query(fmt.Sprint("SELECT * FROM users WHERE name = '", name, "'"))             // want `built with fmt\.Sprint from`
	db.Query(fmt.Sprintln("SELECT * FROM users WHERE name =", name))                  // want `built with fmt\.Sprintln from`
	db.Query(string(fmt.Appendf(nil, "SELECT * FROM users WHERE name = '%s'", name))) // want `built with fmt\.Appendf from`
	db.Query(fmt.Sprint("SELECT * FROM users LIMIT ", n))                             // ok: an integer
	var buf bytes.Buffer
	buf.WriteString("SELECT * FROM users WHERE name = '")
	buf.WriteString(name) // want `built with a bytes\.Buffer from`
	buf.WriteByte('\'')
	db.Query(buf.String())
	var b strings.Builder
	b.WriteString("SELECT * FROM users WHERE id IN (")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(i+1)) // ok: placeholders
	}
	b.WriteByte(')')
	db.Query(b.String())
}
