package polyglot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/sandbox"
)

// An analyzer that fails whatever it is given is run at most
// maxIsolationRuns times more, and every file is named as not analysed.
func TestIsolationIsBounded(t *testing.T) {
	t.Parallel()
	exe, err := exec.LookPath("false")
	if err != nil {
		t.Fatalf("false(1), the stand-in analyzer that always fails, is not on PATH: %v", err)
	}
	e := &Engine{timeout: 10 * time.Second, found: map[*Tool]Found{Ruff: {Tool: Ruff, Path: exe}}}
	contents := map[string][]byte{}
	for i := range 100 {
		contents[fmt.Sprintf("f%03d.py", i)] = []byte("x = 1\n")
	}
	dir := t.TempDir()
	rep, failed, err := e.analyseIsolated(context.Background(), Ruff, dir, contents, nil)
	if err == nil || len(rep.diags) != 0 {
		t.Fatalf("err %v, %d reports", err, len(rep.diags))
	}
	runs, _ := os.ReadDir(dir)
	if len(runs) != 1+maxIsolationRuns {
		t.Errorf("%d runs, want %d", len(runs), 1+maxIsolationRuns)
	}
	if len(failed) != len(contents) {
		t.Errorf("%d files named as not analysed, want %d", len(failed), len(contents))
	}
	if why := failed["f000.py"]; !strings.HasPrefix(why, "ruff failed") {
		t.Errorf("why = %q", why)
	}
}

// The runs that look for failing files share a time budget: an analyzer
// that fails slowly on every file is not run maxIsolationRuns times.
func TestIsolationHasATimeBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow")
	if err := sandbox.WriteExecutable(slow, []byte("#!/bin/sh\nsleep 0.4\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &Engine{timeout: time.Second, found: map[*Tool]Found{Ruff: {Tool: Ruff, Path: slow}}}
	contents := map[string][]byte{}
	for i := range 100 {
		contents[fmt.Sprintf("f%03d.py", i)] = []byte("x = 1\n")
	}
	work := filepath.Join(dir, "work")
	start := time.Now()
	_, failed, err := e.analyseIsolated(context.Background(), Ruff, work, contents, nil)
	if err == nil || len(failed) != len(contents) {
		t.Fatalf("err %v, %d of %d files failed", err, len(failed), len(contents))
	}
	runs, _ := os.ReadDir(work)
	if len(runs) >= 1+maxIsolationRuns {
		t.Errorf("%d runs in %s: the time budget did not stop them", len(runs), time.Since(start))
	}
}
