// Package storetest opens real, migrated quorum databases for tests: a
// SQLite file in a temp dir, and a schema of the PostgreSQL named by
// QUORUM_TEST_POSTGRES_URL, from a pool of migrated schemas (pool.go) or,
// for the tests of migrating, a new one.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quorum-review/quorum/internal/store"
)

// EnvPostgres names the PostgreSQL the tests may use.
const EnvPostgres = "QUORUM_TEST_POSTGRES_URL"

// Backend is a database a test can run on.
type Backend struct {
	Name string
	// Open returns an empty, migrated database, no other test's until
	// this one ends, closed at test end.
	Open func(t testing.TB) *store.DB
}

// Backends returns SQLite and, when QUORUM_TEST_POSTGRES_URL is set,
// PostgreSQL; without it the PostgreSQL case is skipped with the reason.
func Backends() []Backend {
	return []Backend{{Name: "sqlite", Open: SQLite}, {Name: "postgres", Open: Postgres}}
}

// SQLite opens a migrated database in a temp dir (a copy, see SQLiteDir).
func SQLite(t testing.TB) *store.DB {
	t.Helper()
	db := OpenUnmigrated(t, store.Config{DataDir: copyTemplate(t)})
	newCursorKey(t, db)
	return db
}

// SQLiteDir returns a new temp dir holding a migrated SQLite database, as
// `quorum migrate --data-dir` would leave it, with a cursor key of its
// own. It is a copy of one migrated once per test binary: under the race
// detector, migrating a SQLite database takes some 0.7 s of CPU (the
// driver is C translated to Go, every memory access of it instrumented),
// a copy some 0.04 s. The tests of migrating itself open
// databases with Targets and OpenUnmigrated, which this does not touch.
func SQLiteDir(t testing.TB) string {
	t.Helper()
	dir := copyTemplate(t)
	db, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	defer db.Close()
	newCursorKey(t, db)
	return dir
}

// copyTemplate writes the migrated template to a new temp dir.
func copyTemplate(t testing.TB) string {
	t.Helper()
	image, err := migratedSQLite()
	if err != nil {
		t.Fatalf("migrate the template SQLite database: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(store.SQLitePath(dir), image, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// newCursorKey drops the cursor key Migrate made for the template and
// has Migrate (otherwise a no-op) make another, so that no two databases
// share one, as no two deployments do.
func newCursorKey(t testing.TB, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Writer().Exec(ctx, `DELETE FROM settings WHERE key = $1`, store.SettingCursorKey); err != nil {
		t.Fatalf("drop the template's cursor key: %v", err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}

// template is the migrated SQLite database's file, made once.
var template struct {
	once  sync.Once
	image []byte
	err   error
}

// migratedSQLite returns the bytes of a migrated SQLite database, its
// write-ahead log checkpointed into it.
func migratedSQLite() ([]byte, error) {
	template.once.Do(func() {
		template.image, template.err = func() ([]byte, error) {
			dir, err := os.MkdirTemp("", "quorum-storetest-")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(dir)
			ctx := context.Background()
			db, err := store.Open(ctx, store.Config{DataDir: dir})
			if err != nil {
				return nil, err
			}
			_, err = db.Migrate(ctx)
			if err == nil {
				_, err = db.Writer().Exec(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
			}
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, err
			}
			if st, err := os.Stat(store.SQLitePath(dir) + "-wal"); err == nil && st.Size() > 0 {
				return nil, fmt.Errorf("the write-ahead log holds %d bytes after a checkpoint", st.Size())
			}
			return os.ReadFile(store.SQLitePath(dir))
		}()
	})
	if template.err == nil && len(template.image) == 0 {
		return nil, errors.New("the template is empty: its migration did not end")
	}
	return template.image, template.err
}

// PostgresURL returns a URL for a new, empty schema of the test PostgreSQL,
// dropped at test end, or skips the test when none is configured.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base, conn := connect(t)
	ctx := context.Background()
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
	return schemaURL(t, base, schema)
}

// connect returns the test PostgreSQL's URL and a connection to it, or
// skips the test when none is configured.
func connect(t testing.TB) (string, *pgx.Conn) {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skipf("PostgreSQL not configured: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", EnvPostgres)
	}
	conn, err := pgx.Connect(context.Background(), base)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvPostgres, err)
	}
	return base, conn
}

// schemaURL is base with schema as its search path.
func schemaURL(t testing.TB, base, schema string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Postgres opens a migrated database of the test PostgreSQL: a schema of
// the pool (pool.go), emptied, that no other test uses until this one
// ends.
func Postgres(t testing.TB) *store.DB {
	t.Helper()
	u, seal := pooled(t)
	db := open(t, store.Config{URL: u})
	seal()
	return db
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
