package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/dashboard"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/llmcache"
	"github.com/quorum-review/quorum/internal/membudget"
	"github.com/quorum-review/quorum/internal/metrics"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/builtin"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

// softLimitHeadroom is what the process takes beside its reviews (the API,
// webhook deliveries: about 60 MB idle), added to the review memory budget
// for the Go runtime's soft memory limit.
const softLimitHeadroom = 256 << 20

// reviewBudget is --review-memory in bytes, or the default from the
// cgroup's limit or the machine's memory, read through read.
func reviewBudget(flag string, read func(string) []byte) (int64, error) {
	if flag != "" {
		n, err := membudget.ParseSize(flag)
		if err != nil {
			return 0, usageError{fmt.Errorf("--review-memory: %w", err)}
		}
		return n, nil
	}
	return membudget.Default(read(cgroupMemoryMax(read("/proc/self/cgroup"))), read("/proc/meminfo"))
}

// cgroupMemoryMax is the path of the memory.max of the process's cgroup
// (v2) from /proc/self/cgroup: under a systemd unit with MemoryMax= the
// cgroup is a subdirectory; in a container, the root.
func cgroupMemoryMax(procSelfCgroup []byte) string {
	for line := range strings.Lines(string(procSelfCgroup)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok && strings.HasPrefix(p, "/") && !strings.Contains(p, "..") {
			return path.Join("/sys/fs/cgroup", p, "memory.max")
		}
	}
	return "/sys/fs/cgroup/memory.max"
}

// memoryBudget is the budget of n bytes, or none when n is 0 (unknown).
func memoryBudget(n int64) *membudget.Budget {
	if n == 0 {
		return nil
	}
	return membudget.New(n)
}

// readOrNil returns the file's contents, or nil when it cannot be read.
func readOrNil(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

// Roles a serve process can take.
const (
	roleAll    = "all"
	roleAPI    = "api"
	roleWorker = "worker"
)

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("serve", "quorum serve [flags]",
		"Runs the API server and the job workers. On first start it creates the database\n(SQLite under --data-dir unless --database-url names a PostgreSQL) and migrates it.\nStops gracefully on SIGINT or SIGTERM.\n\nThe Go modules a review needs are fetched through --go-proxy into a module cache\nof the service's own (under its cache directory), pruned past --go-modcache-max-bytes;\nsee the --go-* flags and docs/go-analysis.md.")
	db := addDBFlags(c, getenv)
	addr := c.String("addr", "QUORUM_ADDR", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	publicURL := c.String("public-url", "QUORUM_PUBLIC_URL", "", "URL at which clients reach this server (default http://<addr>)")
	docsURL := c.String("docs-url", "QUORUM_DOCS_URL", "", "base URL of the documentation that problem types link to (default <public-url>/docs)")
	role := c.String("role", "QUORUM_ROLE", roleAll, "what this process runs: all, api (HTTP only) or worker (jobs only); split roles need PostgreSQL")
	rateLimit := c.Int("rate-limit", "QUORUM_RATE_LIMIT", 5000, "API requests allowed per token (or per client address without one) in each window")
	rateWindow := c.Duration("rate-limit-window", "QUORUM_RATE_LIMIT_WINDOW", time.Hour, "length of the API rate-limit window")
	trustProxy := c.Bool("trust-proxy", "QUORUM_TRUST_PROXY", false, "take the client address from X-Forwarded-For (only behind a proxy that sets it)")
	ghFlags := addGitHubFlags(c)
	gtFlags := addGiteaFlags(c)
	workers := c.Int("workers", "QUORUM_WORKERS", 50, "jobs (webhook deliveries, maintenance) worked at once by this process; reviews have --review-workers")
	webhookConcurrency := c.Int("webhook-concurrency", "QUORUM_WEBHOOK_CONCURRENCY", 0, "delivery attempts in flight to one endpoint in this process (default three quarters of --workers, so a slow endpoint leaves the rest to the others)")
	logLevel := c.String("log-level", "QUORUM_LOG_LEVEL", "info", "log level: debug, info, warn or error (logs are JSON on stderr)")
	maxReviews := c.Int("max-reviews", "QUORUM_MAX_REVIEWS", pipeline.DefaultMaxReviews, "reviews an account may have per review rate-limit window; over it a review is skipped with review.failed rate_limit")
	reviewWindow := c.Duration("review-window", "QUORUM_REVIEW_WINDOW", pipeline.DefaultRateWindow, "length of the review rate-limit window (windows are aligned to the Unix epoch: 1h windows start on the hour, UTC)")
	reviewWorkers := c.Int("review-workers", "QUORUM_REVIEW_WORKERS", 2, "reviews this process runs at once, at most (each takes from a few hundred MB to a few GB while it analyses a change; --review-memory bounds their sum)")
	reviewMemory := c.String("review-memory", "QUORUM_REVIEW_MEMORY", "", "memory the reviews running at once may take together, e.g. 4GiB: each reserves an estimate from the Go source it type-checks before it starts, and waits while the others hold the rest; one review always runs (default three quarters of the cgroup's memory.max, or of MemTotal; none where neither can be read); also the Go runtime's soft memory limit, plus 256MiB, unless GOMEMLIMIT is set")
	specialistTimeout := c.Duration("specialist-timeout", "QUORUM_SPECIALIST_TIMEOUT", pipeline.DefaultTimeout, "time limit of each specialist in a review")
	webhookAllowPrivate := c.Bool("webhook-allow-private", "QUORUM_WEBHOOK_ALLOW_PRIVATE", false, "let webhook deliveries reach loopback, private, link-local and other non-public addresses (development and tests only)")
	webhookMaxEndpoints := c.Int("webhook-max-endpoints", "QUORUM_WEBHOOK_MAX_ENDPOINTS", webhook.DefaultMaxEndpoints, "webhook endpoints an account may register through the API (each event is sent to every one)")
	webhookTimeout := c.Duration("webhook-timeout", "QUORUM_WEBHOOK_TIMEOUT", webhook.DefaultTimeout, "time limit of each webhook delivery attempt")
	jobRescueAfter := c.Duration("job-rescue-after", "QUORUM_JOB_RESCUE_AFTER", 0, "how long a job may stay running before it is presumed lost with a crashed process and retried (default: the longest time limit of the jobs this process works plus 1m, e.g. 6m with the other defaults, as a review's limit is 2×--specialist-timeout + 1m; no job is rescued before its own limit has passed)")
	shutdownTimeout := c.Duration("shutdown-timeout", "QUORUM_SHUTDOWN_TIMEOUT", 20*time.Second, "how long to wait for requests and jobs in flight when stopping")
	analyzersDir := addAnalyzersDirFlag(c)
	gf := addGoFlags(c, ownModCacheHelp)
	metricsAddr := c.String("metrics-addr", "QUORUM_METRICS_ADDR", "", "serve GET /metrics (Prometheus) on this address (host:port) instead of on --addr; \"off\": nowhere")
	metricsToken := c.String("metrics-token", "QUORUM_METRICS_TOKEN", "", "when set, a scrape of /metrics must send Authorization: Bearer <this token> (prefer the environment variable)")
	lf := addLLMFlags(c)
	dashboardOn := c.Bool("dashboard", "QUORUM_DASHBOARD", true, "serve the web dashboard at /dashboard/ on --addr (sign-in with a personal access token; see docs/dashboard.md)")
	sessionTTL := c.Duration("dashboard-session-ttl", "QUORUM_DASHBOARD_SESSION_TTL", dashboard.DefaultSessionTTL, "how long a dashboard sign-in lasts (it also ends when its token expires or is revoked, or on sign-out)")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	llmSet, err := lf.settings(getenv)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	switch *role {
	case roleAll, roleAPI, roleWorker:
	default:
		return usageError{fmt.Errorf("--role: want all, api or worker, got %q", *role)}
	}
	if *role != roleAll && *db.url == "" {
		return usageError{fmt.Errorf("--role %s needs --database-url: SQLite serves one process, which runs everything", *role)}
	}
	if *rateLimit < 1 || *rateWindow <= 0 {
		return usageError{errors.New("--rate-limit and --rate-limit-window must be positive")}
	}
	if *webhookTimeout <= 0 || *webhookMaxEndpoints < 1 {
		return usageError{errors.New("--webhook-timeout and --webhook-max-endpoints must be positive")}
	}
	if *sessionTTL < time.Minute {
		return usageError{fmt.Errorf("--dashboard-session-ttl must be at least 1m (got %s): a shorter sign-in ends before its first page", *sessionTTL)}
	}
	if *jobRescueAfter < 0 {
		return usageError{errors.New("--job-rescue-after cannot be negative")}
	}
	if *workers < 1 || *webhookConcurrency < 0 {
		return usageError{errors.New("--workers must be positive and --webhook-concurrency 0 or more")}
	}
	if *maxReviews < 1 || *reviewWindow <= 0 || *specialistTimeout <= 0 || *reviewWorkers < 1 {
		return usageError{errors.New("--max-reviews, --review-window, --specialist-timeout and --review-workers must be positive")}
	}
	budget, err := reviewBudget(*reviewMemory, readOrNil)
	if errors.As(err, new(usageError)) {
		return err
	}
	if err != nil {
		// Not Linux, or no /proc: reviews are bounded by count only.
		log.Warn("reviews are not bounded by memory", "error", err.Error())
	}
	// The service fetches into a module cache of its own, under its
	// cache directory, and reads no other.
	goCfg, err := gf.config(ownModCache(getenv), "")
	if err != nil {
		return err
	}

	d, err := db.open(ctx, log)
	if err != nil {
		return err
	}
	defer d.Close()
	now := time.Now
	tokens := token.NewStore(d, now)
	m := metrics.New()
	m.Register(metrics.Jobs(jobKinds, func(ctx context.Context) ([]metrics.JobCount, error) { return jobCounts(ctx, d) }))
	gh, err := ghFlags.build(getenv, db, d, log, now, m)
	if err != nil {
		return err
	}
	gt, err := gtFlags.build(ctx, getenv, db, d, log, now, m)
	if err != nil {
		return err
	}
	hosts := platforms{gh, gt}

	// Jobs: every process can insert; workers run where the role says.
	work := *role != roleAPI
	rw := river.NewWorkers()
	river.AddWorker(rw, &store.OptimizeWorker{DB: d})
	hosts.register(rw)
	// Every role inserts deliveries (events, pings, redeliveries).
	perEndpoint := *webhookConcurrency
	if perEndpoint == 0 {
		perEndpoint = max(1, *workers*3/4)
	}
	river.AddWorker(rw, &webhook.Worker{
		DB:             d,
		Version:        buildVersion(),
		AllowPrivate:   *webhookAllowPrivate,
		AttemptTimeout: *webhookTimeout,
		PerEndpoint:    perEndpoint,
		Log:            log.With("component", "webhook"),
		Observe:        m.WebhookAttempt,
	})
	if work {
		// The built-in specialists are made once (the secret rules take a
		// moment to compile) and shared by every review.
		others := polyglot.New(ctx, polyglot.Config{Dir: *analyzersDir})
		logAnalyzers(log.With("component", "review"), others.Found())
		loader := goanalysis.NewLoader(goCfg)
		// serve returns only once the preparing has stopped, on every
		// path out (its own context ends it): it makes the go command's
		// cache directories, and a serve that returned while it ran left
		// it writing to them (a test's temporary home was then not empty
		// as it was removed).
		pctx, stopPreparing := context.WithCancel(ctx)
		prepared := make(chan struct{})
		defer func() { stopPreparing(); <-prepared }()
		go func() {
			defer close(prepared)
			// The module fetch's bridge is built before the first review
			// needs it.
			if err := loader.Prepare(pctx); err != nil && pctx.Err() == nil {
				log.Warn("the Go module fetch could not be prepared; reviews will say why they fetch nothing", "error", err)
			}
		}()
		all, _, err := builtin.New(repoconfig.KnownSpecialists, loader, others)
		if err != nil {
			return err
		}
		enabled := enabledOf(all)
		specialists := func(cfg repoconfig.Config, _ pipeline.ReviewArgs) []specialist.Specialist { return enabled(cfg) }
		if llmSet != nil {
			specialists = llmSet.serveSpecialists(enabled, llmcache.New(d, nil), log.With("component", "llm"))
		}
		river.AddWorker(rw, &pipeline.Worker{
			DB:                d,
			Sources:           hosts.sources(map[string]func(string) change.Source{"local": func(dir string) change.Source { return change.NewLocal(dir) }}),
			Publishers:        hosts.publishers(),
			Specialists:       specialists,
			SpecialistTimeout: *specialistTimeout,
			Limits:            pipeline.RateLimit{Window: *reviewWindow, MaxReviews: *maxReviews},
			Log:               log.With("component", "review"),
			Observe:           func(res pipeline.Result, took time.Duration) { observeReview(m, res, took) },
			Memory:            memoryBudget(budget),
		})
		if budget > 0 {
			if getenv("GOMEMLIMIT") == "" {
				// The collector works harder as the heap nears the budget,
				// rather than let the reviews' garbage take the machine.
				debug.SetMemoryLimit(budget + softLimitHeadroom)
			}
			log.Info("review memory budget", "budget", membudget.FormatSize(budget), "review_workers", *reviewWorkers)
		}
	}
	rescueAfter := *jobRescueAfter
	if rescueAfter == 0 {
		rescueAfter = safeRescueAfter(jobLimits(*specialistTimeout, *webhookTimeout, hosts...)...)
	}
	jobs, err := d.ConfigureJobs(store.JobsConfig{
		Workers:      rw,
		Work:         work,
		MaxWorkers:   *workers,
		Queues:       hosts.queues(map[string]int{pipeline.Queue: *reviewWorkers}),
		PeriodicJobs: hosts.periodic([]*river.PeriodicJob{store.OptimizeEvery()}),
		Logger:       log.With("component", "jobs"),

		RescueStuckJobsAfter: rescueAfter,
		Hooks:                []rivertype.Hook{m.JobHook(jobKinds)},
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	base := *publicURL
	if base == "" {
		base = "http://" + displayAddr(ln.Addr())
	}
	base = strings.TrimSuffix(base, "/")
	docs := strings.TrimSuffix(*docsURL, "/")
	if docs == "" {
		docs = base + "/docs"
	}
	var dash http.Handler
	if *dashboardOn && *role != roleWorker {
		dash, err = dashboard.New(dashboard.Config{
			SecureCookies:       strings.HasPrefix(base, "https://"),
			SessionTTL:          *sessionTTL,
			DocsURL:             docs,
			Version:             buildVersion(),
			PlatformURLs:        platformWebURLs(*ghFlags.apiURL, *gtFlags.url),
			WebhookPolicy:       webhook.Policy{AllowPrivate: *webhookAllowPrivate},
			WebhookMaxEndpoints: *webhookMaxEndpoints,
		}, d, tokens, log, now)
		if err != nil {
			ln.Close()
			return err
		}
	}
	apiServer, err := api.New(ctx, api.Config{
		DocsURL:    docs,
		RateLimit:  *rateLimit,
		RateWindow: *rateWindow,
		TrustProxy: *trustProxy,
		Version:    buildVersion(),

		WebhookAllowPrivate: *webhookAllowPrivate,
		WebhookMaxEndpoints: *webhookMaxEndpoints,
		Dashboard:           dash,
	}, d, tokens, log, now)
	if err != nil {
		ln.Close()
		return err
	}
	var handler http.Handler = hosts.mount(apiServer, docs)
	if *role == roleWorker {
		handler = probesOnly(apiServer)
	}
	metricsHandler := m.Handler(*metricsToken)
	var metricsSrv *http.Server
	var metricsLn net.Listener
	switch *metricsAddr {
	case "":
		// On the API's listener, beside the API (outside its tokens and
		// rate limit).
		top := http.NewServeMux()
		top.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			metrics.SetRoute(r, "/metrics")
			metricsHandler.ServeHTTP(w, r)
		}))
		top.Handle("/", handler)
		handler = top
	case "off":
	default:
		if metricsLn, err = net.Listen("tcp", *metricsAddr); err != nil {
			ln.Close()
			return fmt.Errorf("listen on --metrics-addr %s: %w", *metricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metricsHandler)
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
			ErrorLog: slog.NewLogLogger(log.With("component", "metrics").Handler(), slog.LevelWarn)}
	}
	handler = m.Instrument(handler)
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		// The API answers headers past api.MaxHeaderBytes with a problem
		// document; only past this does Go's server answer (plain text).
		MaxHeaderBytes: api.ServerMaxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelWarn),
	}

	// Start in order; stop in reverse.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); tokens.RunFlusher(bg, token.FlushInterval) }()
	if err := jobs.Start(bg); err != nil {
		stopBG()
		ln.Close()
		if metricsLn != nil {
			metricsLn.Close()
		}
		return fmt.Errorf("start jobs: %w", err)
	}
	serveErr := make(chan error, 2)
	go func() { serveErr <- srv.Serve(ln) }()
	if metricsSrv != nil {
		go func() {
			if err := metricsSrv.Serve(metricsLn); !errors.Is(err, http.ErrServerClosed) {
				serveErr <- fmt.Errorf("metrics: %w", err)
			}
		}()
		log.Info("metrics serving", "addr", metricsLn.Addr().String())
		fmt.Fprintf(stdout, "quorum metrics on http://%s/metrics\n", displayAddr(metricsLn.Addr()))
	}
	log.Info("quorum serving", "addr", ln.Addr().String(), "public_url", base, "role", *role,
		"database", db.describe(), "version", buildVersion(), "job_rescue_after", rescueAfter.String())
	fmt.Fprintf(stdout, "quorum serving on %s (%s)\n", base, db.describe())

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("http server: %w", err)
	}
	log.Info("quorum stopping")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), *shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", "error", err.Error())
	}
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(sctx)
	}
	if err := jobs.Stop(sctx); err != nil {
		log.Warn("jobs shutdown", "error", err.Error())
	}
	stopBG()
	wg.Wait()
	log.Info("quorum stopped")
	return runErr
}

// rescueMargin is how long a job may go on past its time limit (its
// context is cancelled then; it still records how it ended) before River's
// rescuer presumes it lost with a crashed process.
const rescueMargin = time.Minute

// jobLimits returns the time limits of the job kinds serve registers, as
// their workers compute them from the flags: reviews, webhook attempts,
// the GitHub App's posts, and River's default for kinds without their own
// (GitHub intake, maintenance).
func jobLimits(specialistTimeout, webhookTimeout time.Duration, hosts ...*platform) []time.Duration {
	limits := []time.Duration{
		river.JobTimeoutDefault,
		(&pipeline.Worker{SpecialistTimeout: specialistTimeout}).Timeout(nil),
		(&webhook.Worker{AttemptTimeout: webhookTimeout}).Timeout(nil),
	}
	return append(limits, platforms(hosts).jobLimits()...)
}

// safeRescueAfter is --job-rescue-after's default: the longest of limits
// plus rescueMargin, so that a job that may still be running (within its
// limit, or just past it, recording its outcome) is not rescued and run a
// second time, while one lost with a crashed process is resumed within
// minutes rather than River's hour. It is never below River's default job
// timeout, under which River refuses a rescue time. (River's rescuer also
// waits for a kind's own limit, which keeps a kind whose limit grew past
// this value safe, only without the margin.)
func safeRescueAfter(limits ...time.Duration) time.Duration {
	longest := river.JobTimeoutDefault
	for _, l := range limits {
		longest = max(longest, l)
	}
	return longest + rescueMargin
}

// enabledOf picks, from all specialists, those a repository's
// configuration enables.
func enabledOf(all []specialist.Specialist) func(repoconfig.Config) []specialist.Specialist {
	return func(cfg repoconfig.Config) []specialist.Specialist {
		var out []specialist.Specialist
		for _, s := range all {
			if cfg.Enabled(s.Name()) {
				out = append(out, s)
			}
		}
		return out
	}
}

// displayAddr turns a listener address into one a client can dial.
func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		if ok {
			return fmt.Sprintf("localhost:%d", tcp.Port)
		}
		return a.String()
	}
	return tcp.String()
}

// probesOnly serves a worker process's health probes and nothing else.
func probesOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			h.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})
}

// platformWebURLs is where the dashboard links pull requests: github.com,
// or the GitHub Enterprise Server whose API --github-api-url names, and
// the Gitea of --gitea-url.
func platformWebURLs(githubAPI, giteaURL string) map[string]string {
	gh := "https://github.com"
	if githubAPI != "" {
		if u, err := url.Parse(githubAPI); err == nil && u.Host != "" && u.Host != "api.github.com" {
			gh = u.Scheme + "://" + u.Host
		}
	}
	urls := map[string]string{account.PlatformGitHub: gh}
	if giteaURL != "" {
		urls[account.PlatformGitea] = strings.TrimSuffix(giteaURL, "/")
	}
	return urls
}
