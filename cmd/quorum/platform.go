package main

import (
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/pipeline"
)

// platform is a code host serve reviews for (GitHub, Gitea): its jobs,
// its change source and publisher, its webhook route. A platform that is
// not configured is a nil pointer whose methods add nothing.
type platform interface {
	// jobLimits returns the time limits of its job kinds that have their
	// own (River's default covers the rest).
	jobLimits() []time.Duration
	register(rw *river.Workers)
	addSources(map[string]func(string) change.Source)
	addPublishers(map[string]pipeline.Publisher)
	addQueues(map[string]int)
	periodic([]*river.PeriodicJob) []*river.PeriodicJob
	// route serves its webhook on mux, reporting whether it did.
	route(mux *http.ServeMux, docsURL string) bool
}

// platforms are the configured platforms, together.
type platforms []platform

func (ps platforms) register(rw *river.Workers) {
	for _, p := range ps {
		p.register(rw)
	}
}

func (ps platforms) sources(sources map[string]func(string) change.Source) map[string]func(string) change.Source {
	for _, p := range ps {
		p.addSources(sources)
	}
	return sources
}

func (ps platforms) publishers() map[string]pipeline.Publisher {
	pubs := map[string]pipeline.Publisher{}
	for _, p := range ps {
		p.addPublishers(pubs)
	}
	return pubs
}

func (ps platforms) queues(queues map[string]int) map[string]int {
	for _, p := range ps {
		p.addQueues(queues)
	}
	return queues
}

func (ps platforms) periodic(jobs []*river.PeriodicJob) []*river.PeriodicJob {
	for _, p := range ps {
		jobs = p.periodic(jobs)
	}
	return jobs
}

func (ps platforms) jobLimits() []time.Duration {
	var limits []time.Duration
	for _, p := range ps {
		limits = append(limits, p.jobLimits()...)
	}
	return limits
}

// mount serves the platforms' webhooks in front of next (the API, which
// answers 404 on their paths when they are not configured); their problem
// types link to docsURL.
func (ps platforms) mount(next http.Handler, docsURL string) http.Handler {
	mux := http.NewServeMux()
	routed := false
	for _, p := range ps {
		routed = p.route(mux, docsURL) || routed
	}
	if !routed {
		return next
	}
	mux.Handle("/", next)
	return mux
}
