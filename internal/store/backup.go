package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// BackupInfo is what a backup copied.
type BackupInfo struct {
	// From is the database copied, To the copy.
	From, To string
	// Bytes is the copy's size.
	Bytes int64
	// Schema is the copy's schema version.
	Schema int
	// Reviews is how many reviews the copy holds.
	Reviews int64
	// Took is how long the copy took.
	Took time.Duration
}

// ErrBackupExists is returned when the backup's file already exists: a
// backup never overwrites one.
var ErrBackupExists = errors.New("the backup file already exists")

// BackupSQLite copies the SQLite database in dataDir to the file to, while
// other processes (serve) go on reading and writing it: SQLite's VACUUM
// INTO writes a consistent copy of one read transaction's snapshot (in WAL
// mode it does not block writers), compacted. The copy is written beside
// to, synced, checked (PRAGMA quick_check, the schema version, the
// reviews) and only then renamed to to, so a crash leaves no partial
// backup under that name. The copy is made readable by its owner only: it
// holds webhook secrets and the cursor key.
func BackupSQLite(ctx context.Context, dataDir, to string) (BackupInfo, error) {
	start := time.Now()
	from := SQLitePath(dataDir)
	info := BackupInfo{From: from, To: to}
	if _, err := os.Stat(from); err != nil {
		return info, fmt.Errorf("no database at %s: %w", from, err)
	}
	if _, err := os.Lstat(to); err == nil {
		return info, fmt.Errorf("%w: %s (choose another name, or remove it first)", ErrBackupExists, to)
	} else if !errors.Is(err, os.ErrNotExist) {
		return info, err
	}
	dir := filepath.Dir(to)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(to)+".partial-")
	if err != nil {
		return info, fmt.Errorf("create the backup in %s: %w", dir, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	// VACUUM INTO wants a file that does not exist or is empty; the
	// empty one reserved the name with mode 0600, which SQLite keeps.
	defer os.Remove(tmpPath)

	src, err := sql.Open("sqlite", "file:"+url.PathEscape(from)+"?_pragma=busy_timeout(10000)&_pragma=query_only(0)")
	if err != nil {
		return info, err
	}
	defer src.Close()
	src.SetMaxOpenConns(1)
	if err := currentSchemaOK(ctx, src); err != nil {
		return info, err
	}
	if _, err := src.ExecContext(ctx, `VACUUM INTO ?`, tmpPath); err != nil {
		return info, fmt.Errorf("copy %s: %w", from, err)
	}
	if err := syncFile(tmpPath); err != nil {
		return info, err
	}

	cp, err := sql.Open("sqlite", "file:"+url.PathEscape(tmpPath)+"?_pragma=query_only(1)")
	if err != nil {
		return info, err
	}
	defer cp.Close()
	var check string
	if err := cp.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return info, fmt.Errorf("check the copy: %w", err)
	}
	if check != "ok" {
		return info, fmt.Errorf("the copy fails SQLite's quick_check: %s", check)
	}
	if info.Schema, err = currentVersion(ctx, sqlQuerier{cp}); err != nil {
		return info, fmt.Errorf("the copy: %w", err)
	}
	if err := cp.QueryRowContext(ctx, `SELECT count(*) FROM reviews`).Scan(&info.Reviews); err != nil {
		return info, fmt.Errorf("count the copy's reviews: %w", err)
	}
	cp.Close()

	if _, err := os.Lstat(to); err == nil {
		return info, fmt.Errorf("%w: %s (created while the backup ran)", ErrBackupExists, to)
	}
	if err := os.Rename(tmpPath, to); err != nil {
		return info, fmt.Errorf("name the backup %s: %w", to, err)
	}
	if err := syncDir(dir); err != nil {
		return info, err
	}
	st, err := os.Stat(to)
	if err != nil {
		return info, err
	}
	info.Bytes = st.Size()
	info.Took = time.Since(start)
	return info, nil
}

// currentSchemaOK checks that the database has quorum's schema and that
// it is not newer than this binary's.
func currentSchemaOK(ctx context.Context, db *sql.DB) error {
	v, err := currentVersion(ctx, sqlQuerier{db})
	if err != nil {
		return fmt.Errorf("not a quorum database (run quorum migrate or serve first): %w", err)
	}
	if v > LatestVersion() {
		return fmt.Errorf("%w (database at %d, binary knows %d): back it up with the newer binary", ErrSchemaNewer, v, LatestVersion())
	}
	return nil
}

func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
