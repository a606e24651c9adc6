// Package metrics is quorum's Prometheus instrumentation: one registry per
// serve process with the HTTP, review, job, webhook and GitHub metrics and
// Go's runtime and process collectors, served at /metrics.
//
// No label carries an unbounded value: routes are the API's patterns,
// events and languages come from fixed lists, and everything else is a
// status, an outcome or a reason from a closed set. Every metric is
// documented in docs/operations.md ("Metrics").
package metrics

import (
	"context"
	"crypto/subtle"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the collectors. Its methods are safe for concurrent use;
// a nil *Metrics records nothing, so components work without it.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	reviews            *prometheus.CounterVec
	reviewDuration     prometheus.Histogram
	specialistDuration *prometheus.HistogramVec
	findings           *prometheus.CounterVec
	files              *prometheus.CounterVec

	webhookAttempts  *prometheus.CounterVec
	webhookLatency   prometheus.Histogram
	webhookDisabled  prometheus.Counter
	webhookDeadLetts prometheus.Counter

	jobAttempts *prometheus.CounterVec
	jobsRescued *prometheus.CounterVec

	intake        *prometheus.CounterVec
	githubCalls   *prometheus.CounterVec
	giteaIntake   *prometheus.CounterVec
	giteaCalls    *prometheus.CounterVec
	githubRemains prometheus.Gauge
	remainMu      sync.Mutex
	remainLow     float64
	remainSince   time.Time
}

// New makes the registry and registers every collector.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	latency := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	reviewBuckets := []float64{.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}

	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_http_requests_total", Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "quorum_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route pattern and method.", Buckets: latency,
	}, []string{"route", "method"})

	m.reviews = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_reviews_total", Help: `Review jobs finished, by outcome (completed or failed) and reason (the review.failed reason; "" when completed).`,
	}, []string{"outcome", "reason"})
	m.reviewDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "quorum_review_duration_seconds", Help: "Time of a review job, from its start to its result saved.", Buckets: reviewBuckets,
	})
	m.specialistDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "quorum_specialist_duration_seconds", Help: "Time of one specialist in a review, by specialist and outcome (ok or failed).", Buckets: reviewBuckets,
	}, []string{"specialist", "outcome"})
	m.findings = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_findings_total", Help: "Findings in completed reviews, by specialist and severity.",
	}, []string{"specialist", "severity"})
	m.files = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_review_files_total", Help: `Changed source files of completed reviews, by language and whether an engine analysed them ("true" or "false").`,
	}, []string{"language", "analysed"})

	m.webhookAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_webhook_attempts_total", Help: "Webhook delivery attempts, by the delivery's status after the attempt (succeeded, failed: will retry, dead_lettered).",
	}, []string{"status"})
	m.webhookLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "quorum_webhook_attempt_duration_seconds", Help: "Time of one webhook delivery attempt, from the request sent to the answer read (or the error).", Buckets: latency,
	})
	m.webhookDeadLetts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quorum_webhook_dead_letters_total", Help: "Webhook deliveries dead-lettered by an attempt (attempts exhausted or 410 Gone).",
	})
	m.webhookDisabled = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quorum_webhook_endpoints_disabled_total", Help: "Webhook endpoints disabled because they answered 410 Gone.",
	})

	m.jobAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_job_attempts_total", Help: "Job attempts worked by this process, by kind and outcome (completed, failed: retried later, cancelled, snoozed).",
	}, []string{"kind", "outcome"})
	m.jobsRescued = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_jobs_rescued_total", Help: "Jobs this process worked again after the rescuer presumed them lost with a crashed process, by kind.",
	}, []string{"kind"})

	m.intake = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_github_intake_deliveries_total", Help: "GitHub App webhook deliveries received, by event and the status code answered.",
	}, []string{"event", "code"})
	m.githubCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_github_api_requests_total", Help: `Requests to GitHub's API, by status code ("error" when none came back).`,
	}, []string{"code"})
	m.giteaIntake = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_gitea_intake_deliveries_total", Help: "Gitea webhook deliveries received, by event (X-Gitea-Event) and the status code answered.",
	}, []string{"event", "code"})
	m.giteaCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quorum_gitea_api_requests_total", Help: `Requests to Gitea's API, by status code ("error" when none came back).`,
	}, []string{"code"})
	m.githubRemains = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "quorum_github_rate_limit_remaining", Help: "The lowest X-RateLimit-Remaining of GitHub's answers in the last 5 minutes (the App and each installation have their own limit: this is the one nearest exhaustion).",
	})

	for _, c := range []prometheus.Collector{m.httpRequests, m.httpDuration, m.reviews, m.reviewDuration, m.specialistDuration,
		m.findings, m.files, m.jobAttempts, m.jobsRescued, m.webhookAttempts, m.webhookLatency, m.webhookDeadLetts, m.webhookDisabled, m.intake, m.githubCalls, m.githubRemains,
		m.giteaIntake, m.giteaCalls} {
		f(c)
	}
	// The series the alerts watch exist from the start, at 0, so that
	// increase() sees their first increment.
	for _, reason := range []string{"internal_error", "quorum_failure", "rate_limit", "stale_head"} {
		m.reviews.WithLabelValues("failed", reason)
	}
	m.reviews.WithLabelValues("completed", "")
	for _, ev := range []string{"pull_request", "issue_comment", "installation"} {
		m.intake.WithLabelValues(ev, "401")
	}
	for _, ev := range giteaEvents[:3] {
		m.giteaIntake.WithLabelValues(ev, "401")
	}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Register adds a collector of another package (the job queue's).
func (m *Metrics) Register(c prometheus.Collector) {
	if m != nil {
		m.reg.MustRegister(c)
	}
}

// Handler serves the metrics in Prometheus' text format. With a token,
// a scrape must send Authorization: Bearer <token>.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="quorum metrics"`)
			http.Error(w, "metrics need Authorization: Bearer <the metrics token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// routeKey carries the route of a request, set by the handler that
// matched it.
type routeKey struct{}

type routeHolder struct {
	mu    sync.Mutex
	route string
}

// SetRoute records the route pattern that matched r (for the HTTP
// metrics); the middleware of Instrument reads it.
func SetRoute(r *http.Request, pattern string) {
	if h, ok := r.Context().Value(routeKey{}).(*routeHolder); ok {
		h.mu.Lock()
		h.route = pattern
		h.mu.Unlock()
	}
}

// statusWriter records the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// methods are the methods counted by name; others are "other".
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// Instrument counts and times the requests next answers. A request whose
// handler set no route (SetRoute) is counted under "unmatched".
func (m *Metrics) Instrument(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h := &routeHolder{}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			h.mu.Lock()
			route := h.route
			h.mu.Unlock()
			if route == "" {
				route = "unmatched"
			}
			method := r.Method
			if !slices.Contains(methods, method) {
				method = "other"
			}
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			m.httpRequests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
			m.httpDuration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), routeKey{}, h)))
	})
}

// Specialist is one specialist's part in a review.
type Specialist struct {
	Name   string
	Took   time.Duration
	Failed bool
}

// File is one changed source file of a review.
type File struct {
	Language string
	Analysed bool
}

// Review records a finished review job: its outcome, the failure reason
// ("" when completed), how long it took, its specialists, its findings'
// specialists and severities, and its changed source files.
func (m *Metrics) Review(completed bool, reason string, took time.Duration, specialists []Specialist, findings [][2]string, files []File) {
	if m == nil {
		return
	}
	outcome := "completed"
	if !completed {
		outcome = "failed"
	}
	m.reviews.WithLabelValues(outcome, reason).Inc()
	m.reviewDuration.Observe(took.Seconds())
	for _, s := range specialists {
		o := "ok"
		if s.Failed {
			o = "failed"
		}
		m.specialistDuration.WithLabelValues(s.Name, o).Observe(s.Took.Seconds())
	}
	for _, f := range findings {
		m.findings.WithLabelValues(f[0], f[1]).Inc()
	}
	for _, f := range files {
		m.files.WithLabelValues(f.Language, strconv.FormatBool(f.Analysed)).Inc()
	}
}

// WebhookAttempt records one delivery attempt: the delivery's status after
// it, how long it took, and whether its endpoint was disabled (410 Gone).
func (m *Metrics) WebhookAttempt(status string, took time.Duration, endpointDisabled bool) {
	if m == nil {
		return
	}
	m.webhookAttempts.WithLabelValues(status).Inc()
	m.webhookLatency.Observe(took.Seconds())
	if status == "dead_lettered" {
		m.webhookDeadLetts.Inc()
	}
	if endpointDisabled {
		m.webhookDisabled.Inc()
	}
}

// intakeEvents are the GitHub events counted by name; others are "other".
var intakeEvents = []string{"pull_request", "issue_comment", "installation", "installation_repositories", "ping",
	"check_run", "check_suite", "pull_request_review", "push", "github_app_authorization"}

// giteaEvents are the Gitea events counted by name; others are "other".
var giteaEvents = []string{"pull_request", "issue_comment", "push", "pull_request_comment", "pull_request_sync"}

// Intake counts the GitHub App's webhook deliveries next answers, by event
// (X-GitHub-Event) and status code.
func (m *Metrics) Intake(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return countDeliveries(next, m.intake, "X-GitHub-Event", intakeEvents)
}

// GiteaIntake counts Gitea's webhook deliveries next answers, by event
// (X-Gitea-Event) and status code.
func (m *Metrics) GiteaIntake(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return countDeliveries(next, m.giteaIntake, "X-Gitea-Event", giteaEvents)
}

// countDeliveries counts the deliveries next answers in c, by the event in
// header (one of known, else "other") and status code.
func countDeliveries(next http.Handler, c *prometheus.CounterVec, header string, known []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		event := strings.ToLower(r.Header.Get(header))
		if !slices.Contains(known, event) {
			event = "other"
		}
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		c.WithLabelValues(event, strconv.Itoa(code)).Inc()
	})
}

// GiteaTransport counts the requests to Gitea's API next makes, by status.
func (m *Metrics) GiteaTransport(next http.RoundTripper) http.RoundTripper {
	if m == nil {
		return next
	}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if err != nil {
			m.giteaCalls.WithLabelValues("error").Inc()
			return resp, err
		}
		m.giteaCalls.WithLabelValues(strconv.Itoa(resp.StatusCode)).Inc()
		return resp, nil
	})
}

// GitHubTransport counts the requests to GitHub's API next makes, by
// status, and keeps the rate limit's remaining requests.
func (m *Metrics) GitHubTransport(next http.RoundTripper) http.RoundTripper {
	if m == nil {
		return next
	}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if err != nil {
			m.githubCalls.WithLabelValues("error").Inc()
			return resp, err
		}
		m.githubCalls.WithLabelValues(strconv.Itoa(resp.StatusCode)).Inc()
		if v := resp.Header.Get("X-RateLimit-Remaining"); v != "" {
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				m.lowestRemaining(n, time.Now())
			}
		}
		return resp, nil
	})
}

// lowestRemaining keeps the lowest remaining count seen in the current
// 5-minute window.
func (m *Metrics) lowestRemaining(n float64, now time.Time) {
	m.remainMu.Lock()
	defer m.remainMu.Unlock()
	switch {
	case now.Sub(m.remainSince) > 5*time.Minute:
		m.remainSince = now // a new window starts with this answer
	case n >= m.remainLow:
		return
	}
	m.remainLow = n
	m.githubRemains.Set(n)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
