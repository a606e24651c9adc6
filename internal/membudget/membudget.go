// Package membudget bounds the memory that the reviews of one process take
// at once: each review reserves an estimate of its peak before its analysis
// starts, and waits while the reviews already running hold the rest of the
// budget.
//
// Decisions:
//   - A reservation is never more than the whole budget, so a review whose
//     estimate exceeds it still runs, alone.
//   - The estimate is made from what the review will type-check with full
//     bodies: the Go source of the changed packages and of the repository's
//     packages they import (Estimate). The dependencies outside the
//     repository are counted in the base, as they are loaded without bodies.
//   - The default budget is three quarters of the memory the process may
//     use: the cgroup's memory.max when one is set, else MemTotal.
package membudget

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Budget is a weighted semaphore counted in bytes.
type Budget struct {
	total int64
	sem   *semaphore.Weighted

	mu    sync.Mutex
	inUse int64
}

// New returns a budget of total bytes; total must be positive.
func New(total int64) *Budget {
	return &Budget{total: total, sem: semaphore.NewWeighted(total)}
}

// Total is the budget's size in bytes.
func (b *Budget) Total() int64 { return b.total }

// Reserved is what the reviews holding a reservation have reserved.
func (b *Budget) Reserved() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inUse
}

// Acquire reserves n bytes, at most the whole budget. When they are not
// free at once it calls waiting (if not nil) with what is reserved, then
// waits until they are or ctx ends. The release function returns them.
func (b *Budget) Acquire(ctx context.Context, n int64, waiting func(reserved int64)) (release func(), err error) {
	n = min(max(n, 1), b.total)
	if !b.sem.TryAcquire(n) {
		if waiting != nil {
			waiting(b.Reserved())
		}
		if err := b.sem.Acquire(ctx, n); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	b.inUse += n
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			b.inUse -= n
			b.mu.Unlock()
			b.sem.Release(n)
		})
	}, nil
}

// units are the size suffixes ParseSize knows, longest first.
var units = []struct {
	suffix string
	factor float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads a size such as 4GiB, 1.5GiB, 512MiB, 2GB or 1073741824
// (bytes). It must be positive.
func ParseSize(s string) (int64, error) {
	num, factor := strings.TrimSpace(s), 1.0
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, factor = strings.TrimSpace(n), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a size: want a number with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), e.g. 4GiB", s)
	}
	b := v * factor
	if b < 1 || b >= math.MaxInt64 {
		return 0, fmt.Errorf("%q: a size must be at least 1 byte and under 8 EiB", s)
	}
	return int64(b), nil
}

// FormatSize writes n in MiB or GiB, for logs and help.
func FormatSize(n int64) string {
	if n >= 1<<30 {
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + "GiB"
	}
	return strconv.FormatInt(n>>20, 10) + "MiB"
}

// Default returns the default budget from the cgroup's memory.max (its
// contents, nil when unreadable) and /proc/meminfo's: three quarters of the
// cgroup's limit when it has one, else of MemTotal.
func Default(cgroupMax, meminfo []byte) (int64, error) {
	if v := strings.TrimSpace(string(cgroupMax)); v != "" && v != "max" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil && n > 0 {
			return n / 4 * 3, nil
		}
	}
	for line := range strings.Lines(string(meminfo)) {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 && f[1] == "kB" {
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > 0 {
				return kb * 1024 / 4 * 3, nil
			}
		}
	}
	return 0, errors.New("neither the cgroup's memory.max nor /proc/meminfo's MemTotal says how much memory there is: set --review-memory")
}
