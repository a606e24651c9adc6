package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
