package api

import (
	"sync"
	"time"
)

// limiter is a fixed-window counter per key (a token or a client address),
// the scheme GitHub's API uses: a number of requests per window, reset all
// at once, which the RateLimit headers describe exactly. It is per process;
// several replicas each allow the limit (see docs/configuration.md).
type limiter struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu      sync.Mutex
	windows map[string]*window
	swept   time.Time
}

type window struct {
	start time.Time
	used  int
}

// decision is the outcome of one request against the limit.
type decision struct {
	allowed      bool
	limit        int
	remaining    int
	resetSeconds int
}

func newLimiter(limit int, win time.Duration, now func() time.Time) *limiter {
	return &limiter{limit: limit, window: win, now: now, windows: map[string]*window{}}
}

// take counts one request for key.
func (l *limiter) take(key string) decision {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > l.window {
		// Forget windows that ended, so idle keys do not pile up.
		for k, w := range l.windows {
			if now.Sub(w.start) >= l.window {
				delete(l.windows, k)
			}
		}
		l.swept = now
	}
	w := l.windows[key]
	if w == nil || now.Sub(w.start) >= l.window {
		w = &window{start: now}
		l.windows[key] = w
	}
	reset := w.start.Add(l.window).Sub(now)
	d := decision{limit: l.limit, resetSeconds: int((reset + time.Second - 1) / time.Second)}
	if w.used >= l.limit {
		return d
	}
	w.used++
	d.allowed = true
	d.remaining = l.limit - w.used
	return d
}
