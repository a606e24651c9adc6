package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A backup refuses a database migrated by a newer quorum, and a directory
// without one, and writes nothing.
func TestBackupRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	to := filepath.Join(t.TempDir(), "b.db")
	if _, err := BackupSQLite(ctx, t.TempDir(), to); err == nil {
		t.Error("backed up a directory without a database")
	}
	dir := t.TempDir()
	db, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec(ctx, `INSERT INTO quorum_migrations (version, name, applied_at) VALUES ($1, 'future', 1)`, LatestVersion()+1); err != nil {
		t.Fatal(err)
	}
	if _, err := BackupSQLite(ctx, dir, to); !errors.Is(err, ErrSchemaNewer) {
		t.Errorf("backup of a newer schema: %v, want ErrSchemaNewer", err)
	}
	if _, err := os.Stat(to); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused backup left %s: %v", to, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(to))
	if len(entries) != 0 {
		t.Errorf("a refused backup left files: %v", entries)
	}
}
