// Package pgx is a stub of github.com/jackc/pgx/v5's API for the tests.
package pgx

import "context"

type Rows interface{ Close() }
type Row interface{ Scan(dest ...any) error }
type CommandTag struct{}
type StatementDescription struct{}

type Conn struct{}

func (c *Conn) Query(ctx context.Context, sql string, args ...any) (Rows, error) { return nil, nil }
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) Row        { return nil }
func (c *Conn) Exec(ctx context.Context, sql string, arguments ...any) (CommandTag, error) {
	return CommandTag{}, nil
}
func (c *Conn) Prepare(ctx context.Context, name, sql string) (*StatementDescription, error) {
	return nil, nil
}

type Tx interface {
	Exec(ctx context.Context, sql string, arguments ...any) (commandTag CommandTag, err error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Commit(ctx context.Context) error
}

type QueuedQuery struct{}

type Batch struct{}

func (b *Batch) Queue(query string, arguments ...any) *QueuedQuery { return nil }

type Identifier []string

func (ident Identifier) Sanitize() string { return "" }
