// Package sqlx is a stub of github.com/jmoiron/sqlx's API for the tests.
package sqlx

import (
	"context"
	"database/sql"
)

type Rows struct{}
type Row struct{}

type Queryer interface {
	Query(query string, args ...interface{}) (*sql.Rows, error)
	Queryx(query string, args ...interface{}) (*Rows, error)
	QueryRowx(query string, args ...interface{}) *Row
}

type DB struct {
	*sql.DB
}

func (db *DB) Get(dest interface{}, query string, args ...interface{}) error    { return nil }
func (db *DB) Select(dest interface{}, query string, args ...interface{}) error { return nil }
func (db *DB) SelectContext(ctx context.Context, dest interface{}, query string, args ...interface{}) error {
	return nil
}
func (db *DB) NamedExec(query string, arg interface{}) (sql.Result, error) { return nil, nil }
func (db *DB) Queryx(query string, args ...interface{}) (*Rows, error)     { return nil, nil }
func (db *DB) QueryRowx(query string, args ...interface{}) *Row            { return nil }
func (db *DB) MustExec(query string, args ...interface{}) sql.Result       { return nil }
func (db *DB) Rebind(query string) string                                  { return query }
func (db *DB) Beginx() (*Tx, error)                                        { return nil, nil }

type Tx struct {
	*sql.Tx
}

func (tx *Tx) Get(dest interface{}, query string, args ...interface{}) error { return nil }

func Get(q Queryer, dest interface{}, query string, args ...interface{}) error { return nil }

func In(query string, args ...interface{}) (string, []interface{}, error) { return query, args, nil }
