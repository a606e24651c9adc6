package store_test

import (
	"context"
	"encoding/hex"
	"errors"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

func count(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func versions(ms []store.Migration) []int {
	var vs []int
	for _, m := range ms {
		vs = append(vs, m.Version)
	}
	return vs
}

func TestMigrateNewDatabase(t *testing.T) {
	t.Parallel()
	storetest.ForEachTarget(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db := storetest.OpenUnmigrated(t, cfg)
		if err := db.CheckSchema(ctx); !errors.Is(err, store.ErrSchemaBehind) {
			t.Fatalf("CheckSchema on a new database: %v, want ErrSchemaBehind", err)
		}

		res, err := db.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all := versions(store.Migrations())
		if got := versions(res.Applied); len(got) != len(all) || got[len(got)-1] != store.LatestVersion() {
			t.Errorf("applied %v, want every migration %v", got, all)
		}
		if len(res.RiverApplied) == 0 {
			t.Error("River's migrations were not applied")
		}
		if err := db.CheckSchema(ctx); err != nil {
			t.Errorf("CheckSchema after Migrate: %v", err)
		}
		if n := count(t, db, `SELECT COUNT(*) FROM quorum_migrations`); n != len(all) {
			t.Errorf("%d rows in quorum_migrations, want %d", n, len(all))
		}
		for _, table := range []string{"accounts", "installations", "repositories", "reviews", "findings", "api_tokens", "river_job"} {
			count(t, db, `SELECT COUNT(*) FROM `+table) // fails the test if the table is missing
		}
		key, err := db.Setting(ctx, store.SettingCursorKey)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := hex.DecodeString(key); err != nil || len(b) != 32 {
			t.Errorf("cursor key %q: want 32 bytes in hex", key)
		}

		// Again: nothing to do, and the key stays.
		again, err := db.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Applied) != 0 || len(again.RiverApplied) != 0 {
			t.Errorf("second Migrate applied %v and River %v, want nothing", versions(again.Applied), again.RiverApplied)
		}
		if n := count(t, db, `SELECT COUNT(*) FROM quorum_migrations`); n != len(all) {
			t.Errorf("%d rows in quorum_migrations after a second Migrate, want %d", n, len(all))
		}
		if n := count(t, db, `SELECT COUNT(*) FROM settings WHERE key = $1`, store.SettingCursorKey); n != 1 {
			t.Errorf("%d cursor keys, want 1", n)
		}
		// A replica that opens and migrates later finds the same key.
		replica := storetest.Open(t, cfg)
		for _, d := range []*store.DB{db, replica} {
			if k, err := d.Setting(ctx, store.SettingCursorKey); err != nil || k != key {
				t.Errorf("cursor key after more migrations: %q, %v; want %q", k, err, key)
			}
		}
		if _, err := db.Setting(ctx, "no-such-setting"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing setting: %v, want ErrNotFound", err)
		}
	})
}

func TestSchemaNewer(t *testing.T) {
	t.Parallel()
	storetest.ForEachTarget(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db := storetest.Open(t, cfg)
		newer := store.LatestVersion() + 1
		if _, err := db.Writer().Exec(ctx, `INSERT INTO quorum_migrations (version, name, applied_at) VALUES ($1, 'from_the_future', 0)`, newer); err != nil {
			t.Fatal(err)
		}
		if err := db.CheckSchema(ctx); !errors.Is(err, store.ErrSchemaNewer) {
			t.Errorf("CheckSchema: %v, want ErrSchemaNewer", err)
		}
		res, err := db.Migrate(ctx)
		if !errors.Is(err, store.ErrSchemaNewer) {
			t.Errorf("Migrate: %v, want ErrSchemaNewer", err)
		}
		if len(res.Applied) != 0 {
			t.Errorf("Migrate applied %v to a newer schema", versions(res.Applied))
		}
		if n := count(t, db, `SELECT COUNT(*) FROM quorum_migrations`); n != len(store.Migrations())+1 {
			t.Errorf("%d rows in quorum_migrations, want %d", n, len(store.Migrations())+1)
		}
	})
}

func TestSchemaBehind(t *testing.T) {
	t.Parallel()
	storetest.ForEachTarget(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db := storetest.Open(t, cfg)
		// As if the latest migration had not run yet.
		if _, err := db.Writer().Exec(ctx, `DELETE FROM quorum_migrations WHERE version = $1`, store.LatestVersion()); err != nil {
			t.Fatal(err)
		}
		if err := db.CheckSchema(ctx); !errors.Is(err, store.ErrSchemaBehind) {
			t.Errorf("CheckSchema: %v, want ErrSchemaBehind", err)
		}
	})
}

func TestConcurrentMigrate(t *testing.T) {
	t.Parallel()
	storetest.ForEachTarget(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		// Two replicas starting at once on one new database.
		dbs := []*store.DB{storetest.OpenUnmigrated(t, cfg), storetest.OpenUnmigrated(t, cfg)}
		results := make([]store.MigrateResult, len(dbs))
		errs := make([]error, len(dbs))
		var wg sync.WaitGroup
		for i, db := range dbs {
			wg.Go(func() { results[i], errs[i] = db.Migrate(ctx) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("replica %d: %v", i, err)
			}
		}
		applied := len(results[0].Applied) + len(results[1].Applied)
		riverApplied := len(results[0].RiverApplied) + len(results[1].RiverApplied)
		if applied != len(store.Migrations()) {
			t.Errorf("the replicas applied %d migrations between them, want %d (each once)", applied, len(store.Migrations()))
		}
		db := dbs[0]
		if n := count(t, db, `SELECT COUNT(*) FROM quorum_migrations`); n != len(store.Migrations()) {
			t.Errorf("%d rows in quorum_migrations, want %d", n, len(store.Migrations()))
		}
		if n := count(t, db, `SELECT COUNT(*) FROM river_migration`); n != riverApplied || n == 0 {
			t.Errorf("%d rows in river_migration, want the %d applied", n, riverApplied)
		}
		if n := count(t, db, `SELECT COUNT(*) FROM settings`); n != 1 {
			t.Errorf("%d settings, want 1", n)
		}
		for i, d := range dbs {
			if err := d.CheckSchema(ctx); err != nil {
				t.Errorf("replica %d: CheckSchema: %v", i, err)
			}
		}
	})
}
