// Package gorm is a stub of gorm.io/gorm's API for the tests.
package gorm

type DB struct{ Error error }

func (db *DB) Raw(sql string, values ...interface{}) *DB        { return db }
func (db *DB) Exec(sql string, values ...interface{}) *DB       { return db }
func (db *DB) Where(query interface{}, args ...interface{}) *DB { return db }
func (db *DB) Order(value interface{}) *DB                      { return db }
func (db *DB) Find(dest interface{}, conds ...interface{}) *DB  { return db }
