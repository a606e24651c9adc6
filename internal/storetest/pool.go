package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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

// pooled returns a URL for a migrated schema of the test PostgreSQL that
// no other test has until this one ends, with no rows but the migrations'
// own, or skips the test when none is configured. The caller migrates the
// schema, then calls seal: a schema made now is marked with its shape,
// which a later test's pooled compares, so that a schema a test changed
// (a table renamed, a migration's row deleted, as the tests of failures
// do) is made again, not handed on.
func pooled(t testing.TB) (u string, seal func()) {
	t.Helper()
	base, conn := connect(t)
	ctx := context.Background()
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
		made, err := take(ctx, conn, schema, prefix)
		if err != nil {
			t.Fatalf("prepare pool schema %s: %v", schema, err)
		}
		return schemaURL(t, base, schema), func() {
			if !made {
				return
			}
			sum, err := shape(ctx, conn, schema)
			if err == nil {
				_, err = conn.Exec(ctx, "COMMENT ON SCHEMA "+pgx.Identifier{schema}.Sanitize()+" IS "+quote(sum))
			}
			if err != nil {
				t.Fatalf("seal pool schema %s: %v", schema, err)
			}
		}
	}
}

// take readies schema, which the caller holds, for a test: a schema of
// the shape it was sealed with is emptied; one of another shape, or not
// sealed (its first test ended before its migration did), is dropped and
// made again, as is one that does not exist yet: then made is true, and
// the caller migrates it.
func take(ctx context.Context, conn *pgx.Conn, schema, prefix string) (made bool, err error) {
	var exists bool
	var sealed string
	if err := conn.QueryRow(ctx, `SELECT true, coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace WHERE nspname = $1`, schema).Scan(&exists, &sealed); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, err
	}
	if exists && sealed != "" {
		// A schema that cannot be emptied is made again, as one a test
		// changed is.
		if now, err := shape(ctx, conn, schema); err == nil && now == sealed && empty(ctx, conn, schema) == nil {
			return false, nil
		}
	}
	name := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
		return false, err
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return false, err
	}
	if !exists {
		dropStalePools(ctx, conn, prefix)
	}
	return true, nil
}

// shape sums what a test could change of schema and a new migrated
// schema of this pool has alike: its relations (with their persistence,
// row security and grants), columns and their defaults, constraints,
// indexes, sequences' options, views, functions (whole definitions),
// triggers (and whether enabled), policies, enums and domains, and the
// rows of the migrations' tables.
func shape(ctx context.Context, conn *pgx.Conn, schema string) (string, error) {
	name := pgx.Identifier{schema}.Sanitize()
	var sum string
	// Each part keeps its place when it is empty (NULL), so that no two
	// shapes read alike.
	err := conn.QueryRow(ctx, `SELECT md5(array_to_string(ARRAY[
		(SELECT string_agg(format('%s %s %s %s %s', relname, relkind, relpersistence, relrowsecurity, relacl), ',' ORDER BY relname) FROM pg_class WHERE relnamespace = $1::text::regnamespace),
		(SELECT string_agg(format('%s.%s %s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)), ',' ORDER BY c.relname, a.attnum)
			FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
			WHERE c.relnamespace = $1::text::regnamespace AND a.attnum > 0 AND NOT a.attisdropped),
		(SELECT string_agg(format('%s %s', conname, pg_get_constraintdef(oid)), ',' ORDER BY conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE connamespace = $1::text::regnamespace),
		(SELECT string_agg(indexdef, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = $1::text),
		(SELECT string_agg(format('%s %s %s %s %s %s %s', sequencename, data_type, start_value, min_value, max_value, increment_by, cycle), ',' ORDER BY sequencename) FROM pg_sequences WHERE schemaname = $1::text),
		(SELECT string_agg(format('%s %s', viewname, md5(definition)), ',' ORDER BY viewname) FROM pg_views WHERE schemaname = $1::text),
		(SELECT string_agg(md5(pg_get_functiondef(oid)), ',' ORDER BY md5(pg_get_functiondef(oid))) FROM pg_proc WHERE pronamespace = $1::text::regnamespace AND prokind IN ('f', 'p', 'w')),
		(SELECT string_agg(format('%s %s', pg_get_triggerdef(t.oid), t.tgenabled), ',' ORDER BY pg_get_triggerdef(t.oid)) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = $1::text::regnamespace AND NOT t.tgisinternal),
		(SELECT string_agg(format('%s %s %s %s %s', tablename, policyname, cmd, qual, with_check), ',' ORDER BY tablename, policyname) FROM pg_policies WHERE schemaname = $1::text),
		(SELECT string_agg(format('%s %s', t.typname, e.enumlabel), ',' ORDER BY t.typname, e.enumsortorder) FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid WHERE t.typnamespace = $1::text::regnamespace),
		(SELECT string_agg(format('%s %s %s', typname, format_type(typbasetype, typtypmod), typnotnull), ',' ORDER BY typname) FROM pg_type WHERE typnamespace = $1::text::regnamespace AND typtype = 'd'),
		(SELECT string_agg(format('%s %s', version, name), ',' ORDER BY version) FROM `+name+`.quorum_migrations),
		(SELECT string_agg(format('%s %s', line, version), ',' ORDER BY line, version) FROM `+name+`.river_migration)], E'\n', '-'))`, schema).Scan(&sum)
	return sum, err
}

// quote is s as a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

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
		WHERE c.relnamespace = $1::text::regnamespace AND c.relkind = 'r'
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
	fmt.Fprintf(&sql, "SELECT setval(format('%%I.%%I', schemaname, sequencename)::regclass, start_value, false) FROM pg_sequences WHERE schemaname = %s;\n", quote(schema))
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
