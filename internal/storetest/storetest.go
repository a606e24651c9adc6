// Package storetest opens real, migrated quorum databases for tests: a
// SQLite file in a temp dir, and a fresh schema in the PostgreSQL named by
// QUORUM_TEST_POSTGRES_URL.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quorum-review/quorum/internal/store"
)

// EnvPostgres names the PostgreSQL the tests may use.
const EnvPostgres = "QUORUM_TEST_POSTGRES_URL"

// Backend is a database a test can run on.
type Backend struct {
	Name string
	// Open returns a new, empty, migrated database closed at test end.
	Open func(t testing.TB) *store.DB
}

// Backends returns SQLite and, when QUORUM_TEST_POSTGRES_URL is set,
// PostgreSQL; without it the PostgreSQL case is skipped with the reason.
func Backends() []Backend {
	return []Backend{{Name: "sqlite", Open: SQLite}, {Name: "postgres", Open: Postgres}}
}

// SQLite opens a migrated database in a temp dir.
func SQLite(t testing.TB) *store.DB {
	t.Helper()
	return open(t, store.Config{DataDir: t.TempDir()})
}

// PostgresURL returns a URL for a new, empty schema of the test PostgreSQL,
// dropped at test end, or skips the test when none is configured.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skipf("PostgreSQL not configured: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", EnvPostgres)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvPostgres, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "quorum_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Postgres opens a migrated database in a fresh schema of the test
// PostgreSQL.
func Postgres(t testing.TB) *store.DB {
	t.Helper()
	return open(t, store.Config{URL: PostgresURL(t)})
}

func open(t testing.TB, cfg store.Config) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}
