package storetest_test

import (
	"context"
	"testing"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// The SQLite databases the tests get are copies of one migrated
// template: each is migrated to the latest version (Migrate applies
// nothing), and each has a cursor key of its own, as two deployments do.
func TestSQLiteCopiesAreMigratedWithKeysOfTheirOwn(t *testing.T) {
	ctx := context.Background()
	keys := map[string]bool{}
	for _, db := range []*store.DB{
		storetest.SQLite(t),
		storetest.SQLite(t),
		storetest.OpenUnmigrated(t, store.Config{DataDir: storetest.SQLiteDir(t)}),
	} {
		res, err := db.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Applied) > 0 || len(res.RiverApplied) > 0 {
			t.Errorf("a copy was not migrated: Migrate applied %v and River's %v", res.Applied, res.RiverApplied)
		}
		key, err := db.Setting(ctx, store.SettingCursorKey)
		if err != nil {
			t.Fatal(err)
		}
		if len(key) != 64 || keys[key] {
			t.Errorf("cursor key %q: not a new 32-byte key", key)
		}
		keys[key] = true
	}
}
