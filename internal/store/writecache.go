package store

import (
	"context"
	"database/sql/driver"
	"errors"
)

// maxCachedStmts bounds the statements one writer connection keeps
// prepared. quorum's and River's queries are constants, so they fit; a
// query whose text varies (an IN list of n ids) beyond the bound is
// prepared per call, as without the cache.
const maxCachedStmts = 256

// stmtCachingConnector gives the SQLite writer connection a cache of
// prepared statements by query text. The modernc driver compiles the SQL
// of every Exec and Query afresh; on the writer, through which every
// write and all of River's queries go, compiling was over a quarter of the
// CPU time of a webhook delivery (go run ./bench/webhooks --in-process 37
// --cpuprofile).
type stmtCachingConnector struct{ driver.Connector }

func (c stmtCachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, ok := range []bool{
		implements[driver.ConnPrepareContext](conn), implements[driver.ConnBeginTx](conn),
		implements[driver.SessionResetter](conn), implements[driver.Validator](conn), implements[driver.Pinger](conn),
	} {
		if !ok {
			conn.Close()
			return nil, errors.New("sqlite driver connection lacks an interface the statement cache forwards")
		}
	}
	return &stmtCachingConn{Conn: conn, stmts: map[string]*cachedStmt{}}, nil
}

func implements[I any](v any) bool { _, ok := v.(I); return ok }

// stmtCachingConn is used by one goroutine at a time, as database/sql
// guarantees for a driver connection.
type stmtCachingConn struct {
	driver.Conn
	stmts map[string]*cachedStmt
}

type cachedStmt struct {
	driver.Stmt
	// open is set while rows read from the statement: a query that comes
	// meanwhile (from inside the loop over them) gets its own statement.
	open bool
}

// stmt returns the query's statement and whether it is the cached one
// (the caller closes any other when done with it).
func (c *stmtCachingConn) stmt(ctx context.Context, query string) (*cachedStmt, bool, error) {
	if s, ok := c.stmts[query]; ok && !s.open {
		return s, true, nil
	}
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	s := &cachedStmt{Stmt: st}
	if _, ok := c.stmts[query]; ok || len(c.stmts) >= maxCachedStmts {
		return s, false, nil
	}
	c.stmts[query] = s
	return s, true, nil
}

func (c *stmtCachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, cached, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if !cached {
		defer s.Close()
	}
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *stmtCachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, cached, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		if !cached {
			s.Close()
		}
		return nil, err
	}
	s.open = true
	return &cachedRows{Rows: rows, stmt: s, cached: cached}, nil
}

func (c *stmtCachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *stmtCachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *stmtCachingConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *stmtCachingConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

func (c *stmtCachingConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *stmtCachingConn) Close() error {
	var errs []error
	for _, s := range c.stmts {
		errs = append(errs, s.Close())
	}
	return errors.Join(append(errs, c.Conn.Close())...)
}

// cachedRows frees its statement for the next query when closed.
type cachedRows struct {
	driver.Rows
	stmt   *cachedStmt
	cached bool
	closed bool
}

func (r *cachedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close()
	r.stmt.open = false
	if !r.cached {
		return errors.Join(err, r.stmt.Close())
	}
	return err
}
