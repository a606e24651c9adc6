// Package pgx is a stub of github.com/jackc/pgx/v4's API for the tests.
package pgx

import "context"

type Rows interface{ Close() }

type Conn struct{}

func (c *Conn) Query(ctx context.Context, sql string, args ...interface{}) (Rows, error) {
	return nil, nil
}

type Batch struct{}

func (b *Batch) Queue(query string, arguments ...interface{}) {}

type Identifier []string

func (ident Identifier) Sanitize() string { return "" }
