package storetest

import (
	"context"
	"testing"

	"github.com/quorum-review/quorum/internal/store"
)

// Target is where one backend's database lives, for tests that must open a
// database before it is migrated, or open it more than once (as replicas do).
type Target struct {
	Name string
	// Config returns the config of a new, empty, unmigrated database that is
	// removed at test end. Every Open of it reaches the same database.
	Config func(t testing.TB) store.Config
}

// Targets returns SQLite and PostgreSQL targets; the PostgreSQL one skips
// the test when QUORUM_TEST_POSTGRES_URL is not set.
func Targets() []Target {
	return []Target{
		{Name: "sqlite", Config: func(t testing.TB) store.Config { return store.Config{DataDir: t.TempDir()} }},
		{Name: "postgres", Config: func(t testing.TB) store.Config { return store.Config{URL: PostgresURL(t)} }},
	}
}

// OpenUnmigrated opens cfg without migrating it; the database is closed at
// test end.
func OpenUnmigrated(t testing.TB, cfg store.Config) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Open opens cfg and migrates it; the database is closed at test end.
func Open(t testing.TB, cfg store.Config) *store.DB {
	t.Helper()
	return open(t, cfg)
}
