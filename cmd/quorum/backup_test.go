package main

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// A backup taken while reviews are being written holds every review
// committed before it started; restored, it migrates and serves.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, _, err := quorum(t, env(), "migrate", "--data-dir", dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := storetest.Repo(t, db, "acme", "acme", "app")

	var mu sync.Mutex
	var committed []string
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		reviews := review.NewStore(db)
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			r := storetest.NewReview(repo, 1+i%7, 2, at.Add(time.Duration(i)*time.Second))
			if err := reviews.Create(ctx, db.Writer(), &r); err != nil {
				done <- err
				return
			}
			mu.Lock()
			committed = append(committed, r.ID)
			mu.Unlock()
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(committed) }
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for count() < n {
			if time.Now().After(deadline) {
				t.Fatalf("only %d reviews written in 30 s", count())
			}
			time.Sleep(time.Millisecond) // polling the writer's progress
		}
	}
	waitFor(50)
	mu.Lock()
	before := append([]string(nil), committed...)
	mu.Unlock()

	file := filepath.Join(t.TempDir(), "quorum-backup.db")
	out, _, err := quorum(t, env(), "backup", "--data-dir", dir, "--to", file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "backed up") || !strings.Contains(out, file) {
		t.Errorf("backup said %q", out)
	}
	// The writes went on during the backup and after it.
	waitFor(count() + 20)
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if st, err := os.Stat(file); err != nil {
		t.Fatal(err)
	} else if st.Mode().Perm() != 0o600 {
		t.Errorf("backup file mode %v; want 0600 (it holds webhook secrets)", st.Mode().Perm())
	}
	// A second backup to the same name is refused; the first is intact.
	if _, _, err := quorum(t, env(), "backup", "--data-dir", dir, "--to", file); !errors.Is(err, store.ErrBackupExists) {
		t.Errorf("backup over an existing file: %v", err)
	}

	// Restore: the copy as a new data directory's quorum.db.
	restored := t.TempDir()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store.SQLitePath(restored), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := quorum(t, env(), "migrate", "--data-dir", restored); err != nil {
		t.Fatalf("migrate on the restored copy: %v", err)
	}
	raw, err := sql.Open("sqlite", store.SQLitePath(restored))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT id FROM reviews`)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		have[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range before {
		if !have[id] {
			t.Fatalf("review %s, committed before the backup started, is not in it (%d of %d there)", id, len(have), len(before))
		}
	}
	if len(have) >= count() {
		t.Errorf("the backup has %d reviews, as many as were written by the end (%d): it was not taken during the writes", len(have), count())
	}
	raw.Close()
	serve(t, env(), "--data-dir", restored)
}
