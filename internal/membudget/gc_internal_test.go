package membudget

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestPaceGCLeavesTheEnvironmentsChoice: the environment's GOGC or
// GOMEMLIMIT is left alone.
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
	// collect collects and waits for the pacer to have followed it.
	collect := func() {
		t.Helper()
		before := p.collections()
		deadline := time.Now().Add(10 * time.Second)
		for p.collections() == before {
			if time.Now().After(deadline) {
				t.Fatal("the pacer followed no collection in 10 s")
			}
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
	}
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	collect()
	collect()
	got := debug.SetMemoryLimit(-1)
	if got < 1.5*64<<20 || got > 1.5*128<<20 {
		t.Errorf("with 64 MiB live, limit %d MiB; want about 1.5 times the live heap", got>>20)
	}
	runtime.KeepAlive(live)
	live = nil
	collect()
	collect()
	if l := debug.SetMemoryLimit(-1); l != got {
		t.Errorf("the live heap fell and the limit moved from %d to %d MiB", got>>20, l>>20)
	}
}
