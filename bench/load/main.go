// Command load is quorum's API load benchmark. In one run it seeds a
// database (a temporary SQLite and, when a PostgreSQL URL is given, a fresh
// schema there), builds and starts the real quorum server as a child process,
// starts a bare net/http server (another child process) that serves a fixed
// JSON body of the same size as each quorum response, and drives both with
// 64 keep-alive connections, interleaving the runs so that noise on the
// machine affects both alike. It prints markdown tables: requests/s, p50
// and p99 latency, the ratio to the baseline, and the server's peak RSS.
//
//	go run ./bench/load                          # SQLite, plus PostgreSQL if QUORUM_TEST_POSTGRES_URL is set
//	go run ./bench/load --postgres postgres://postgres@127.0.0.1:5432/test?sslmode=disable
//	go run ./bench/load --deep                   # 1,000,000 reviews: page 1 vs page 10,000
//	go run ./bench/load --dashboard              # 1,000,000 reviews: each dashboard page vs its API request
//
// It is a command, not part of go test. See docs/performance.md.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quorum-review/quorum/bench/internal/machine"
	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/token"
)

type config struct {
	reviews     int
	deep        bool
	dash        bool
	deepReviews int
	deepPage    int
	duration    time.Duration
	warmup      time.Duration
	conns       int
	rounds      int
	postgres    string
	noSQLite    bool
	wrk         bool
	cpuProfile  string
	keep        bool
	samples     int
	seedProfile string
	compareSrc  string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == baselineArg {
		if err := runBaseline(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "baseline:", err)
			os.Exit(1)
		}
		return
	}
	var c config
	flag.IntVar(&c.reviews, "reviews", 10_000, "reviews to seed in the one repository for the throughput runs")
	flag.BoolVar(&c.deep, "deep", false, "run the deep-pagination benchmark instead: seed --deep-reviews reviews and compare page 1 with page --deep-page")
	flag.BoolVar(&c.dash, "dashboard", false, "run the dashboard benchmark instead: seed --deep-reviews reviews and time each dashboard page against the API request that reads the same data")
	flag.IntVar(&c.deepReviews, "deep-reviews", 1_000_000, "reviews to seed for --deep")
	flag.IntVar(&c.deepPage, "deep-page", 10_000, "the deep page (of 20 reviews) compared with page 1 in --deep")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "length of each measured run (1s to 60s)")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured run before each target's first measured run (0 to 10s)")
	flag.IntVar(&c.conns, "conns", 64, "concurrent keep-alive connections (1 to 256)")
	flag.IntVar(&c.rounds, "rounds", 3, "measured runs of each target, interleaved with the baseline's (1 to 10)")
	flag.StringVar(&c.postgres, "postgres", os.Getenv("QUORUM_TEST_POSTGRES_URL"), "PostgreSQL URL; a fresh schema is made in it and dropped at the end (default $QUORUM_TEST_POSTGRES_URL; empty: SQLite only)")
	flag.BoolVar(&c.noSQLite, "no-sqlite", false, "skip the SQLite backend")
	flag.BoolVar(&c.wrk, "wrk", false, "also drive each target with wrk (must be on PATH) as a cross-check, interleaved the same way")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "directory: after the child-process runs, serve the API in this process and write a CPU profile of each endpoint under load there")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (databases, binary, bodies)")
	flag.IntVar(&c.samples, "samples", 500, "sequential requests of each page in --deep (single connection, interleaved)")
	flag.StringVar(&c.seedProfile, "seed-cpuprofile", "", "write a CPU profile of seeding to this file (last backend wins)")
	flag.StringVar(&c.compareSrc, "compare-src", "", "a checkout of quorum (module root) whose server is built and run too, on the same database, interleaved with the others: an A/B test of a change")
	flag.Parse()
	if c.duration < time.Second || c.duration > time.Minute {
		fatal(errors.New("--duration must be from 1s to 60s"))
	}
	if c.warmup < 0 || c.warmup > 10*time.Second {
		fatal(errors.New("--warmup must be from 0 to 10s"))
	}
	if c.conns < 1 || c.conns > 256 || c.rounds < 1 || c.rounds > 10 || c.samples < 1 || c.samples > 100_000 {
		fatal(errors.New("--conns must be 1..256, --rounds 1..10, --samples 1..100000"))
	}
	if c.reviews < 21 || c.deepReviews < 21*c.deepPage || c.deepPage < 2 {
		fatal(errors.New("--reviews must be at least 21 and --deep-reviews at least 21×--deep-page"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, c); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

func bench(ctx context.Context, c config) error {
	tmp, err := os.MkdirTemp("", "quorum-load-")
	if err != nil {
		return err
	}
	if c.keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "quorum")
	logf("building the server: go build -o %s ./cmd/quorum", bin)
	if err := goBuild(ctx, "", bin); err != nil {
		return err
	}
	if c.compareSrc != "" {
		logf("building the comparison server from %s", c.compareSrc)
		if err := goBuild(ctx, c.compareSrc, bin+"-compare"); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	printHeader(c)
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
	for _, b := range backends {
		if err := benchBackend(ctx, c, b, tmp, bin, self); err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
	}
	return nil
}

// goBuild builds cmd/quorum of the module this command belongs to.
func goBuild(ctx context.Context, root, out string) error {
	if root == "" {
		gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
		if err != nil {
			return fmt.Errorf("go env GOMOD: %w", err)
		}
		root = filepath.Dir(strings.TrimSpace(string(gomod)))
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/quorum")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/quorum in %s: %w", root, err)
	}
	return nil
}

func printHeader(c config) {
	rev, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	fmt.Printf("## quorum load benchmark, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("- machine: %d CPUs (runtime.NumCPU), %s %s/%s, commit %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, strings.TrimSpace(string(rev)))
	fmt.Printf("- load average at the start: %s\n", machine.LoadAvg())
	fmt.Printf("- load: %d keep-alive connections (Go net/http client in this process, same machine), %s per run after a %s warm-up, %d interleaved rounds\n",
		c.conns, c.duration, c.warmup, c.rounds)
	switch {
	case c.dash:
		fmt.Printf("- dashboard: %d reviews in one repository; each page against the API request that reads the same data\n\n", c.deepReviews)
	case c.deep:
		fmt.Printf("- deep pagination: %d reviews in one repository, page 1 vs page %d at limit=20\n\n", c.deepReviews, c.deepPage)
	default:
		fmt.Printf("- data: %d reviews in one repository; GET /v1/reviews/{id} is the newest review, with 20 findings\n\n", c.reviews)
	}
}

// database is a seeded database and how the server opens it.
type database struct {
	backend string
	dataDir string
	url     string
	seeded  seeded
	drop    func()
}

func (d database) serveArgs() []string {
	args := []string{"serve", "--data-dir", d.dataDir, "--addr", "127.0.0.1:0", "--log-level", "warn", "--rate-limit", "1000000000"}
	if d.url != "" {
		args = append(args, "--database-url", d.url)
	}
	return args
}

func (d database) open(ctx context.Context) (*store.DB, error) {
	return store.Open(ctx, store.Config{URL: d.url, DataDir: d.dataDir})
}

// prepare makes a fresh, migrated, seeded database of the backend.
func prepare(ctx context.Context, backend, tmp, pgURL string, n int, seedProfile string) (database, error) {
	d := database{backend: backend, dataDir: filepath.Join(tmp, "data-"+backend), drop: func() {}}
	if backend == "postgres" {
		u, drop, err := freshSchema(ctx, pgURL)
		if err != nil {
			return d, err
		}
		d.url, d.drop = u, drop
	}
	db, err := d.open(ctx)
	if err != nil {
		d.drop()
		return d, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		d.drop()
		return d, err
	}
	logf("%s: seeding %d reviews", backend, n)
	last := time.Now()
	if seedProfile != "" {
		f, err := os.Create(seedProfile)
		if err != nil {
			return d, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return d, err
		}
	}
	s, err := seed(ctx, db, benchPlan(n), func(done int) {
		if time.Since(last) > 10*time.Second {
			logf("%s: %d reviews", backend, done)
			last = time.Now()
		}
	})
	if seedProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		d.drop()
		return d, err
	}
	// Planner statistics, as autovacuum or the server's daily optimize job
	// would have them on a database that grew to this size.
	stmt := "ANALYZE"
	if _, err := db.Writer().Exec(ctx, stmt); err != nil {
		d.drop()
		return d, fmt.Errorf("analyze: %w", err)
	}
	logf("%s: seeded %d reviews in %s (%.0f reviews/s)", backend, n, s.Took.Round(time.Millisecond), float64(n)/s.Took.Seconds())
	d.seeded = s
	return d, nil
}

// freshSchema creates a schema in the PostgreSQL at base and returns a URL
// whose search_path is that schema, and a function that drops it.
func freshSchema(ctx context.Context, base string) (string, func(), error) {
	// pgxpool's own parameters (pool_max_conns, …) pass through to the
	// server's URL; the admin connection here is not a pool.
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
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	logf("postgres: schema %s", schema)
	return u.String(), drop, nil
}

// target is one URL the load generator drives.
type target struct {
	name   string
	url    string
	header http.Header
	bytes  int64
}

func benchBackend(ctx context.Context, c config, backend, tmp, bin, self string) error {
	n := c.reviews
	if c.deep || c.dash {
		n = c.deepReviews
	}
	d, err := prepare(ctx, backend, tmp, c.postgres, n, c.seedProfile)
	if err != nil {
		return err
	}
	defer d.drop()
	if c.dash {
		if err := seedRepositories(ctx, d); err != nil {
			return err
		}
	}

	srv, err := startChild(ctx, "quorum", bin, d.serveArgs(), nil)
	if err != nil {
		return err
	}
	defer srv.stop()
	logf("%s: quorum serving on %s (pid %d)", backend, srv.base, srv.cmd.Process.Pid)
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go srv.sampleRSS(sctx)

	auth := http.Header{"Authorization": {"Bearer " + d.seeded.Token}}
	client := newClient(c.conns)
	defer client.CloseIdleConnections()

	if c.deep {
		return deep(ctx, c, d, srv, client, auth)
	}
	if c.dash {
		return dashboard(ctx, c, d, srv)
	}

	getURL := srv.base + "/v1/reviews/" + d.seeded.FullID
	listURL := srv.base + "/v1/reviews?" + url.Values{"owner": {d.seeded.Owner}, "repo": {d.seeded.Repo}, "limit": {"20"}}.Encode()
	getBody, err := fetchChecked(ctx, client, getURL, auth, func(b []byte) error {
		var v struct {
			Findings []json.RawMessage `json:"findings"`
		}
		if err := json.Unmarshal(b, &v); err != nil || len(v.Findings) != 20 {
			return fmt.Errorf("review has %d findings, want 20 (%v)", len(v.Findings), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	listBody, err := fetchChecked(ctx, client, listURL, auth, func(b []byte) error {
		var v struct {
			Reviews    []json.RawMessage `json:"reviews"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(b, &v); err != nil || len(v.Reviews) != 20 || v.NextCursor == nil {
			return fmt.Errorf("list has %d reviews, want 20 and a next_cursor (%v)", len(v.Reviews), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	getFile, listFile := filepath.Join(tmp, backend+"-review.json"), filepath.Join(tmp, backend+"-list.json")
	if err := os.WriteFile(getFile, getBody, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(listFile, listBody, 0o600); err != nil {
		return err
	}
	base, err := startChild(ctx, "baseline", self, []string{baselineArg, "/review=" + getFile, "/list=" + listFile}, nil)
	if err != nil {
		return err
	}
	defer base.stop()
	logf("%s: baseline serving on %s (pid %d); bodies %d and %d bytes", backend, base.base, base.cmd.Process.Pid, len(getBody), len(listBody))

	var alt *child
	if c.compareSrc != "" {
		alt, err = startChild(ctx, "quorum-compare", bin+"-compare", d.serveArgs(), nil)
		if err != nil {
			return err
		}
		defer alt.stop()
		logf("%s: comparison server (%s) serving on %s (pid %d)", backend, c.compareSrc, alt.base, alt.cmd.Process.Pid)
	}
	pairs := []struct {
		endpoint         string
		quorum, baseline target
	}{
		{"GET /v1/reviews/{id} (20 findings)",
			target{"quorum", getURL, auth, int64(len(getBody))},
			target{"net/http baseline", base.base + "/review", auth, int64(len(getBody))}},
		{"GET /v1/reviews?limit=20",
			target{"quorum", listURL, auth, int64(len(listBody))},
			target{"net/http baseline", base.base + "/list", auth, int64(len(listBody))}},
	}
	type pooled struct{ q, b, a run }
	results := make([]pooled, len(pairs))
	altTarget := func(t target) []target {
		if alt == nil {
			return nil
		}
		u, _ := url.Parse(t.url)
		return []target{{"quorum-compare", alt.base + u.RequestURI(), t.header, t.bytes}}
	}
	if c.warmup > 0 {
		for _, p := range pairs {
			for _, t := range append([]target{p.baseline, p.quorum}, altTarget(p.quorum)...) {
				if _, err := drive(ctx, client, t.url, t.header, c.conns, c.warmup, t.bytes); err != nil {
					return fmt.Errorf("warm-up %s: %w", t.name, err)
				}
			}
		}
	}
	for r := range c.rounds {
		for i, p := range pairs {
			order := append([]target{p.baseline, p.quorum}, altTarget(p.quorum)...)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, t := range order {
				proc := map[string]*child{"quorum": srv, "quorum-compare": alt}[t.name]
				if proc == nil {
					proc = base
				}
				cpu0 := proc.cpu()
				res, err := drive(ctx, client, t.url, t.header, c.conns, c.duration, t.bytes)
				if err != nil {
					return fmt.Errorf("%s %s: %w", t.name, p.endpoint, err)
				}
				res.CPU = proc.cpu() - cpu0
				logf("%s: round %d %-40s %-18s %8.0f req/s p50 %-9s p99 %-9s server CPU %3.0f%%", backend, r+1, p.endpoint, t.name, res.RPS(), fmtDur(res.Pct(50)), fmtDur(res.Pct(99)), res.cpuPct())
				switch t.name {
				case "quorum":
					results[i].q.add(res)
				case "quorum-compare":
					results[i].a.add(res)
				default:
					results[i].b.add(res)
				}
			}
		}
	}
	hwm, _ := srv.status("VmHWM")
	rss, _ := srv.status("VmRSS")
	baseHWM, _ := base.status("VmHWM")

	fmt.Printf("### %s — Go load generator, %d connections, %d × %s per target\n\n", backend, c.conns, c.rounds, c.duration)
	fmt.Println("| endpoint | server | requests/s | p50 | p99 | requests | server CPU | CPU µs/request | ratio (req/s) to baseline |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for i, p := range pairs {
		q, b := results[i].q, results[i].b
		fmt.Printf("| %s | net/http baseline, same %d-byte body | %.0f | %s | %s | %d | %.0f%% | %.0f | 1 |\n", p.endpoint, p.quorum.bytes, b.RPS(), fmtDur(b.Pct(50)), fmtDur(b.Pct(99)), b.Requests, b.cpuPct(), b.cpuPerReq())
		fmt.Printf("| %s | quorum (%s) | %.0f | %s | %s | %d | %.0f%% | %.0f | **%.2f** |\n", p.endpoint, backend, q.RPS(), fmtDur(q.Pct(50)), fmtDur(q.Pct(99)), q.Requests, q.cpuPct(), q.cpuPerReq(), q.RPS()/b.RPS())
		if a := results[i].a; alt != nil {
			fmt.Printf("| %s | quorum from %s (%s) | %.0f | %s | %s | %d | %.0f%% | %.0f | **%.2f** |\n", p.endpoint, c.compareSrc, backend, a.RPS(), fmtDur(a.Pct(50)), fmtDur(a.Pct(99)), a.Requests, a.cpuPct(), a.cpuPerReq(), a.RPS()/b.RPS())
		}
	}
	fmt.Printf("\nServer CPU is the server process's user+system time over the run (200%% = both cores); with PostgreSQL the database's own processes come on top. Load average %s (1, 5, 15 min) at the end.\n", machine.LoadAvg())
	fmt.Printf("Every response was 200 with the expected body size. quorum server RSS: peak (VmHWM) %.1f MB, highest sampled VmRSS under load %.1f MB, at the end %.1f MB; baseline peak %.1f MB. Seeding %d reviews took %s. Server log lines about requests abandoned at the end of a timed run (\"context canceled\", logged as internal errors) hidden: %d.\n\n",
		mb(hwm), mb(srv.maxRSS()), mb(rss), mb(baseHWM), d.seeded.Reviews, d.seeded.Took.Round(time.Millisecond), srv.stderr.droppedLines())

	if c.wrk {
		if err := wrkRuns(ctx, c, backend, pairs[0].quorum, pairs[0].baseline, pairs[0].endpoint, pairs[1].quorum, pairs[1].baseline, pairs[1].endpoint); err != nil {
			return err
		}
		hwm, _ = srv.status("VmHWM")
		fmt.Printf("quorum server peak RSS (VmHWM) after the wrk runs too: %.1f MB.\n\n", mb(hwm))
	}

	if c.cpuProfile != "" {
		stopSampling()
		if err := srv.stop(); err != nil {
			return err
		}
		return profile(ctx, c, d, pairs[0].quorum, pairs[1].quorum)
	}
	return nil
}

func fetchChecked(ctx context.Context, client *http.Client, u string, h http.Header, check func([]byte) error) ([]byte, error) {
	b, err := getBody(ctx, client, u, h)
	if err != nil {
		return nil, err
	}
	if err := check(b); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return b, nil
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

func fmtDur(d time.Duration) string {
	switch {
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
}

// deep walks to page c.deepPage of the listing, then compares the cost of
// page 1 with that page: sequentially on one connection, interleaved, and
// under c.conns connections.
func deep(ctx context.Context, c config, d database, srv *child, client *http.Client, auth http.Header) error {
	list := srv.base + "/v1/reviews?" + url.Values{"owner": {d.seeded.Owner}, "repo": {d.seeded.Repo}, "limit": {"20"}}.Encode()
	logf("%s: walking to page %d", d.backend, c.deepPage)
	start := time.Now()
	next := ""
	var firstPages, lastPages []time.Duration
	for page := 1; page < c.deepPage; page++ {
		u := list
		if next != "" {
			u += "&cursor=" + url.QueryEscape(next)
		}
		t0 := time.Now()
		b, err := getBody(ctx, client, u, auth)
		if err != nil {
			return fmt.Errorf("page %d: %w", page, err)
		}
		el := time.Since(t0)
		if page <= 100 {
			firstPages = append(firstPages, el)
		}
		if page > c.deepPage-101 {
			lastPages = append(lastPages, el)
		}
		var v struct {
			Reviews    []json.RawMessage `json:"reviews"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(b, &v); err != nil || len(v.Reviews) != 20 || v.NextCursor == nil {
			return fmt.Errorf("page %d: %d reviews, want 20 and a next_cursor (%v)", page, len(v.Reviews), err)
		}
		next = *v.NextCursor
	}
	walk := time.Since(start)
	logf("%s: walked %d pages in %s", d.backend, c.deepPage-1, walk.Round(time.Millisecond))
	deepURL := list + "&cursor=" + url.QueryEscape(next)

	// Sequential, one connection, alternating page 1 and the deep page.
	one := newClient(1)
	defer one.CloseIdleConnections()
	var seq1, seqN []time.Duration
	for i := 0; i < c.samples; i++ {
		for j, u := range []string{list, deepURL} {
			if i%2 == 1 {
				u = []string{deepURL, list}[j]
			}
			t0 := time.Now()
			if _, err := get(ctx, one, u, auth); err != nil {
				return err
			}
			el := time.Since(t0)
			if u == list {
				seq1 = append(seq1, el)
			} else {
				seqN = append(seqN, el)
			}
		}
	}
	slices.Sort(seq1)
	slices.Sort(seqN)

	// Under load, interleaved rounds.
	var load1, loadN run
	if c.warmup > 0 {
		for _, u := range []string{list, deepURL} {
			if _, err := drive(ctx, client, u, auth, c.conns, c.warmup, 0); err != nil {
				return err
			}
		}
	}
	for r := range c.rounds {
		order := []string{list, deepURL}
		if r%2 == 1 {
			order = []string{deepURL, list}
		}
		for _, u := range order {
			res, err := drive(ctx, client, u, auth, c.conns, c.duration, 0)
			if err != nil {
				return err
			}
			name := "page 1"
			if u == deepURL {
				name = fmt.Sprintf("page %d", c.deepPage)
				loadN.add(res)
			} else {
				load1.add(res)
			}
			logf("%s: round %d %-12s %8.0f req/s p50 %-9s p99 %s", d.backend, r+1, name, res.RPS(), fmtDur(res.Pct(50)), fmtDur(res.Pct(99)))
		}
	}
	hwm, _ := srv.status("VmHWM")

	slices.Sort(firstPages)
	slices.Sort(lastPages)
	fmt.Printf("### %s — deep pagination, %d reviews in one repository, limit=20\n\n", d.backend, d.seeded.Reviews)
	fmt.Println("| measurement | page 1 | page " + fmt.Sprint(c.deepPage) + " | ratio deep / page 1 |")
	fmt.Println("|---|---:|---:|---:|")
	fmt.Printf("| p50, 1 connection, %d sequential requests each, alternating | %s | %s | **%.2f** |\n", c.samples, fmtDur(pct(seq1, 50)), fmtDur(pct(seqN, 50)), ratio(pct(seqN, 50), pct(seq1, 50)))
	fmt.Printf("| p99, same | %s | %s | %.2f |\n", fmtDur(pct(seq1, 99)), fmtDur(pct(seqN, 99)), ratio(pct(seqN, 99), pct(seq1, 99)))
	fmt.Printf("| requests/s, %d connections, %d × %s | %.0f | %.0f | %.2f |\n", c.conns, c.rounds, c.duration, load1.RPS(), loadN.RPS(), load1.RPS()/loadN.RPS())
	fmt.Printf("| p50 under that load | %s | %s | **%.2f** |\n", fmtDur(load1.Pct(50)), fmtDur(loadN.Pct(50)), ratio(loadN.Pct(50), load1.Pct(50)))
	fmt.Printf("| p99 under that load | %s | %s | %.2f |\n", fmtDur(load1.Pct(99)), fmtDur(loadN.Pct(99)), ratio(loadN.Pct(99), load1.Pct(99)))
	fmt.Printf("| p50 while walking (pages 1–100 vs pages %d–%d) | %s | %s | %.2f |\n", c.deepPage-100, c.deepPage-1, fmtDur(pct(firstPages, 50)), fmtDur(pct(lastPages, 50)), ratio(pct(lastPages, 50), pct(firstPages, 50)))
	fmt.Printf("\n(The requests/s row's ratio is page 1 / deep page, so that above 1 means the deep page is dearer in every row.) Walking to page %d took %s (%d requests). Seeding %d reviews took %s. quorum server peak RSS (VmHWM) %.1f MB, highest sampled VmRSS %.1f MB (sampled every 100 ms until the server stops). Every response was 200.\n\n",
		c.deepPage, walk.Round(time.Millisecond), c.deepPage-1, d.seeded.Reviews, d.seeded.Took.Round(time.Second), mb(hwm), mb(srv.maxRSS()))
	return nil
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// profile serves the API in this process over the same database and writes
// a CPU profile of each endpoint under load (the server has no pprof
// endpoint). The load generator runs in this process too, so its own work
// shows in the profile: focus on internal/api, internal/review,
// internal/token and the database driver.
func profile(ctx context.Context, c config, d database, get, list target) error {
	if err := os.MkdirAll(c.cpuProfile, 0o755); err != nil {
		return err
	}
	db, err := d.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tokens := token.NewStore(db, time.Now)
	h, err := api.New(ctx, api.Config{DocsURL: "http://127.0.0.1/docs", RateLimit: 1_000_000_000, RateWindow: time.Hour, Version: "bench"}, db, tokens, log, time.Now)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	client := newClient(c.conns)
	defer client.CloseIdleConnections()
	for _, t := range []struct {
		name string
		t    target
	}{{"get", get}, {"list", list}} {
		u, _ := url.Parse(t.t.url)
		target := base + u.RequestURI()
		if _, err := drive(ctx, client, target, t.t.header, c.conns, c.warmup, 0); err != nil {
			return err
		}
		file := filepath.Join(c.cpuProfile, d.backend+"-"+t.name+".pprof")
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		runtime.SetBlockProfileRate(int(100 * time.Microsecond))
		runtime.SetMutexProfileFraction(10)
		res, err := drive(ctx, client, target, t.t.header, c.conns, c.duration, 0)
		pprof.StopCPUProfile()
		f.Close()
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
		if err != nil {
			return err
		}
		for _, kind := range []string{"block", "mutex"} {
			pf, err := os.Create(filepath.Join(c.cpuProfile, d.backend+"-"+t.name+"-"+kind+".pprof"))
			if err != nil {
				return err
			}
			err = pprof.Lookup(kind).WriteTo(pf, 0)
			pf.Close()
			if err != nil {
				return err
			}
		}
		logf("%s: in-process %s: %.0f req/s p50 %s p99 %s; CPU profile in %s", d.backend, t.name, res.RPS(), fmtDur(res.Pct(50)), fmtDur(res.Pct(99)), file)
	}
	return nil
}
