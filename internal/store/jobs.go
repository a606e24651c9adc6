package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
)

// Jobs is River's client over this database. Jobs are inserted through a Tx
// so they commit with the write that causes them; Start runs the workers.
type Jobs struct {
	sqlite *river.Client[*sql.Tx]
	pg     *river.Client[pgx.Tx]
	work   bool
}

// JobsConfig configures the job queue.
type JobsConfig struct {
	// Hooks are River hooks run around every job (the metrics').
	Hooks []rivertype.Hook
	// Workers holds every job kind's worker. Required when Work is set.
	Workers *river.Workers
	// Work runs workers in this process; false makes an insert-only client
	// (the api role).
	Work bool
	// MaxWorkers bounds the default queue's concurrency (default 10).
	MaxWorkers int
	// Queues are further queues and their concurrency, for kinds of job
	// that must not run many at once (reviews take hundreds of MB each).
	Queues map[string]int
	// PeriodicJobs are scheduled by the elected leader.
	PeriodicJobs []*river.PeriodicJob
	// Logger receives River's own logs and quorum's line for each failed
	// attempt: WARN when it will be retried, ERROR when the job gives up.
	Logger *slog.Logger
	// PollInterval is how often the default queue's workers look for jobs
	// when not notified: SQLite has no LISTEN/NOTIFY, so there it is how
	// long a new job may wait (default 50 ms; on PostgreSQL 1 s).
	PollInterval time.Duration
	// QueuePollInterval is the same for the Queues (default 1 s): their
	// jobs (reviews, webhook intake) are fewer and longer.
	QueuePollInterval time.Duration
	// FetchCooldown is the least time between two fetches of jobs by one
	// queue: one fetch takes at most the free workers, so a queue of N
	// workers starts at most N jobs per cooldown (default 5 ms).
	FetchCooldown time.Duration
	// RescueStuckJobsAfter is how long a job may stay running before it is
	// presumed lost with a crashed process and retried (River's default,
	// 1 h, when 0). A kind's own Timeout still applies: such a job is
	// rescued only once both have passed. Below River's default job
	// timeout (1 min) it becomes the timeout of kinds without their own,
	// as River requires.
	RescueStuckJobsAfter time.Duration
}

// Fetch defaults. Each fetch on SQLite is a write (it marks the jobs
// running), but one that finds nothing changes no page.
const (
	defaultSQLitePoll    = 50 * time.Millisecond
	defaultFetchCooldown = 5 * time.Millisecond
)

// ConfigureJobs creates the River client that works jobs (or, with Work
// false, an insert-only one that checks kinds against Workers). Call it
// once, before transactions that insert jobs. Without it, transactions
// insert through an insert-only client of River's defaults, which suits a
// command that saves and leaves the work to the server.
func (db *DB) ConfigureJobs(cfg JobsConfig) (*Jobs, error) {
	db.jobsMu.Lock()
	defer db.jobsMu.Unlock()
	if db.configured {
		return nil, errors.New("configure jobs: already configured")
	}
	j, err := db.newJobs(cfg)
	if err != nil {
		return nil, err
	}
	db.jobs, db.configured = j, true
	return j, nil
}

// inserter returns the client transactions insert jobs through, making an
// insert-only one when ConfigureJobs was not called.
func (db *DB) inserter() (*Jobs, error) {
	db.jobsMu.Lock()
	defer db.jobsMu.Unlock()
	if db.jobs == nil {
		j, err := db.newJobs(JobsConfig{})
		if err != nil {
			return nil, fmt.Errorf("insert job: %w", err)
		}
		db.jobs = j
	}
	return db.jobs, nil
}

func (db *DB) newJobs(cfg JobsConfig) (*Jobs, error) {
	rcfg := &river.Config{
		Logger:       cfg.Logger,
		PeriodicJobs: cfg.PeriodicJobs,
		Hooks:        cfg.Hooks,
	}
	if cfg.RescueStuckJobsAfter < 0 {
		return nil, errors.New("configure jobs: RescueStuckJobsAfter cannot be negative")
	}
	if cfg.RescueStuckJobsAfter > 0 {
		rcfg.RescueStuckJobsAfter = cfg.RescueStuckJobsAfter
		if cfg.RescueStuckJobsAfter < river.JobTimeoutDefault {
			rcfg.JobTimeout = cfg.RescueStuckJobsAfter
		}
	}
	if cfg.Logger == nil {
		rcfg.Logger = slog.New(slog.DiscardHandler)
	}
	rcfg.Middleware = []rivertype.Middleware{&jobGuard{log: rcfg.Logger}}
	if cfg.Work {
		if cfg.Workers == nil {
			return nil, errors.New("configure jobs: workers required to work jobs")
		}
		maxWorkers := cfg.MaxWorkers
		if maxWorkers <= 0 {
			maxWorkers = 10
		}
		rcfg.Workers = cfg.Workers
		rcfg.FetchCooldown = cmp.Or(cfg.FetchCooldown, defaultFetchCooldown)
		rcfg.FetchPollInterval = cfg.PollInterval
		if rcfg.FetchPollInterval == 0 {
			rcfg.FetchPollInterval = time.Second
			if db.pool == nil {
				rcfg.FetchPollInterval = defaultSQLitePoll
			}
		}
		if rcfg.FetchPollInterval < rcfg.FetchCooldown {
			return nil, errors.New("configure jobs: PollInterval cannot be shorter than FetchCooldown")
		}
		queuePoll := cmp.Or(cfg.QueuePollInterval, time.Second)
		if len(cfg.Queues) > 0 && queuePoll < rcfg.FetchCooldown {
			return nil, errors.New("configure jobs: QueuePollInterval cannot be shorter than FetchCooldown")
		}
		rcfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}}
		for name, n := range cfg.Queues {
			if n <= 0 {
				return nil, fmt.Errorf("configure jobs: queue %s needs at least one worker", name)
			}
			rcfg.Queues[name] = river.QueueConfig{MaxWorkers: n, FetchPollInterval: queuePoll}
		}
	} else {
		rcfg.PeriodicJobs = nil
		// An insert-only client still checks kinds against Workers when given.
		rcfg.Workers = cfg.Workers
	}
	j := &Jobs{work: cfg.Work}
	var err error
	if db.pool != nil {
		j.pg, err = river.NewClient(riverpgxv5.New(db.pool), rcfg)
	} else {
		if cfg.Work {
			// SQLite has no LISTEN/NOTIFY: poll.
			rcfg.PollOnly = true
		}
		j.sqlite, err = river.NewClient(riversqlite.New(db.write), rcfg)
	}
	if err != nil {
		return nil, fmt.Errorf("configure jobs: %w", err)
	}
	return j, nil
}

// Start runs the workers until Stop. A no-op for insert-only clients.
func (j *Jobs) Start(ctx context.Context) error {
	if !j.work {
		return nil
	}
	if j.pg != nil {
		return j.pg.Start(ctx)
	}
	return j.sqlite.Start(ctx)
}

// Stop waits for running jobs to finish, up to ctx's deadline.
func (j *Jobs) Stop(ctx context.Context) error {
	if !j.work {
		return nil
	}
	if j.pg != nil {
		return j.pg.Stop(ctx)
	}
	return j.sqlite.Stop(ctx)
}

// Subscribe reports job events of the given kinds, for tests and progress.
func (j *Jobs) Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func()) {
	if j.pg != nil {
		return j.pg.Subscribe(kinds...)
	}
	return j.sqlite.Subscribe(kinds...)
}
