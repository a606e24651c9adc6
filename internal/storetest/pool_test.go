package storetest

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quorum-review/quorum/internal/store"
)

// A pool schema a test gets holds nothing a test before it wrote: every
// table but the migrations' own is empty, its sequences start again, and
// Migrate gave it a cursor key of its own.
func TestPoolSchemaIsEmptiedForTheNextTest(t *testing.T) {
	db, url1 := pooledDB(t)
	ctx := context.Background()
	key1, err := db.Setting(ctx, store.SettingCursorKey)
	if err != nil {
		t.Fatal(err)
	}
	repo := Repo(t, db, "octo", "octo", "app")
	Review(t, db, repo, 7, 3, time.Now()) // reviews and findings reference repositories, accounts
	var jobID int64
	if err := db.Writer().QueryRow(ctx, `SELECT nextval('river_job_id_seq')`).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	before := rowCounts(t, url1)
	if before["findings"] != 3 || before["reviews"] != 1 || before["accounts"] != 1 || before["settings"] == 0 {
		t.Fatalf("the test's rows were not written: %v", before)
	}

	schema := schemaOf(t, url1)
	_, conn := connect(t)
	defer conn.Close(ctx)
	if err := empty(ctx, conn, schema); err != nil {
		t.Fatal(err)
	}
	for table, n := range rowCounts(t, url1) {
		if keptTables[table] != (n > 0) {
			t.Errorf("%s: %d rows after emptying", table, n)
		}
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	key2, err := db.Setting(ctx, store.SettingCursorKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(key2) != 64 || key2 == key1 {
		t.Errorf("cursor key %q after %q: not a new key", key2, key1)
	}
	if err := db.Writer().QueryRow(ctx, `SELECT nextval('river_job_id_seq')`).Scan(&jobID); err != nil || jobID != 1 {
		t.Errorf("river_job_id_seq gave %d (%v) after emptying, want 1", jobID, err)
	}
}

// No two tests hold one pool schema at a time, and a schema held by a
// test is not emptied under it.
func TestPoolSchemasAreHeldByOneTestAtATime(t *testing.T) {
	db, a := pooledDB(t)
	_, b := pooledDB(t)
	if schemaOf(t, a) == schemaOf(t, b) {
		t.Fatalf("two tests were given schema %s at once", schemaOf(t, a))
	}
	Repo(t, db, "octo", "octo", "app")
	_, c := pooledDB(t)
	if s := schemaOf(t, c); s == schemaOf(t, a) || s == schemaOf(t, b) {
		t.Fatalf("a third test was given %s, held by another", s)
	}
	if n := rowCounts(t, a)["accounts"]; n != 1 {
		t.Errorf("accounts of a held schema: %d rows, want 1", n)
	}
}

// A schema a test changed is not handed on: the next test gets it made
// again, new, whatever the change was; an unchanged one is emptied.
func TestChangedPoolSchemaIsMadeAgain(t *testing.T) {
	for name, change := range map[string]string{
		"unchanged":             "",
		"table renamed":         `ALTER TABLE findings RENAME TO findings_gone`,
		"migration row deleted": `DELETE FROM quorum_migrations WHERE version = (SELECT max(version) FROM quorum_migrations)`,
		"table added":           `CREATE TABLE cache_t (m BIGINT)`,
		"column added":          `ALTER TABLE reviews ADD COLUMN extra TEXT`,
		"index dropped":         `DROP INDEX api_tokens_account`,
		"function replaced":     `CREATE OR REPLACE FUNCTION river_job_state_in_bitmask(bitmask BIT(8), state river_job_state) RETURNS boolean LANGUAGE SQL IMMUTABLE AS $$ SELECT true $$`,
		"sequence changed":      `ALTER SEQUENCE river_job_id_seq INCREMENT BY 2`,
		"trigger added":         `CREATE FUNCTION t_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$; CREATE TRIGGER t_noop BEFORE INSERT ON accounts FOR EACH ROW EXECUTE FUNCTION t_noop()`,
		"table unlogged":        `ALTER TABLE settings SET UNLOGGED`,
		"row security on":       `ALTER TABLE findings ENABLE ROW LEVEL SECURITY`,
		"grant":                 `GRANT SELECT ON findings TO PUBLIC`,
		"domain added":          `CREATE DOMAIN d_test AS int`,
		"policy added":          `CREATE POLICY p_test ON findings USING (true)`,
		"migrations table gone": `DROP TABLE river_migration`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, conn := connect(t)
			defer conn.Close(ctx)
			db, u := pooledDB(t)
			Repo(t, db, "octo", "octo", "app")
			if change != "" {
				if _, err := db.Writer().Exec(ctx, change); err != nil {
					t.Fatalf("%s: %v", change, err)
				}
			}
			made, err := take(ctx, conn, schemaOf(t, u), "")
			if err != nil {
				t.Fatal(err)
			}
			if made != (change != "") {
				t.Errorf("made again: %v, want %v", made, change != "")
			}
			if !made {
				if n := rowCounts(t, u)["accounts"]; n != 0 {
					t.Errorf("accounts: %d rows after take, want none", n)
				}
			}
			if made {
				var n int
				if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relnamespace = $1::text::regnamespace`, schemaOf(t, u)).Scan(&n); err != nil || n != 0 {
					t.Errorf("the schema made again has %d relations (%v), want none", n, err)
				}
				// Its test migrates it as a new one.
				Open(t, store.Config{URL: u})
			}
		})
	}
}

// The tables are emptied children first: no table is before one that
// references it, whatever order they come in.
func TestChildrenFirst(t *testing.T) {
	parents := map[string][]string{
		"accounts": nil, "repositories": {"accounts"}, "reviews": {"repositories"},
		"findings": {"reviews"}, "events": {"accounts"}, "deliveries": {"events", "accounts"},
	}
	order, err := childrenFirst(parents)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]int{}
	for i, table := range order {
		at[table] = i
	}
	if len(order) != len(parents) {
		t.Fatalf("order %v lacks tables of %v", order, parents)
	}
	for table, refs := range parents {
		for _, p := range refs {
			if at[table] > at[p] {
				t.Errorf("%s comes after %s, which it references: %v", table, p, order)
			}
		}
	}
	if _, err := childrenFirst(map[string][]string{"a": {"b"}, "b": {"a"}}); err == nil {
		t.Error("a cycle of foreign keys was ordered")
	}
}

// pooledDB opens a pool schema as Postgres does, with its URL.
func pooledDB(t *testing.T) (*store.DB, string) {
	t.Helper()
	u, seal := pooled(t)
	db := Open(t, store.Config{URL: u})
	seal()
	return db, u
}

func schemaOf(t *testing.T, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return parsed.Query().Get("search_path")
}

// rowCounts counts the rows of every table of u's schema.
func rowCounts(t *testing.T, u string) map[string]int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 20 {
		t.Fatalf("tables %v: %v", tables, err)
	}
	counts := map[string]int{}
	for _, table := range tables {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[table] = n
	}
	return counts
}
