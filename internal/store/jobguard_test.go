package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// failArgs is a test job that fails with its own text, or is cancelled.
// "{NUL}" and "{FF}" in the text become those bytes in the error only, so
// that the arguments themselves are clean.
type failArgs struct {
	Text   string `json:"text"`
	Cancel bool   `json:"cancel"`
}

func (failArgs) Kind() string { return "storetest.fail" }

type failWorker struct {
	river.WorkerDefaults[failArgs]
}

func (failWorker) Work(_ context.Context, job *river.Job[failArgs]) error {
	err := errors.New(strings.NewReplacer("{NUL}", "\x00", "{FF}", "\xff").Replace(job.Args.Text))
	if job.Args.Cancel {
		return river.JobCancel(err)
	}
	return err
}

// syncBuffer is a log sink for several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startFailJobs runs the mark and fail workers on db until test end, logging
// at WARN into the returned buffer.
func startFailJobs(t *testing.T, db *store.DB) (*markWorker, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	w, _ := runJobs(t, db, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	return w, logs
}

func insert(t *testing.T, db *store.DB, args river.JobArgs, opts *river.InsertOpts) {
	t.Helper()
	if err := db.InTx(context.Background(), func(tx store.Tx) error { return tx.InsertJob(context.Background(), args, opts) }); err != nil {
		t.Fatalf("insert %s: %v", args.Kind(), err)
	}
}

// waitState waits for the only job of kind to reach state.
func waitState(t *testing.T, db *store.DB, kind, state string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got string
		err := db.Reader().QueryRow(context.Background(), `SELECT state FROM river_job WHERE kind = $1`, kind).Scan(&got)
		if err == nil && got == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %q (%v) after 20 s, want %s", kind, got, err, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHostileTextCannotJamJobs: a job whose error text holds a NUL and
// invalid UTF-8, and a job whose arguments hold a NUL, neither stop the
// jobs after them (issue 10 item 10: on PostgreSQL the completer could
// not store such an error and gave up, leaving later jobs running).
func TestHostileTextCannotJamJobs(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		w, _ := startFailJobs(t, db)
		insert(t, db, failArgs{Text: "account ev{NUL}il is {FF} bad"}, &river.InsertOpts{MaxAttempts: 1})
		waitState(t, db, failArgs{}.Kind(), "discarded")
		insert(t, db, markArgs{Mark: "after\x00wards"}, nil)
		select {
		case got := <-w.worked:
			if got != "after\uFFFDwards" {
				t.Errorf("worked %q, want the mark with U+FFFD for the NUL", got)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the job after the hostile one was not worked within 20 s")
		}
		waitState(t, db, markArgs{}.Kind(), "completed")
		var errs string
		q := `SELECT errors FROM river_job WHERE kind = $1`
		if b.Name == "postgres" {
			q = `SELECT array_to_json(errors)::text FROM river_job WHERE kind = $1`
		}
		if err := db.Reader().QueryRow(context.Background(), q, failArgs{}.Kind()).Scan(&errs); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errs, `account ev\ufffdil is \ufffd bad`) && !strings.Contains(errs, "account ev\uFFFDil is \uFFFD bad") {
			t.Errorf("recorded errors %s, want the cleaned text", errs)
		}
	})
}

// TestJobFailuresLogged: a failed attempt that will be retried is a WARN,
// a job that gives up an ERROR, each with kind, job id, attempt and error
// class (issue 10 item 7: River logs them at INFO).
func TestJobFailuresLogged(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	_, logs := startFailJobs(t, db)
	insert(t, db, failArgs{Text: "upstream said no"}, &river.InsertOpts{MaxAttempts: 2})
	waitState(t, db, failArgs{}.Kind(), "discarded")
	insert(t, db, failArgs{Text: "not worth retrying", Cancel: true}, &river.InsertOpts{MaxAttempts: 5, Queue: river.QueueDefault, Tags: []string{"second"}})

	deadline := time.Now().Add(20 * time.Second)
	var lines []map[string]any
	for len(lines) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		lines = lines[:0]
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var m map[string]any
			if l != "" && json.Unmarshal([]byte(l), &m) == nil && m["kind"] == (failArgs{}).Kind() {
				lines = append(lines, m)
			}
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d failure lines at WARN and above, want 3:\n%s", len(lines), logs.String())
	}
	want := []struct {
		level   string
		attempt float64
		class   string
		err     string
	}{
		{"WARN", 1, "error", "upstream said no"},
		{"ERROR", 2, "error", "upstream said no"},
		{"ERROR", 1, "cancelled", "not worth retrying"},
	}
	for i, w := range want {
		l := lines[i]
		if l["level"] != w.level || l["attempt"] != w.attempt || l["error_class"] != w.class || !strings.Contains(l["error"].(string), w.err) {
			t.Errorf("line %d = %v, want %s attempt %v class %s error %q", i, l, w.level, w.attempt, w.class, w.err)
		}
		if id, _ := l["job_id"].(float64); id <= 0 {
			t.Errorf("line %d has no job_id: %v", i, l)
		}
	}
}

// TestQueryTextIsCleaned: string arguments with NUL or invalid UTF-8 are
// stored and compared as U+FFFD, the same on both backends (PostgreSQL
// refused them with a 500's worth of error).
func TestQueryTextIsCleaned(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		ctx := context.Background()
		for i, s := range []string{"a\x00b", "\xff", "\xc3\x28"} {
			var n int
			if err := db.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM accounts WHERE login = $1`, s).Scan(&n); err != nil {
				t.Errorf("query with %q: %v", s, err)
			}
			if _, err := db.Writer().Exec(ctx, `INSERT INTO accounts (id, platform, login, type, created_at) VALUES ($1, 'github', $2, 'User', 0)`,
				"acc_"+string(rune('a'+i)), s); err != nil {
				t.Errorf("insert %q: %v", s, err)
				continue
			}
			var got string
			if err := db.Reader().QueryRow(ctx, `SELECT login FROM accounts WHERE id = $1`, "acc_"+string(rune('a'+i))).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != store.CleanText(s) || !store.Clean(got) {
				t.Errorf("stored %q as %q, want %q", s, got, store.CleanText(s))
			}
		}
	})
}
