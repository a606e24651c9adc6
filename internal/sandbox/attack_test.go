package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/sandbox"
)

// A descriptor quorum holds without close-on-exec (one it inherited: a
// socket systemd passes, a pipe or a directory its parent left open; Go
// marks only the descriptors it opens itself) passes through bubblewrap
// and setpriv into the confined program, which then reads, through it,
// what its mount namespace hides: a directory's descriptor is the host's
// file system from that directory up ("..").
func TestInheritedDescriptorsDoNotReachTheProgram(t *testing.T) {
	if off := sandbox.Probe().Off(); len(off) > 0 {
		t.Fatalf("this machine lacks sandbox layers (scripts/test installs bubblewrap): %v", off)
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	review := mkdir(t, base, "review")
	private := mkdir(t, review, ".home")
	outside := mkdir(t, base, "outside")
	os.Chmod(outside, 0o755)
	write(t, filepath.Join(base, "secret.txt"), "QUORUM-INHERITED-SECRET", 0o644)
	// What quorum's parent left open, as the test's process would have
	// inherited it.
	fd, err := syscall.Open(outside, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	code := `import os
for fd in os.listdir("/proc/self/fd"):
    try:
        d = os.open("..", os.O_RDONLY, dir_fd=int(fd))
        print(open(os.open("secret.txt", os.O_RDONLY, dir_fd=d)).read())
    except OSError:
        pass
`
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = sandbox.Run(ctx, sandbox.Spec{Exe: "/usr/bin/python3", Args: []string{"-c", code}, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + private},
		Dir: review, ReadOnly: []string{review}, Writable: []string{private}, Own: []string{review}}, &out, &out)
	if err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if strings.Contains(out.String(), "QUORUM-INHERITED-SECRET") {
		t.Errorf("the confined program read %s through descriptor %d, which quorum held without close-on-exec", filepath.Join(base, "secret.txt"), fd)
	}
}
