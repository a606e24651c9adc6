package goanalysis

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A failed fetch is named by what the go command said of its failure:
// not its progress, nor the last frame of a crash's stack, and a signal
// that bubblewrap passed on as an exit status of 128 plus its number.
func TestGoErrorNamesTheFailure(t *testing.T) {
	exit := func(code string) error {
		err := exec.Command("sh", "-c", "exit "+code).Run()
		if err == nil {
			t.Fatalf("exit %s: no error", code)
		}
		return err
	}
	for _, c := range []struct {
		stderr, code, want string
	}{
		{"go: downloading corp.example/lib v1.0.0\n/tmp/tree/go.mod:3: unknown directive: frob\ngo: finding module for package x\n", "1", "go.mod:3: unknown directive: frob"},
		{"go: downloading corp.example/lib v1.0.0\nfatal error: runtime: out of memory\n\ngoroutine 1 [running]:\nruntime.throw()\n\t/usr/local/go/src/runtime/proc.go:283 +0x1f\n", "2", "fatal error: runtime: out of memory"},
		{"go: downloading corp.example/lib v1.0.0\n", "137", "it was ended by signal 9 (killed)"},
		{"", "1", "exit status 1"},
	} {
		if got := goError(c.stderr, exit(c.code), "/tmp/tree"); !strings.HasPrefix(got, c.want) {
			t.Errorf("stderr %q, exit %s: %q, want %q", c.stderr, c.code, got, c.want)
		}
	}
}

// A review's lock on the module cache is released when the review ends,
// even while a process forked meanwhile (by another goroutine, not yet
// exec'd) still holds the lock file open: the prune after it finds the
// cache free. The fork's copy is a dup of the descriptor, which shares
// the open file and its lock as the fork's does.
func TestUnlockReleasesTheLockAForkStillHolds(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, modCacheLock), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	forked, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(forked)
	unlock(f)
	if _, locked, err := pruneModCache(dir, 1<<40); err != nil || !locked {
		t.Errorf("prune after the review: locked %v, %v; want the cache free", locked, err)
	}
}
