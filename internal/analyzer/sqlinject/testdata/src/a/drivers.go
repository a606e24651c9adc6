package a

import (
	"context"
	"fmt"

	pgx4 "github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jmoiron/sqlx"
	"gorm.io/gorm"
)

func pgxConn(ctx context.Context, c *pgx.Conn, name string) {
	c.Query(ctx, "SELECT * FROM users WHERE name = '"+name+"'")          // want `\(\*pgx\.Conn\)\.Query is built with string concatenation`
	c.Exec(ctx, fmt.Sprintf("DELETE FROM %s", name))                     // want `\(\*pgx\.Conn\)\.Exec is built with fmt\.Sprintf`
	c.Prepare(ctx, name, "SELECT * FROM users WHERE id = $1")            // ok: the statement's name is not the query
	c.Exec(ctx, "DROP TABLE "+pgx.Identifier{"public", name}.Sanitize()) // ok: quoted by pgx
}

func pgxTx(ctx context.Context, tx pgx.Tx, name string) {
	tx.QueryRow(ctx, "SELECT * FROM users WHERE name = '"+name+"'") // want `pgx\.Tx\.QueryRow is built with string concatenation`
	tx.Exec(ctx, "SELECT * FROM users WHERE name = $1", name)       // ok: placeholders
}

func pgxPool(ctx context.Context, p *pgxpool.Pool, name string) {
	p.Query(ctx, fmt.Sprintf("SELECT * FROM users WHERE name = '%s'", name)) // want `\(\*pgxpool\.Pool\)\.Query is built with fmt\.Sprintf`
}

func pgxBatch(b *pgx.Batch, b4 *pgx4.Batch, c4 *pgx4.Conn, name string) {
	b.Queue("SELECT * FROM users WHERE name = '" + name + "'")                        // want `\(\*pgx\.Batch\)\.Queue is built with string concatenation`
	b4.Queue("SELECT * FROM users WHERE name = '" + name + "'")                       // want `\(\*pgx\.Batch\)\.Queue is built with string concatenation`
	c4.Query(context.Background(), "SELECT * FROM "+pgx4.Identifier{name}.Sanitize()) // ok: quoted by pgx
}

func sqlxDB(db *sqlx.DB, tx *sqlx.Tx, q sqlx.Queryer, name string, dest any) {
	db.Get(dest, "SELECT * FROM users WHERE name = '"+name+"'")                 // want `\(\*sqlx\.DB\)\.Get is built with string concatenation`
	db.Select(dest, fmt.Sprintf("SELECT * FROM users WHERE name = '%s'", name)) // want `\(\*sqlx\.DB\)\.Select is built`
	db.NamedExec("UPDATE users SET name = '"+name+"' WHERE id = :id", dest)     // want `\(\*sqlx\.DB\)\.NamedExec is built`
	db.MustExec(fmt.Sprintf("DELETE FROM %s", name))                            // want `\(\*sqlx\.DB\)\.MustExec is built`
	db.Queryx(db.Rebind("SELECT * FROM users WHERE name = '" + name + "'"))     // want `\(\*sqlx\.DB\)\.Queryx is built`
	db.Query("SELECT * FROM users WHERE name = '" + name + "'")                 // want `\(\*sql\.DB\)\.Query is built`
	tx.Get(dest, "SELECT * FROM users WHERE name = '"+name+"'")                 // want `\(\*sqlx\.Tx\)\.Get is built`
	q.QueryRowx("SELECT * FROM users WHERE name = '" + name + "'")              // want `sqlx\.Queryer\.QueryRowx is built`
	sqlx.Get(q, dest, "SELECT * FROM users WHERE name = '"+name+"'")            // want `sqlx\.Get is built`
	query, args, _ := sqlx.In("SELECT * FROM users WHERE id IN (?)", []int{1, 2})
	db.Select(dest, db.Rebind(query), args...) // ok: sqlx.In of a constant
}

func gormDB(db *gorm.DB, name, sort string, out any) {
	db.Raw("SELECT * FROM users WHERE name = '" + name + "'").Find(out) // want `\(\*gorm\.DB\)\.Raw is built with string concatenation`
	db.Exec(fmt.Sprintf("DELETE FROM users WHERE name = '%s'", name))   // want `\(\*gorm\.DB\)\.Exec is built with fmt\.Sprintf`
	db.Where(fmt.Sprintf("name = '%s'", name)).Find(out)                // want `\(\*gorm\.DB\)\.Where is built with fmt\.Sprintf`
	db.Order(sort + " DESC").Find(out)                                  // want `\(\*gorm\.DB\)\.Order is built with string concatenation`
	db.Where("name = ?", name).Order("created_at DESC").Find(out)       // ok: placeholders and a constant
	db.Where(map[string]any{"name": name}).Find(out)                    // ok: not text
}
