package store_test

import (
	"context"
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
