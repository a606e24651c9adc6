package change

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FetchCache is a directory of bare repositories that pull requests'
// commits are fetched into (<dir>/<owner>/<name>.git, or however a source
// names them two levels down), shared by a source's reviews: fetches into
// one repository take turns, and a repository unused for Idle is removed,
// looked for at most once per SweepEvery.
type FetchCache struct {
	Dir        string
	Idle       time.Duration
	SweepEvery time.Duration
	Log        *slog.Logger
	Now        func() time.Time

	fetching sync.Map // directory → *sync.Mutex
	mu       sync.Mutex
	swept    time.Time
}

// Defaults of FetchCache.
const (
	DefaultCacheIdle  = 7 * 24 * time.Hour
	DefaultCacheSweep = time.Hour
)

// Use locks the repository directory dir (under Dir) for a fetch, first
// sweeping the cache when a sweep is due (never dir itself), and returns
// the unlock, which also marks dir as used now.
func (c *FetchCache) Use(dir string) (done func()) {
	mu, _ := c.fetching.LoadOrStore(dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	c.sweep(dir)
	return func() {
		// The directory's time says when it was last used.
		now := c.now()
		_ = os.Chtimes(dir, now, now)
		mu.(*sync.Mutex).Unlock()
	}
}

func (c *FetchCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// sweep removes the repositories unused for Idle, but keep, at most once
// per SweepEvery; one being fetched into is left for the next sweep.
func (c *FetchCache) sweep(keep string) {
	now := c.now()
	idle, every := c.Idle, c.SweepEvery
	if idle <= 0 {
		idle = DefaultCacheIdle
	}
	if every <= 0 {
		every = DefaultCacheSweep
	}
	c.mu.Lock()
	due := now.Sub(c.swept) >= every
	if due {
		c.swept = now
	}
	c.mu.Unlock()
	if !due {
		return
	}
	repos, _ := filepath.Glob(filepath.Join(c.Dir, "*", "*.git"))
	for _, dir := range repos {
		fi, err := os.Stat(dir)
		if err != nil || dir == keep || now.Sub(fi.ModTime()) < idle {
			continue
		}
		mu, _ := c.fetching.LoadOrStore(dir, &sync.Mutex{})
		if !mu.(*sync.Mutex).TryLock() {
			continue
		}
		if err := os.RemoveAll(dir); err != nil && c.Log != nil {
			c.Log.Warn("remove an unused fetched repository", "dir", dir, "error", err.Error())
		}
		mu.(*sync.Mutex).Unlock()
	}
}
