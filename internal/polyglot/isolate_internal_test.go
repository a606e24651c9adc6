package polyglot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// An analyzer that fails whatever it is given is run at most
// maxIsolationRuns times more, and every file is named as not analysed.
func TestIsolationIsBounded(t *testing.T) {
	exe, err := exec.LookPath("false")
	if err != nil {
		t.Skip("no false(1)")
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
