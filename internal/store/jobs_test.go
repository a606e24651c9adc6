package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// markArgs is a test job that names itself, so the test can tell which of
// its jobs ran.
type markArgs struct {
	Mark string `json:"mark"`
}

func (markArgs) Kind() string { return "storetest.mark" }

type markWorker struct {
	river.WorkerDefaults[markArgs]
	worked chan string
}

func (w *markWorker) Work(_ context.Context, job *river.Job[markArgs]) error {
	w.worked <- job.Args.Mark
	return nil
}

// startJobs runs a River client with the mark worker on db until test end.
func startJobs(t *testing.T, db *store.DB) (*markWorker, <-chan *river.Event) {
	t.Helper()
	return runJobs(t, db, nil)
}

// runJobs runs a River client with the mark and fail workers on db until
// test end, logging to log.
func runJobs(t *testing.T, db *store.DB, log *slog.Logger) (*markWorker, <-chan *river.Event) {
	t.Helper()
	workers := river.NewWorkers()
	w := &markWorker{worked: make(chan string, 16)}
	river.AddWorker(workers, w)
	river.AddWorker(workers, failWorker{})
	jobs, err := db.ConfigureJobs(store.JobsConfig{Workers: workers, Work: true, PollInterval: 50 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := jobs.Subscribe(river.EventKindJobCompleted)
	t.Cleanup(cancel)
	if err := jobs.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := jobs.Stop(ctx); err != nil {
			t.Errorf("stop jobs: %v", err)
		}
	})
	return w, events
}

func TestJobCommitsWithTransaction(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		db := b.Open(t)
		w, events := startJobs(t, db)
		errRollback := errors.New("business rule says no")

		// A write and its job in a transaction that fails: neither lands.
		err := db.InTx(ctx, func(tx store.Tx) error {
			if _, err := account.Ensure(ctx, tx, account.PlatformGitHub, "rolled-back", ""); err != nil {
				return err
			}
			if err := tx.InsertJob(ctx, markArgs{Mark: "rolled-back"}, nil); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("InTx = %v, want the function's error", err)
		}

		// A write and its job that commit: the job runs, after the commit.
		err = db.InTx(ctx, func(tx store.Tx) error {
			if _, err := account.Ensure(ctx, tx, account.PlatformGitHub, "committed", ""); err != nil {
				return err
			}
			if err := tx.InsertJob(ctx, markArgs{Mark: "committed"}, nil); err != nil {
				return err
			}
			// Not visible outside the transaction yet, so no worker can
			// take it before the commit.
			if n := count(t, db, `SELECT COUNT(*) FROM river_job`); n != 0 {
				t.Errorf("%d jobs visible before commit, want 0", n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		timeout := time.NewTimer(20 * time.Second)
		defer timeout.Stop()
	wait:
		for {
			select {
			case ev := <-events:
				var args markArgs
				if err := json.Unmarshal(ev.Job.EncodedArgs, &args); err != nil {
					t.Fatal(err)
				}
				if ev.Job.Kind != (markArgs{}).Kind() || args.Mark != "committed" {
					t.Fatalf("completed job %s %s, want only the committed mark job", ev.Job.Kind, ev.Job.EncodedArgs)
				}
				break wait
			case <-timeout.C:
				t.Fatal("the committed job was not worked within 20 s")
			}
		}
		if got := <-w.worked; got != "committed" {
			t.Errorf("worked %q, want committed", got)
		}
		if len(w.worked) != 0 {
			t.Errorf("worked more jobs: %q", <-w.worked)
		}

		// The failed transaction left nothing: no job row, no account.
		if n := count(t, db, `SELECT COUNT(*) FROM river_job`); n != 1 {
			t.Errorf("%d river_job rows, want only the committed job's", n)
		}
		if n := count(t, db, `SELECT COUNT(*) FROM river_job WHERE kind = $1 AND state = 'completed'`, (markArgs{}).Kind()); n != 1 {
			t.Errorf("%d completed mark jobs, want 1", n)
		}
		if _, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, "rolled-back"); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("the rolled-back account: %v, want ErrNotFound", err)
		}
		if _, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, "committed"); err != nil {
			t.Errorf("the committed account: %v", err)
		}
	})
}

// TestInsertJobWithoutConfigure: a database whose job queue was not
// configured (a CLI command that saves) still inserts jobs in its
// transactions, and a worker configured later on the same database (the
// server) works them.
func TestInsertJobWithoutConfigure(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		err := db.InTx(context.Background(), func(tx store.Tx) error {
			return tx.InsertJob(context.Background(), markArgs{Mark: "from-cli"}, nil)
		})
		if err != nil {
			t.Fatalf("InsertJob without ConfigureJobs: %v", err)
		}
		w, _ := startJobs(t, db)
		select {
		case got := <-w.worked:
			if got != "from-cli" {
				t.Errorf("worked %q, want from-cli", got)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the job inserted before ConfigureJobs was not worked within 20 s")
		}
	})
}

// TestConfigureJobsOnce: ConfigureJobs still refuses a second call.
func TestConfigureJobsOnce(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	if _, err := db.ConfigureJobs(store.JobsConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ConfigureJobs(store.JobsConfig{}); err == nil {
		t.Error("a second ConfigureJobs succeeded")
	}
}

// TestQueuePollIntervalBelowCooldownRefused: a queue cannot be asked to
// poll more often than a fetch may run.
func TestQueuePollIntervalBelowCooldownRefused(t *testing.T) {
	t.Parallel()
	workers := river.NewWorkers()
	river.AddWorker(workers, &markWorker{worked: make(chan string, 1)})
	_, err := storetest.SQLite(t).ConfigureJobs(store.JobsConfig{
		Workers: workers, Work: true, Queues: map[string]int{"reviews": 1},
		FetchCooldown: 20 * time.Millisecond, QueuePollInterval: 10 * time.Millisecond,
	})
	if err == nil || !strings.Contains(err.Error(), "QueuePollInterval cannot be shorter than FetchCooldown") {
		t.Errorf("ConfigureJobs with a queue polling every 10 ms and a 20 ms cooldown: %v", err)
	}
}

func TestOptimizeWorker(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		storetest.Review(t, db, storetest.Repo(t, db, "acme", "acme", "widgets"), 1, 3, time.Now())
		w := &store.OptimizeWorker{DB: db}
		if err := w.Work(context.Background(), &river.Job[store.OptimizeArgs]{}); err != nil {
			t.Errorf("optimize on %s: %v", b.Name, err)
		}
		if job := store.OptimizeEvery(); job == nil {
			t.Error("OptimizeEvery returned no periodic job")
		}
	})
}

// On SQLite the optimize job keeps stat1 but drops STAT4's samples, which
// would make every prepared statement recompile.
func TestOptimizeDropsStat4(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	repo := storetest.Repo(t, db, "acme", "acme", "widgets")
	for i := range 20 {
		storetest.Review(t, db, repo, i, 1, time.Now().Add(time.Duration(i)*time.Second))
	}
	ctx := context.Background()
	if _, err := db.Writer().Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		var n int
		if err := db.Writer().QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count("sqlite_stat4") == 0 {
		t.Fatal("ANALYZE wrote no STAT4 samples: the test proves nothing")
	}
	if err := (&store.OptimizeWorker{DB: db}).Work(ctx, &river.Job[store.OptimizeArgs]{}); err != nil {
		t.Fatal(err)
	}
	if n := count("sqlite_stat4"); n != 0 {
		t.Errorf("sqlite_stat4 has %d rows after optimize, want 0", n)
	}
	if count("sqlite_stat1") == 0 {
		t.Errorf("optimize dropped sqlite_stat1 too")
	}
}
