// Package store opens quorum's database — embedded SQLite by default,
// PostgreSQL when a postgres:// URL is given — applies its schema, and runs
// River's job queue inside it, so that a write and the jobs it causes commit
// together.
//
// Domain packages own their SQL; this package gives them one way to run it on
// either backend: queries use $1-style placeholders, which both drivers bind,
// times are stored as Unix microseconds (BIGINT) and lists as JSON text.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver
)

// ErrNotFound is returned when a row that was asked for does not exist.
var ErrNotFound = errors.New("not found")

// Dialect names the SQL backend.
type Dialect string

const (
	// SQLite is the embedded default.
	SQLite Dialect = "sqlite"
	// Postgres is PostgreSQL, for several replicas.
	Postgres Dialect = "postgres"
)

// Config says which database to open.
type Config struct {
	// URL is a postgres:// URL; empty means SQLite under DataDir.
	URL string
	// DataDir holds quorum.db when URL is empty. Created if missing.
	DataDir string
	// ReadConns bounds the SQLite read pool (default 8). Writes always use one
	// connection, as River's SQLite driver requires.
	ReadConns int
}

// DB is an open quorum database.
type DB struct {
	dialect Dialect
	// SQLite: write is the single-connection pool that River and all writes
	// use; read is a pool of query-only connections for the API.
	write, read *sql.DB
	// readStmts prepares each read query once: SQLite compiling the SQL
	// text of every query was a quarter of an API request's time.
	readStmts *stmtCache
	// PostgreSQL: one pool for everything.
	pool *pgxpool.Pool
	// dataDir is SQLite's data directory.
	dataDir string

	// jobs is River's client: the one ConfigureJobs made (configured), or
	// else an insert-only one made at the first insert, so that every
	// writer — a CLI command as much as the server — can queue the jobs
	// its writes cause (webhook deliveries of the events it records).
	jobsMu     sync.Mutex
	jobs       *Jobs
	configured bool
}

// Open opens (and for SQLite creates) the database. It does not migrate;
// call Migrate.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.URL != "" {
		return openPostgres(ctx, cfg.URL)
	}
	return openSQLite(ctx, cfg)
}

// SQLitePath is where the embedded database lives in a data directory.
func SQLitePath(dataDir string) string { return filepath.Join(dataDir, "quorum.db") }

// Exposed lists the data directory and the database files (quorum.db and
// its -wal and -shm) that users other than their owner may read or write
// (for the directory: list or enter), for a warning at start. It is empty
// for PostgreSQL.
func (db *DB) Exposed() []string {
	if db.dataDir == "" {
		return nil
	}
	var out []string
	path := SQLitePath(db.dataDir)
	for _, p := range []string{db.dataDir, path, path + "-wal", path + "-shm"} {
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o077 != 0 {
			out = append(out, fmt.Sprintf("%s (%s)", p, st.Mode().Perm()))
		}
	}
	return out
}

func openSQLite(ctx context.Context, cfg Config) (*DB, error) {
	dir := cfg.DataDir
	if dir == "" {
		return nil, errors.New("open sqlite: no data directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := SQLitePath(dir)
	// The database holds webhook secrets and the cursor key: only its
	// owner may read it. SQLite creates the -wal and -shm files with the
	// database file's mode, so creating that one 0600 covers all three.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	f.Close()
	pragmas := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_time_format=sqlite"
	wconn, err := sqlite.NewConnector("file:" + url.PathEscape(path) + "?" + pragmas + "&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	write := sql.OpenDB(stmtCachingConnector{wconn})
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	n := cfg.ReadConns
	if n <= 0 {
		n = 8
	}
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	return &DB{dialect: SQLite, write: write, read: read, readStmts: &stmtCache{db: read}, dataDir: dir}, nil
}

func openPostgres(ctx context.Context, rawURL string) (*DB, error) {
	if !strings.HasPrefix(rawURL, "postgres://") && !strings.HasPrefix(rawURL, "postgresql://") {
		return nil, fmt.Errorf("database url: want postgres://… (or no url for the embedded SQLite), got %s", urlScheme(rawURL))
	}
	pcfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse database url %s: %w", redactURL(rawURL), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", redactURL(rawURL), err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect %s: %w", redactURL(rawURL), err)
	}
	return &DB{dialect: Postgres, pool: pool}, nil
}

// urlScheme names a URL's scheme and nothing else of it: a URL that is not
// PostgreSQL's may hold a password where redactURL does not look (in the
// query, or in what url.Parse takes for an opaque path).
func urlScheme(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "a url without a scheme"
	}
	return fmt.Sprintf("scheme %q", u.Scheme)
}

// redactURL drops the password from a database URL so it can be shown.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable url)"
	}
	return u.Redacted()
}

// Dialect reports the backend.
func (db *DB) Dialect() Dialect { return db.dialect }

// Close closes the database. It does not stop the job queue: call Jobs.Stop
// first.
func (db *DB) Close() error {
	if db.pool != nil {
		db.pool.Close()
		return nil
	}
	return errors.Join(db.readStmts.close(), db.read.Close(), db.write.Close())
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if db.pool != nil {
		return db.pool.Ping(ctx)
	}
	return db.read.PingContext(ctx)
}

// Querier runs SQL on the database or inside a transaction.
type Querier interface {
	// Exec runs a statement and reports the rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a query returning rows; the caller closes them.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a query returning at most one row. Scan reports
	// ErrNotFound when there is none.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Rows is a result set, as database/sql and pgx both give it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is one result row.
type Row interface {
	Scan(dest ...any) error
}

// Tx is a transaction: SQL plus jobs that commit, or roll back, with it.
type Tx interface {
	Querier
	// InsertJob enqueues a River job as part of this transaction.
	InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
	// RetryJob makes a job available at once, as part of this transaction
	// (River's JobRetry: a running job is left alone).
	RetryJob(ctx context.Context, id int64) error
	// CancelJob cancels a job that has not finished, as part of this
	// transaction (River's JobCancel).
	CancelJob(ctx context.Context, id int64) error
}

// Reader is the querier for reads that may go to a read pool.
func (db *DB) Reader() Querier {
	if db.pool != nil {
		return pgxQuerier{db.pool}
	}
	return db.readStmts
}

// Writer is the querier for single writes outside a transaction.
func (db *DB) Writer() Querier {
	if db.pool != nil {
		return pgxQuerier{db.pool}
	}
	return sqlQuerier{db.write}
}

// InTx runs fn in a transaction, committing when it returns nil.
func (db *DB) InTx(ctx context.Context, fn func(tx Tx) error) error {
	if db.pool != nil {
		return pgx.BeginFunc(ctx, db.pool, func(ptx pgx.Tx) error {
			return fn(&pgxTx{pgxQuerier: pgxQuerier{ptx}, tx: ptx, jobs: db.inserter})
		})
	}
	stx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(&sqlTx{sqlQuerier: sqlQuerier{stx}, tx: stx, jobs: db.inserter}); err != nil {
		_ = stx.Rollback()
		return err
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// sqlConn is what *sql.DB and *sql.Tx share.
type sqlConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type sqlQuerier struct{ c sqlConn }

func (q sqlQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.c.ExecContext(ctx, query, cleanArgs(args)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQuerier) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := q.c.QueryContext(ctx, query, cleanArgs(args)...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (q sqlQuerier) QueryRow(ctx context.Context, query string, args ...any) Row {
	return row{q.c.QueryRowContext(ctx, query, cleanArgs(args)...)}
}

// stmtCache is a Querier over a *sql.DB that prepares each distinct query
// text once and reuses the statement (database/sql re-prepares it per
// connection as needed). Queries are constants in the code, so the cache is
// bounded by the program's text.
type stmtCache struct {
	db    *sql.DB
	stmts sync.Map // query text → *sql.Stmt
}

func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

func (c *stmtCache) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(ctx, cleanArgs(args)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c *stmtCache) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, cleanArgs(args)...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (c *stmtCache) QueryRow(ctx context.Context, query string, args ...any) Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return row{st.QueryRowContext(ctx, cleanArgs(args)...)}
}

func (c *stmtCache) close() error {
	var errs []error
	c.stmts.Range(func(_, v any) bool {
		errs = append(errs, v.(*sql.Stmt).Close())
		return true
	})
	return errors.Join(errs...)
}

// errRow is a Row whose query could not even be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlTx struct {
	sqlQuerier
	tx   *sql.Tx
	jobs func() (*Jobs, error)
}

func (t *sqlTx) InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	j, err := t.jobs()
	if err != nil {
		return err
	}
	_, err = j.sqlite.InsertTx(ctx, t.tx, args, opts)
	return err
}

func (t *sqlTx) RetryJob(ctx context.Context, id int64) error {
	j, err := t.jobs()
	if err != nil {
		return fmt.Errorf("retry job: %w", err)
	}
	_, err = j.sqlite.JobRetryTx(ctx, t.tx, id)
	return err
}

func (t *sqlTx) CancelJob(ctx context.Context, id int64) error {
	j, err := t.jobs()
	if err != nil {
		return fmt.Errorf("cancel job: %w", err)
	}
	_, err = j.sqlite.JobCancelTx(ctx, t.tx, id)
	return err
}

// pgxExecer is what pgxpool.Pool and pgx.Tx share.
type pgxExecer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type pgxQuerier struct{ c pgxExecer }

func (q pgxQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.c.Exec(ctx, query, cleanArgs(args)...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q pgxQuerier) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := q.c.Query(ctx, query, cleanArgs(args)...)
	if err != nil {
		return nil, err
	}
	return pgxRows{rows}, nil
}

func (q pgxQuerier) QueryRow(ctx context.Context, query string, args ...any) Row {
	return row{q.c.QueryRow(ctx, query, cleanArgs(args)...)}
}

type pgxRows struct{ pgx.Rows }

func (r pgxRows) Close() { r.Rows.Close() }

type pgxTx struct {
	pgxQuerier
	tx   pgx.Tx
	jobs func() (*Jobs, error)
}

func (t *pgxTx) InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	j, err := t.jobs()
	if err != nil {
		return err
	}
	_, err = j.pg.InsertTx(ctx, t.tx, args, opts)
	return err
}

func (t *pgxTx) RetryJob(ctx context.Context, id int64) error {
	j, err := t.jobs()
	if err != nil {
		return fmt.Errorf("retry job: %w", err)
	}
	_, err = j.pg.JobRetryTx(ctx, t.tx, id)
	return err
}

func (t *pgxTx) CancelJob(ctx context.Context, id int64) error {
	j, err := t.jobs()
	if err != nil {
		return fmt.Errorf("cancel job: %w", err)
	}
	_, err = j.pg.JobCancelTx(ctx, t.tx, id)
	return err
}

// row maps both drivers' "no rows" to ErrNotFound.
type row struct{ r Row }

func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// Micros is how times are stored: Unix microseconds, UTC.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros turns a stored time back into a UTC time.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
