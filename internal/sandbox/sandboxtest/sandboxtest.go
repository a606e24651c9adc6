// Package sandboxtest has what tests that play the attacker against the
// sandbox share: a loopback port that says whether it was reached, and a
// check that nothing a confined program started outlives its run.
package sandboxtest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Loopback is a TCP port on 127.0.0.1 that counts the connections it is
// given, closed when the test ends.
type Loopback struct {
	Port    int
	reached atomic.Int32
}

// NewLoopback listens on a free port of 127.0.0.1.
func NewLoopback(t *testing.T) *Loopback {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &Loopback{Port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			l.reached.Add(1)
		}
	}()
	return l
}

// Reached reports whether anything connected.
func (l *Loopback) Reached() bool { return l.reached.Load() > 0 }

// NoneLeft fails t when, 3 seconds after a run, a process whose command
// line holds marker is still alive, and kills it.
func NoneLeft(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := processesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left behind after the run: %v", left)
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond) // polling for the processes' end, not waiting on time
	}
}

// processesWith returns the processes whose command line holds s.
func processesWith(s string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, pid)
		}
	}
	return out
}
