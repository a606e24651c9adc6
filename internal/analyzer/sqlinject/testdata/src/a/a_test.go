package a

import (
	"database/sql"
	"testing"
)

func TestCreate(t *testing.T) {
	var db *sql.DB
	name := t.Name()
	db.Exec("CREATE DATABASE " + name) // ok: tests are not attack surface
}

func TestDrop(t *testing.T) {
	var s store
	s.run("DROP TABLE " + t.Name()) // ok: tests are not attack surface
}
