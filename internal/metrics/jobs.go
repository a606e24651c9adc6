package metrics

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// JobCount is how many jobs of a kind are in a state.
type JobCount struct {
	Kind, State string
	N           float64
}

// jobsCollector asks the queue, at each scrape, how many jobs of each kind
// are in each state.
type jobsCollector struct {
	kinds map[string]bool
	count func(ctx context.Context) ([]JobCount, error)
	desc  *prometheus.Desc
	errs  prometheus.Counter
}

// Jobs returns the collector of the job queue: quorum_jobs{kind,state},
// from count, which reads the queue's table at each scrape (within 5 s).
// The kinds are counted by name, any other as "other".
func Jobs(kinds []string, count func(ctx context.Context) ([]JobCount, error)) prometheus.Collector {
	known := map[string]bool{}
	for _, k := range kinds {
		known[k] = true
	}
	return &jobsCollector{
		kinds: known,
		count: count,
		desc: prometheus.NewDesc("quorum_jobs", "Jobs in the queue now, by kind and state (available, scheduled, running, retryable, completed, cancelled, discarded, pending); completed, cancelled and discarded jobs are kept for a day.",
			[]string{"kind", "state"}, nil),
		errs: prometheus.NewCounter(prometheus.CounterOpts{Name: "quorum_jobs_scrape_errors_total", Help: "Scrapes whose count of the job queue failed."}),
	}
}

func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	c.errs.Describe(ch)
}

func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		c.errs.Inc()
	}
	sum := map[[2]string]float64{}
	for _, jc := range counts {
		kind := jc.Kind
		if !c.kinds[kind] {
			kind = "other"
		}
		sum[[2]string{kind, jc.State}] += jc.N
	}
	for k, n := range sum {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, n, k[0], k[1])
	}
	c.errs.Collect(ch)
}

// rescuedError is what River's rescuer records on a job it presumes lost
// with a crashed process (river v0.49 internal/maintenance/job_rescuer.go).
const rescuedError = "Stuck job rescued by JobRescuer"

// jobHook counts job attempts by kind and outcome, and rescued jobs when
// they run again.
type jobHook struct {
	river.HookDefaults
	m     *Metrics
	kinds map[string]bool

	mu      sync.Mutex
	counted map[rescue]bool
}

// JobHook returns the River hook that counts job attempts
// (quorum_job_attempts_total) and rescued jobs (quorum_jobs_rescued_total),
// by kind.
func (m *Metrics) JobHook(kinds []string) rivertype.Hook {
	if m == nil {
		return nil
	}
	h := &jobHook{m: m, kinds: map[string]bool{}}
	for _, k := range kinds {
		h.kinds[k] = true
	}
	return h
}

func (h *jobHook) kind(k string) string {
	if h.kinds[k] {
		return k
	}
	return "other"
}

func (h *jobHook) WorkBegin(_ context.Context, job *rivertype.JobRow) error {
	n := len(job.Errors)
	if n == 0 || job.Errors[n-1].Error != rescuedError {
		return nil
	}
	// Once per rescue: a rescued job that then snoozes runs again with
	// the same last error.
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counted == nil || len(h.counted) > 10000 {
		h.counted = map[rescue]bool{}
	}
	key := rescue{job.ID, job.Errors[n-1].Attempt}
	if !h.counted[key] {
		h.counted[key] = true
		h.m.jobsRescued.WithLabelValues(h.kind(job.Kind)).Inc()
	}
	return nil
}

// rescue is one rescue of a job: its id and the attempt rescued.
type rescue struct {
	id      int64
	attempt int
}

func (h *jobHook) WorkEnd(_ context.Context, job *rivertype.JobRow, err error) error {
	outcome := "completed"
	var cancel *rivertype.JobCancelError
	var snooze *rivertype.JobSnoozeError
	switch {
	case err == nil:
	case errors.As(err, &cancel):
		outcome = "cancelled"
	case errors.As(err, &snooze):
		outcome = "snoozed"
	default:
		outcome = "failed"
	}
	h.m.jobAttempts.WithLabelValues(h.kind(job.Kind), outcome).Inc()
	return err
}
