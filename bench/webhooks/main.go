// Command webhooks is quorum's webhook delivery benchmark. For each backend
// (a temporary SQLite and, when a PostgreSQL URL is given, a fresh schema
// there, dropped at the end) it builds and starts the real quorum server as
// a child process (quorum serve --webhook-allow-private), registers one
// endpoint pointing at a receiver in this process (loopback), commits
// --events events through event.Record, one per transaction, from this
// process, and measures deliveries/s from the first commit to the last
// receipt and the latency from each event's commit to its delivery's first
// arrival at the receiver. Then, in the same run, a bare net/http client
// posts the same bodies with the same headers to the same receiver with the
// same concurrency (the worker's attempts in flight to one endpoint); the
// ratio of deliveries/s is the figure. It prints markdown.
//
//	go run ./bench/webhooks                      # SQLite, plus PostgreSQL if QUORUM_TEST_POSTGRES_URL is set
//	go run ./bench/webhooks --postgres postgres://postgres@127.0.0.1:5432/test?sslmode=disable
//
// It is a command, not part of go test. See docs/performance.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/bench/internal/machine"
	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/webhook"
	"github.com/quorum-review/quorum/webhook/verify"
)

type config struct {
	events     int
	workers    int
	committers int
	timeout    time.Duration
	postgres   string
	noSQLite   bool
	keep       bool
	// inProcess > 0 runs the webhook worker in this process, with
	// Worker.PerEndpoint = inProcess, instead of quorum serve (whose
	// worker keeps webhook.DefaultPerEndpoint).
	inProcess int
	poll      time.Duration
	cooldown  time.Duration
	profile   string
	backlog   bool
}

func main() {
	var c config
	flag.IntVar(&c.events, "events", 2000, "events committed per backend, each with one delivery (1 to 100000)")
	flag.IntVar(&c.workers, "workers", 100, "quorum serve --workers (1 to 1000)")
	flag.IntVar(&c.committers, "committers", 4, "goroutines committing events concurrently, one event per transaction (1 to 64)")
	flag.DurationVar(&c.timeout, "timeout", 3*time.Minute, "bound of each backend's run, from the first commit to the last receipt (10s to 30m)")
	flag.StringVar(&c.postgres, "postgres", os.Getenv("QUORUM_TEST_POSTGRES_URL"), "PostgreSQL URL; a fresh schema is made in it and dropped at the end (default $QUORUM_TEST_POSTGRES_URL; empty: SQLite only)")
	flag.BoolVar(&c.noSQLite, "no-sqlite", false, "skip the SQLite backend")
	flag.IntVar(&c.inProcess, "in-process", 0, "instead of quorum serve, run River and the webhook worker in this process, on the *store.DB the events are committed through (as serve's own events are), with this many attempts in flight per endpoint (Worker.PerEndpoint); 0: the child process")
	flag.DurationVar(&c.poll, "poll", 0, "with --in-process: River's fetch poll interval (0: the store's default)")
	flag.DurationVar(&c.cooldown, "cooldown", 0, "with --in-process: River's fetch cooldown (0: the store's default)")
	flag.BoolVar(&c.backlog, "backlog", false, "commit every event first, then start the worker: deliveries/s is the drain rate of the backlog, latency runs from the worker's start")
	flag.StringVar(&c.profile, "cpuprofile", "", "write a CPU profile of this process (with --in-process: committers and worker) to this file")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (databases, binary)")
	flag.Parse()
	if c.events < 1 || c.events > 100_000 || c.workers < 1 || c.workers > 1000 || c.committers < 1 || c.committers > 64 {
		fatal(errors.New("--events must be 1..100000, --workers 1..1000, --committers 1..64"))
	}
	if c.inProcess < 0 || c.inProcess > 1000 || c.poll < 0 || c.poll > 10*time.Second || c.cooldown < 0 || c.cooldown > time.Second {
		fatal(errors.New("--in-process must be 0..1000, --poll 0..10s, --cooldown 0..1s"))
	}
	if c.timeout < 10*time.Second || c.timeout > 30*time.Minute {
		fatal(errors.New("--timeout must be from 10s to 30m"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.profile != "" {
		f, err := os.Create(c.profile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := bench(ctx, c); err != nil {
		pprof.StopCPUProfile()
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "webhooks:", err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

// receiver is the local endpoint: it notes when each delivery first
// arrived and answers 200.
type receiver struct {
	mu      sync.Mutex
	arrived map[string]time.Time // by delivery id (or baseline request id)
	total   atomic.Int64
	sample  *http.Request // one request as quorum sent it
	body    []byte
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.total.Add(1)
	id := req.Header.Get(verify.HeaderDelivery)
	r.mu.Lock()
	if _, ok := r.arrived[id]; !ok && id != "" {
		r.arrived[id] = now
	}
	if r.sample == nil && req.Header.Get("X-Bench-Baseline") == "" {
		r.sample, r.body = req.Clone(context.Background()), body
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (r *receiver) reset() {
	r.mu.Lock()
	r.arrived = map[string]time.Time{}
	r.mu.Unlock()
	r.total.Store(0)
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.arrived)
}

type result struct {
	backend   string
	n         int
	delivered int
	requests  int64
	commitDur time.Duration // first commit to last commit
	wall      time.Duration // first commit to last receipt
	lat       []time.Duration
	childCPU  time.Duration
}

func (r result) perSec() float64 { return float64(r.delivered) / r.wall.Seconds() }

func bench(ctx context.Context, c config) error {
	tmp, err := os.MkdirTemp("", "quorum-webhooks-")
	if err != nil {
		return err
	}
	if c.keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "quorum")
	if c.inProcess == 0 {
		logf("building the server: go build -o %s ./cmd/quorum", bin)
		if err := goBuild(ctx, bin); err != nil {
			return err
		}
	}
	rec := &receiver{arrived: map[string]time.Time{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	recvURL := "http://" + ln.Addr().String() + "/hook"

	var backends []string
	if !c.noSQLite {
		backends = append(backends, "sqlite")
	}
	if c.postgres != "" {
		backends = append(backends, "postgres")
	}
	if len(backends) == 0 {
		return errors.New("no backend: --no-sqlite without --postgres")
	}
	startLoad := machine.LoadAvg()
	rev, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	type pair struct{ q, b result }
	var rows []pair
	for _, b := range backends {
		q, err := runBackend(ctx, c, b, tmp, bin, rec, recvURL)
		if err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
		base, err := runBaseline(ctx, c, rec, recvURL)
		if err != nil {
			return fmt.Errorf("%s baseline: %w", b, err)
		}
		rows = append(rows, pair{q, base})
	}

	fmt.Printf("## quorum webhook delivery benchmark, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("- machine: %d CPUs (runtime.NumCPU), %s %s/%s, commit %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, strings.TrimSpace(string(rev)))
	fmt.Printf("- load average: %s at the start, %s at the end (1, 5, 15 min)\n", startLoad, machine.LoadAvg())
	worker := fmt.Sprintf("quorum serve --workers %d as a child process (Worker.PerEndpoint %d)", c.workers, perEndpoint(c))
	if c.inProcess > 0 {
		worker = fmt.Sprintf("River and webhook.Worker in the bench process on the committers' *store.DB, MaxWorkers %d, Worker.PerEndpoint %d, poll %s, cooldown %s (0: defaults)", c.workers, perEndpoint(c), c.poll, c.cooldown)
	}
	fmt.Printf("- %d events per backend, one endpoint (the receiver in the bench process, loopback), %d committing goroutines; %s; baseline: bare net/http client, %d concurrent requests (the worker's attempts in flight to one endpoint), same bodies and headers\n\n",
		c.events, c.committers, worker, perEndpoint(c))
	fmt.Println("| backend | delivered | commits/s | deliveries/s | commit→arrival p50 | p99 | max | CPU per delivery¹ | bare client deliveries/s | send→arrival p50 / p99 | ratio |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range rows {
		q, b := p.q, p.b
		fmt.Printf("| %s | %d/%d (%d requests) | %.0f | **%.0f** | %s | **%s** | %s | %s | %.0f | %s / %s | **%.3f** |\n",
			q.backend, q.delivered, q.n, q.requests, float64(q.n)/q.commitDur.Seconds(), q.perSec(),
			fmtDur(pct(q.lat, 0.50)), fmtDur(pct(q.lat, 0.99)), fmtDur(pct(q.lat, 1)),
			cpuPer(q),
			b.perSec(), fmtDur(pct(b.lat, 0.50)), fmtDur(pct(b.lat, 0.99)), q.perSec()/b.perSec())
	}
	fmt.Println()
	fmt.Println("¹ CPU time (user + system) per delivery of the quorum serve child; with --in-process, of the whole bench process (committers, worker and receiver; with --backlog from the worker's start).")
	fmt.Println()
	return nil
}

// perEndpoint is the worker's limit of attempts in flight to one
// endpoint: serve's default for --workers, or --in-process.
func perEndpoint(c config) int {
	if c.inProcess > 0 {
		return c.inProcess
	}
	return max(1, c.workers*3/4)
}

// worker is what works the delivery jobs: the child or River in-process.
type worker interface {
	cpu() time.Duration
	stop() error
}

type inProcess struct {
	jobs *store.Jobs
}

// cpu is this whole process's user+system CPU time: the worker, but also
// the committers, the receiver and the bare client.
func (p *inProcess) cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (p *inProcess) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.jobs.Stop(ctx)
}

// configureInProcess makes db's River client work the deliveries in this
// process, as quorum serve's does.
func configureInProcess(c config, db *store.DB) (*store.Jobs, error) {
	rw := river.NewWorkers()
	river.AddWorker(rw, &webhook.Worker{DB: db, Version: "bench", AllowPrivate: true, PerEndpoint: c.inProcess})
	return db.ConfigureJobs(store.JobsConfig{Workers: rw, Work: true, MaxWorkers: c.workers, PollInterval: c.poll, FetchCooldown: c.cooldown})
}

func runBackend(ctx context.Context, c config, backend, tmp, bin string, rec *receiver, recvURL string) (result, error) {
	res := result{backend: backend, n: c.events}
	dataDir := filepath.Join(tmp, "data-"+backend)
	var dbURL string
	if backend == "postgres" {
		u, drop, err := freshSchema(ctx, c.postgres)
		if err != nil {
			return res, err
		}
		defer drop()
		dbURL = u
	}
	db, err := store.Open(ctx, store.Config{URL: dbURL, DataDir: dataDir})
	if err != nil {
		return res, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return res, err
	}
	// Insert-only when the jobs are worked by the child.
	var jobs *store.Jobs
	if c.inProcess > 0 {
		jobs, err = configureInProcess(c, db)
	} else {
		_, err = db.ConfigureJobs(store.JobsConfig{})
	}
	if err != nil {
		return res, err
	}
	acct, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, "bench-webhooks", "")
	if err != nil {
		return res, err
	}
	if _, _, err := webhook.Create(ctx, db.Writer(), acct.ID, recvURL, nil, "bench", "", time.Now()); err != nil {
		return res, err
	}

	args := []string{"serve", "--data-dir", dataDir, "--addr", "127.0.0.1:0", "--log-level", "warn",
		"--webhook-allow-private", "--workers", fmt.Sprint(c.workers)}
	if dbURL != "" {
		args = append(args, "--database-url", dbURL)
	}
	var (
		ch   worker
		cpu0 time.Duration
	)
	startWorker := func() error {
		var err error
		if c.inProcess > 0 {
			err = jobs.Start(ctx)
			ch = &inProcess{jobs: jobs}
		} else {
			ch, err = startChild(ctx, "quorum-"+backend, bin, args)
		}
		if err != nil {
			return err
		}
		cpu0 = ch.cpu()
		return nil
	}
	defer func() {
		if ch == nil {
			return
		}
		if err := ch.stop(); err != nil {
			logf("%s: stop server: %v", backend, err)
		}
	}()
	if c.inProcess > 0 {
		res.backend += " (in-process)"
	}
	if c.backlog {
		res.backend += " (backlog)"
	} else if err := startWorker(); err != nil {
		return res, err
	}
	rec.reset()

	// Commit the events: one per transaction, as the review pipeline does.
	logf("%s: committing %d events from %d goroutines", backend, c.events, c.committers)
	committed := make([]time.Time, c.events)
	eventIDs := make([]string, c.events)
	data := map[string]any{
		"review_id": "rev_01jbench000000000000000000", "repository": "bench/webhooks", "pr_number": 1234,
		"head_sha": strings.Repeat("ab", 20), "verdict": "comment", "findings": 7,
		"url": "https://quorum.example/reviews/rev_01jbench000000000000000000",
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, c.committers)
	start := time.Now()
	for range c.committers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= c.events || ctx.Err() != nil {
					return
				}
				var id string
				err := db.InTx(ctx, func(tx store.Tx) error {
					var err error
					id, err = event.Record(ctx, tx, acct.ID, event.ReviewCompleted, data)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				committed[i], eventIDs[i] = time.Now(), id
			}
		})
	}
	wg.Wait()
	res.commitDur = time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return res, fmt.Errorf("commit: %w", err)
	}
	logf("%s: committed %d events in %s; waiting for the deliveries", backend, c.events, res.commitDur.Round(time.Millisecond))
	if c.backlog {
		// Time the drain of the backlog from the worker's start.
		start = time.Now()
		if err := startWorker(); err != nil {
			return res, err
		}
	}

	// Wait for every delivery, bounded.
	deadline := start.Add(c.timeout)
	for rec.count() < c.events && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	res.childCPU = ch.cpu() - cpu0

	// Each event's commit time by its delivery id.
	commitAt := make(map[string]time.Time, c.events)
	for i, id := range eventIDs {
		commitAt[id] = committed[i]
	}
	rows, err := db.Reader().Query(ctx, `SELECT id, event_id FROM webhook_deliveries`)
	if err != nil {
		return res, err
	}
	byDelivery := map[string]time.Time{}
	for rows.Next() {
		var did, eid string
		if err := rows.Scan(&did, &eid); err != nil {
			rows.Close()
			return res, err
		}
		if t, ok := commitAt[eid]; ok {
			byDelivery[did] = t
		}
	}
	rows.Close()
	rec.mu.Lock()
	var last time.Time
	for did, at := range rec.arrived {
		ct, ok := byDelivery[did]
		if !ok {
			continue
		}
		res.delivered++
		res.lat = append(res.lat, at.Sub(later(ct, start)))
		if at.After(last) {
			last = at
		}
	}
	rec.mu.Unlock()
	res.requests = rec.total.Load()
	slices.Sort(res.lat)
	res.wall = last.Sub(start)
	if res.delivered < c.events {
		logf("%s: only %d of %d deliveries arrived within %s", backend, res.delivered, c.events, c.timeout)
		res.wall = time.Since(start)
	}
	logf("%s: %d deliveries in %s: %.0f/s, commit→arrival p50 %s p99 %s", backend, res.delivered, res.wall.Round(time.Millisecond),
		res.perSec(), fmtDur(pct(res.lat, 0.5)), fmtDur(pct(res.lat, 0.99)))
	return res, nil
}

// runBaseline posts, with a bare net/http client, c.events requests with
// the body and headers of a delivery quorum sent, each with its own
// delivery id header, through as many connections as the worker keeps in
// flight to one endpoint.
func runBaseline(ctx context.Context, c config, rec *receiver, recvURL string) (result, error) {
	res := result{backend: "baseline", n: c.events}
	rec.mu.Lock()
	sample, body := rec.sample, rec.body
	rec.mu.Unlock()
	if sample == nil {
		return res, errors.New("no delivery arrived to copy")
	}
	rec.reset()
	conc := perEndpoint(c)
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 100, MaxIdleConnsPerHost: conc, IdleConnTimeout: 90 * time.Second}}
	sent := make([]time.Time, c.events)
	ids := make([]string, c.events)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Int64
	start := time.Now()
	deadline := start.Add(c.timeout)
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= c.events || ctx.Err() != nil || time.Now().After(deadline) {
					return
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, recvURL, bytes.NewReader(body))
				if err != nil {
					failed.Add(1)
					return
				}
				req.Header = sample.Header.Clone()
				ids[i] = fmt.Sprintf("dlv_baseline%013d", i)
				req.Header.Set(verify.HeaderDelivery, ids[i])
				req.Header.Set("X-Bench-Baseline", "1")
				sent[i] = time.Now()
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	rec.mu.Lock()
	var last time.Time
	for i, id := range ids {
		at, ok := rec.arrived[id]
		if !ok {
			continue
		}
		res.delivered++
		res.lat = append(res.lat, at.Sub(sent[i]))
		if at.After(last) {
			last = at
		}
	}
	rec.mu.Unlock()
	slices.Sort(res.lat)
	res.wall = last.Sub(start)
	if res.delivered == 0 || failed.Load() > 0 {
		return res, fmt.Errorf("baseline: %d delivered, %d failed", res.delivered, failed.Load())
	}
	logf("baseline: %d requests (body %d B) in %s: %.0f/s", res.delivered, len(body), res.wall.Round(time.Millisecond), res.perSec())
	return res, nil
}

// goBuild builds cmd/quorum of the module this command belongs to.
func goBuild(ctx context.Context, out string) error {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/quorum")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/quorum: %w", err)
	}
	return nil
}

// freshSchema creates a schema in the PostgreSQL at base and returns a URL
// whose search_path is that schema, and a function that drops it.
func freshSchema(ctx context.Context, base string) (string, func(), error) {
	admin, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("parse postgres url: %w", err)
	}
	aq := admin.Query()
	for k := range aq {
		if strings.HasPrefix(k, "pool_") {
			aq.Del(k)
		}
	}
	admin.RawQuery = aq.Encode()
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return "", nil, fmt.Errorf("connect to postgres: %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "quorum_bench_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := conn.Exec(dctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			logf("drop schema %s: %v", schema, err)
		}
		conn.Close(dctx)
	}
	u := *admin
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	logf("postgres: schema %s", schema)
	return u.String(), drop, nil
}

// child is the quorum server as a child process.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan error
}

var servingLine = regexp.MustCompile(`serving on (http://[^ ]+)`)

func startChild(ctx context.Context, name, bin string, args []string) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan error, 1)}
	found := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if servingLine.MatchString(sc.Text()) {
				select {
				case found <- struct{}{}:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { c.done <- cmd.Wait() }()
	select {
	case <-found:
		return c, nil
	case err := <-c.done:
		return nil, fmt.Errorf("%s exited before serving: %v", name, err)
	case <-time.After(2 * time.Minute):
		_ = c.stop()
		return nil, fmt.Errorf("%s did not start serving within 2 minutes", name)
	case <-ctx.Done():
		_ = c.stop()
		return nil, ctx.Err()
	}
}

// stop sends SIGTERM and waits up to 30 s before killing the child.
func (c *child) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() {
			return nil
		}
		return err
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop within 30 s; killed", c.name)
	}
}

// cpu is the child's user+system CPU time so far, from /proc/PID/stat.
func (c *child) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	_, _ = fmt.Sscan(f[11], &utime)
	_, _ = fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

func cpuPer(r result) string {
	if r.childCPU == 0 {
		return "—"
	}
	return fmtDur(r.childCPU / time.Duration(max(r.delivered, 1)))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
}
