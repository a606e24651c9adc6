package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/membudget"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// analysing is a specialist that records how many reviews analyse at once.
// Each review's run holds on until either another review analyses beside
// it (what the memory budget forbids) or a review logged that it waits for
// memory: so without the budget the two overlap, with it they cannot, and
// no test waits on a clock.
type analysing struct {
	mu      sync.Mutex
	active  int
	most    int
	runs    int
	changed chan struct{} // closed and replaced on every change of active or of the log
	waited  bool
}

func newAnalysing() *analysing { return &analysing{changed: make(chan struct{})} }

func (a *analysing) notify() {
	close(a.changed)
	a.changed = make(chan struct{})
}

func (a *analysing) Name() string { return specialist.Logic }

func (a *analysing) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	a.mu.Lock()
	a.active++
	a.runs++
	a.most = max(a.most, a.active)
	a.notify()
	for a.most < 2 && !a.waited {
		ch := a.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			a.mu.Lock()
			a.active--
			a.mu.Unlock()
			return nil, ctx.Err()
		}
		a.mu.Lock()
	}
	a.active--
	a.notify()
	a.mu.Unlock()
	return nil, nil
}

// Handle is a slog.Handler's: it keeps the messages, and tells Review of a
// wait for memory.
type logHook struct {
	a    *analysing
	mu   sync.Mutex
	msgs []string
}

func (h *logHook) Enabled(context.Context, slog.Level) bool { return true }
func (h *logHook) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logHook) WithGroup(string) slog.Handler            { return h }
func (h *logHook) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.msgs = append(h.msgs, r.Message)
	h.mu.Unlock()
	if r.Message == "review waiting for memory" {
		h.a.mu.Lock()
		h.a.waited = true
		h.a.notify()
		h.a.mu.Unlock()
	}
	return nil
}

func (h *logHook) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// runTwoReviews queues reviews of two pull requests with the same change
// on a worker with two review slots and a memory budget of budget(the
// change's estimate) bytes (none when budget is nil), runs them to the end,
// and returns the most reviews seen analysing at once, and the log.
func runTwoReviews(t *testing.T, budget func(estimate int64) int64) (most int, log *logHook) {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n", "app.go": baseApp})
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(map[string]string{"app.go": headApp})
	head := r.Commit("push")

	est, err := membudget.EstimateOf(context.Background(), r.Change("main", head))
	if err != nil {
		t.Fatal(err)
	}
	if est.SourceBytes != int64(len(headApp)) {
		t.Fatalf("estimate %+v, want app.go's %d bytes counted", est, len(headApp))
	}
	a := newAnalysing()
	log = &logHook{a: a}
	w := &Worker{
		DB:          storetest.SQLite(t),
		Sources:     map[string]func(string) change.Source{"local": func(dir string) change.Source { return change.NewLocal(dir) }},
		Specialists: func(repoconfig.Config, ReviewArgs) []specialist.Specialist { return []specialist.Specialist{a} },
		Watch:       time.Hour,
		Log:         slog.New(log),
	}
	if budget != nil {
		w.Memory = membudget.New(budget(est.Bytes))
	}
	repo := storetest.Repo(t, w.DB, "acme", "acme", "api")
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	jobs, err := w.DB.ConfigureJobs(store.JobsConfig{Workers: workers, Work: true, PollInterval: 50 * time.Millisecond, QueuePollInterval: 50 * time.Millisecond, Queues: map[string]int{Queue: 2}})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := jobs.Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer cancel()
	for _, pr := range []int{1, 2} {
		err := w.DB.InTx(context.Background(), func(tx store.Tx) error {
			return Enqueue(context.Background(), tx, ReviewArgs{AccountID: repo.AccountID, RepositoryID: repo.ID,
				Owner: "acme", Repo: "api", PR: pr, Head: head, Base: "main", Source: "local", Location: r.Dir}, time.Now())
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if err := jobs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = jobs.Stop(sctx)
	}()
	timeout := time.After(60 * time.Second)
	for range 2 {
		select {
		case e := <-done:
			if e.Job.State != "completed" {
				t.Fatalf("a review job ended %s: %v", e.Job.State, e.Job.Errors)
			}
		case <-timeout:
			t.Fatal("the two reviews did not end in 60 s")
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.runs != 2 {
		t.Fatalf("%d reviews analysed, want 2", a.runs)
	}
	return a.most, log
}

// With a budget that fits one review's estimate and not two, two queued
// reviews never analyse at once: the second says in the log that it waits
// for memory, and runs once the first is done.
func TestReviewMemoryBudgetRunsOneAtATime(t *testing.T) {
	t.Parallel()
	most, log := runTwoReviews(t, func(est int64) int64 { return est * 3 / 2 })
	if most != 1 {
		t.Errorf("%d reviews analysed at once, want 1", most)
	}
	if log.count("review waiting for memory") != 1 || log.count("review got its memory") != 1 {
		t.Errorf("log %q: want one review waiting for memory, then getting it", log.msgs)
	}
}

// A review whose estimate exceeds the whole budget still runs, alone.
func TestReviewMemoryBudgetSmallerThanAReview(t *testing.T) {
	t.Parallel()
	most, log := runTwoReviews(t, func(int64) int64 { return 1 })
	if most != 1 {
		t.Errorf("%d reviews analysed at once, want 1", most)
	}
	if log.count("review got its memory") != 1 {
		t.Errorf("log %q: want the second review to get the budget once the first was done", log.msgs)
	}
}

// With a budget that fits both, they analyse side by side (the test's
// specialist can tell).
func TestReviewMemoryBudgetFitsTwo(t *testing.T) {
	t.Parallel()
	most, log := runTwoReviews(t, func(est int64) int64 { return est * 2 })
	if most != 2 {
		t.Errorf("%d reviews analysed at once, want 2", most)
	}
	if n := log.count("review waiting for memory"); n != 0 {
		t.Errorf("%d reviews waited for memory, want none", n)
	}
}
