package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/quorum-review/quorum/internal/store"
)

// The migrated PostgreSQL databases the tests get are schemas of a pool
// shared by every test binary, each held by one test at a time (a
// session advisory lock) and emptied before the test gets it. Migrating a
// schema costs the server some 0.35 s of CPU and dropping it 0.04 s,
// emptying one 0.02 s, and a run of the suite opens some 130 of them.
//
// A pool schema is named for the migrations that made it (quorum's and
// River's SQL), so a tree with other migrations never gets one made by
// this tree. The tests of migrating itself open new, unmigrated schemas
// with Targets and PostgresURL, which the pool does not touch.

// poolLockClass and the schema's name key the advisory lock a test holds
// on a pool schema while it uses it (store's migration lock is another
// class).
const poolLockClass = 0x706f6f6c // "pool"

// poolPrefix starts the name of every pool schema.
const poolPrefix = "quorum_pool_"

// keptTables are not emptied: they say which migrations made the schema.
var keptTables = map[string]bool{"quorum_migrations": true, "river_migration": true}

// pooledURL returns a URL for a migrated schema of the test PostgreSQL
// that no other test has until this one ends, with no rows but the
// migrations' own, or skips the test when none is configured.
func pooledURL(t testing.TB) string {
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
	// The lock is the connection's: closing it, or the test binary dying,
	// gives the schema back. It is closed after the test's own database
	// (cleanups run last first).
	t.Cleanup(func() { conn.Close(context.Background()) })
	prefix := poolPrefix + migrationsFingerprint() + "_"
	for i := 0; ; i++ {
		schema := fmt.Sprintf("%s%d", prefix, i)
		var mine bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, int32(poolLockClass), schema).Scan(&mine); err != nil {
			t.Fatalf("lock pool schema %s: %v", schema, err)
		}
		if !mine {
			continue
		}
		var made bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&made); err != nil {
			t.Fatalf("look for pool schema %s: %v", schema, err)
		}
		if made {
			err = empty(ctx, conn, schema)
		} else {
			_, err = conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
			if err == nil {
				dropStalePools(ctx, conn, prefix)
			}
		}
		if err != nil {
			t.Fatalf("prepare pool schema %s: %v", schema, err)
		}
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("parse %s: %v", EnvPostgres, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
}

// empty deletes every row of schema's tables but the migrations' own,
// children before the tables they reference, and restarts its sequences,
// in one transaction; Migrate then writes the settings a new database
// gets (a cursor key of its own among them).
func empty(ctx context.Context, conn *pgx.Conn, schema string) error {
	rows, err := conn.Query(ctx, `
		SELECT c.relname, coalesce(array_agg(p.relname) FILTER (WHERE p.relname IS NOT NULL AND p.relname <> c.relname), '{}')
		FROM pg_class c
		LEFT JOIN pg_constraint f ON f.conrelid = c.oid AND f.contype = 'f'
		LEFT JOIN pg_class p ON p.oid = f.confrelid
		WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r'
		GROUP BY c.relname`, schema)
	if err != nil {
		return err
	}
	parents := map[string][]string{}
	for rows.Next() {
		var table string
		var refs []string
		if err := rows.Scan(&table, &refs); err != nil {
			rows.Close()
			return err
		}
		parents[table] = refs
	}
	if err := rows.Err(); err != nil {
		return err
	}
	order, err := childrenFirst(parents)
	if err != nil {
		return fmt.Errorf("%s: %w", schema, err)
	}
	var sql strings.Builder
	for _, table := range order {
		if !keptTables[table] {
			fmt.Fprintf(&sql, "DELETE FROM %s;\n", pgx.Identifier{schema, table}.Sanitize())
		}
	}
	fmt.Fprintf(&sql, "SELECT setval(format('%%I.%%I', schemaname, sequencename)::regclass, start_value, false) FROM pg_sequences WHERE schemaname = '%s';\n", strings.ReplaceAll(schema, "'", "''"))
	// One simple-protocol query: one implicit transaction.
	_, err = conn.PgConn().Exec(ctx, sql.String()).ReadAll()
	return err
}

// childrenFirst orders tables so that each comes before every table it
// references.
func childrenFirst(parents map[string][]string) ([]string, error) {
	children := map[string]int{} // how many tables reference each, not yet placed
	for _, refs := range parents {
		for _, p := range refs {
			children[p]++
		}
	}
	var order []string
	placed := map[string]bool{}
	for len(order) < len(parents) {
		progress := false
		for table := range parents {
			if placed[table] || children[table] > 0 {
				continue
			}
			placed[table] = true
			order = append(order, table)
			for _, p := range parents[table] {
				children[p]--
			}
			progress = true
		}
		if !progress {
			return nil, fmt.Errorf("the tables' foreign keys form a cycle")
		}
	}
	return order, nil
}

// dropStalePools drops the pool schemas of other migrations that no test
// holds: a machine whose migrations changed keeps no pool it cannot use.
func dropStalePools(ctx context.Context, conn *pgx.Conn, keep string) {
	rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1) AND NOT starts_with(nspname, $2)`, poolPrefix, keep)
	if err != nil {
		return
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, schema := range stale {
		var mine bool
		if conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, int32(poolLockClass), schema).Scan(&mine) != nil || !mine {
			continue
		}
		_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, int32(poolLockClass), schema)
	}
}

// migrationsFingerprint names the migrations, quorum's and River's, that
// make a schema: 12 hex digits of a hash of their SQL.
var migrationsFingerprint = sync.OnceValue(func() string {
	h := sha256.New()
	for _, m := range store.Migrations() {
		fmt.Fprintf(h, "quorum %d %s\n%s\n", m.Version, m.Name, m.SQL)
	}
	river, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		panic(fmt.Sprintf("storetest: River's migrations: %v", err))
	}
	for _, m := range river.AllVersions() {
		fmt.Fprintf(h, "river %d %s\n%s\n", m.Version, m.Name, m.SQLUp)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
})
