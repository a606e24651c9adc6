package main

import (
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/metrics"
	"github.com/quorum-review/quorum/internal/pipeline"
)

// platform is a code host serve reviews for (GitHub, Gitea), as serve
// runs it: what it adds to serve's workers, queues, sources, publishers
// and routes. nil is a platform that is not configured, and adds nothing.
type platform struct {
	// name is ReviewArgs.Source of its reviews.
	name      string
	changes   func(location string) change.Source
	publisher pipeline.Publisher
	// register adds its workers (intake, posting).
	register func(rw *river.Workers)
	// queue is its intake's, worked by one worker per process so that a
	// pull request's events are handled in order.
	queue string
	prune *river.PeriodicJob
	// path is where its webhooks come; intake serves them, with problem
	// types linking to docsURL; count counts them in the metrics.
	path   string
	intake func(docsURL string) http.Handler
	count  func(http.Handler) http.Handler
	// jobLimits are the time limits of its job kinds that have their own
	// (River's default covers the rest).
	jobLimits []time.Duration
}

// platforms are the platforms serve was given, configured or not.
type platforms []*platform

func (ps platforms) each(fn func(p *platform)) {
	for _, p := range ps {
		if p != nil {
			fn(p)
		}
	}
}

func (ps platforms) register(rw *river.Workers) {
	ps.each(func(p *platform) { p.register(rw) })
}

func (ps platforms) sources(sources map[string]func(string) change.Source) map[string]func(string) change.Source {
	ps.each(func(p *platform) { sources[p.name] = p.changes })
	return sources
}

func (ps platforms) publishers() map[string]pipeline.Publisher {
	pubs := map[string]pipeline.Publisher{}
	ps.each(func(p *platform) { pubs[p.name] = p.publisher })
	return pubs
}

func (ps platforms) queues(queues map[string]int) map[string]int {
	ps.each(func(p *platform) { queues[p.queue] = 1 })
	return queues
}

func (ps platforms) periodic(jobs []*river.PeriodicJob) []*river.PeriodicJob {
	ps.each(func(p *platform) { jobs = append(jobs, p.prune) })
	return jobs
}

func (ps platforms) jobLimits() []time.Duration {
	var limits []time.Duration
	ps.each(func(p *platform) { limits = append(limits, p.jobLimits...) })
	return limits
}

// mount serves the platforms' webhooks in front of next (the API, which
// answers 404 on their paths when they are not configured).
func (ps platforms) mount(next http.Handler, docsURL string) http.Handler {
	mux := http.NewServeMux()
	routed := false
	ps.each(func(p *platform) {
		in, path := p.intake(docsURL), p.path
		mux.Handle(path, p.count(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			metrics.SetRoute(r, path)
			in.ServeHTTP(w, r)
		})))
		routed = true
	})
	if !routed {
		return next
	}
	mux.Handle("/", next)
	return mux
}
