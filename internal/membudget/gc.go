package membudget

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A review allocates fast over a large live heap (the types, syntax and
// IR of the packages it analyses), and Go's collector, at its default
// GOGC of 100, lets the heap grow to twice what the last collection
// found live: a review's peak is twice its largest live heap. A lower
// GOGC lowers the peak but makes every collection of the review more
// frequent, when the heap is small too.
//
// The review process is paced instead (PaceGC): GOGC stays at 100, under a
// soft memory limit of Floor, or of Headroom times the largest live heap
// seen so far when that is more. Below Floor/2 live, the collector runs as
// it always does; near the largest live heap, the heap may grow by six
// tenths of it before a collection. A review of a change to caddy then peaks under
// 500 MB, one to nats-server under 1 GB (docs/performance.md, "A large
// repository").
const (
	Floor    = 384 << 20
	Headroom = 1.6
)

// PaceGC paces the collector of a process that runs one review, as above,
// unless the environment sets GOGC or GOMEMLIMIT, which are the user's
// to choose. It returns whether it does. A server bounds its reviews'
// memory with its budget instead (serve --review-memory).
func PaceGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return false
	}
	startPacer(Floor, Headroom)
	return true
}

// pacer raises the soft memory limit with the largest live heap, after
// each collection (a finalizer runs once per collection that finds its
// object unreachable).
type pacer struct {
	floor    int64
	headroom float64

	mu      sync.Mutex
	sample  []metrics.Sample
	maxLive uint64
	stopped bool
	// seen counts the collections followed.
	seen int
}

func startPacer(floor int64, headroom float64) *pacer {
	p := &pacer{floor: floor, headroom: headroom, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	debug.SetMemoryLimit(floor)
	p.arm()
	return p
}

// collections returns how many collections the pacer has followed.
func (p *pacer) collections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen
}

// stop ends the pacing; the limit stays as it is.
func (p *pacer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
}

// sentinel is the object whose finalizer follows the collections: large
// enough not to be allocated in a tiny block, where it could live on.
type sentinel struct{ _ [32]byte }

func (p *pacer) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if p.collected() {
			p.arm()
		}
	})
}

// collected sets the limit from the live heap the last collection found;
// false once stopped.
func (p *pacer) collected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.seen++
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	if live := p.sample[0].Value.Uint64(); live > p.maxLive {
		p.maxLive = live
		debug.SetMemoryLimit(max(p.floor, int64(p.headroom*float64(live))))
	}
	return true
}
