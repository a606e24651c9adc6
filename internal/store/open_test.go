package store_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/store"
)

func TestOpenRefusesOtherURLs(t *testing.T) {
	t.Parallel()
	const password = "s3cret-Pa55"
	for _, url := range []string{
		"mysql://quorum:" + password + "@db.example:3306/quorum",
		"sqlite:///var/lib/quorum/quorum.db?password=" + password,
		"file:quorum.db",
		"quorum:" + password + "@db.example/quorum",
	} {
		db, err := store.Open(context.Background(), store.Config{URL: url})
		if err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", url)
			continue
		}
		if !strings.Contains(err.Error(), "postgres://") {
			t.Errorf("Open(%q): %q does not say a postgres:// URL is wanted", url, err)
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("Open(%q): the error shows the password: %q", url, err)
		}
	}
}

func TestOpenPostgresErrorsHidePassword(t *testing.T) {
	t.Parallel()
	const password = "s3cret-Pa55"
	for _, url := range []string{
		// Nothing listens on port 1: the connection is refused at once.
		"postgres://quorum:" + password + "@127.0.0.1:1/quorum?sslmode=disable&connect_timeout=5",
		"postgres://quorum:" + password + "@127.0.0.1:notaport/quorum",
		"postgresql://quorum:" + password + "@127.0.0.1:1/quorum?sslmode=bogus",
	} {
		db, err := store.Open(context.Background(), store.Config{URL: url})
		if err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", url)
			continue
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("Open(%q): the error shows the password: %q", url, err)
		}
	}
}

func TestOpenSQLiteNeedsDir(t *testing.T) {
	t.Parallel()
	if _, err := store.Open(context.Background(), store.Config{}); err == nil {
		t.Error("Open with neither URL nor data directory succeeded")
	}
}

// TestSQLiteFilesPrivate: quorum.db and its -wal and -shm are created 0600
// whatever the umask lets through (issue 10 item 15: they were 0644), and
// Exposed names what others can read.
func TestSQLiteFilesPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := store.SQLitePath(dir)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s is %s, want -rw-------", p, st.Mode().Perm())
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := db.Exposed(); len(got) != 0 {
		t.Errorf("Exposed = %v, want none", got)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := db.Exposed(); len(got) != 2 || !strings.HasPrefix(got[0], dir+" ") || !strings.HasPrefix(got[1], path+" ") {
		t.Errorf("Exposed = %v, want the directory and quorum.db", got)
	}
}
