package membudget

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestPaceGC: the environment's GOGC or GOMEMLIMIT is left alone.
func TestPaceGCLeavesTheEnvironmentsChoice(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	for _, env := range []map[string]string{{"GOGC": "200"}, {"GOMEMLIMIT": "1GiB"}} {
		if PaceGC(func(k string) string { return env[k] }) {
			t.Errorf("%v: paced", env)
		}
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("%v: the memory limit was set to %d", env, got)
		}
	}
}

// TestPacerFollowsTheLiveHeap: the limit starts at the floor and, after
// collections, is headroom times the largest live heap found, once that
// is above the floor; it never comes down.
func TestPacerFollowsTheLiveHeap(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	const floor = 1 << 20
	p := startPacer(floor, 1.5)
	defer p.stop()
	if got := debug.SetMemoryLimit(-1); got != floor {
		t.Fatalf("limit at start %d, want the floor %d", got, floor)
	}
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	limitAfterGC := func() int64 {
		deadline := time.Now().Add(5 * time.Second)
		for {
			runtime.GC()
			if l := debug.SetMemoryLimit(-1); l >= 64<<20 || time.Now().After(deadline) {
				return l
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	got := limitAfterGC()
	if got < 1.5*64<<20 || got > 1.5*128<<20 {
		t.Errorf("with 64 MiB live, limit %d MiB; want about 1.5 times the live heap", got>>20)
	}
	runtime.KeepAlive(live)
	live = nil
	runtime.GC()
	runtime.GC()
	if l := debug.SetMemoryLimit(-1); l != got {
		t.Errorf("the live heap fell and the limit moved from %d to %d MiB", got>>20, l>>20)
	}
}
