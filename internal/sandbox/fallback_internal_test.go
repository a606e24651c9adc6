package sandbox

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Without bubblewrap (not installed, or user namespaces off) a program
// still runs, with the limits, in a process group of its own and, where
// the kernel gives one, a network namespace: the layers left.
func TestFallbackWithoutBubblewrap(t *testing.T) {
	rep := Report{Layers: []Layer{{Name: LayerNetwork}}}
	if err := try(rep); err != nil {
		t.Fatalf("the fallback does not start: %v", err)
	}
	rep.Layers[0].On = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const py = "/usr/bin/python3"
	s := Spec{Exe: py, Args: []string{"-c", `import socket, sys, resource
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
    print("connected")
except OSError:
    print("refused")
print(resource.getrlimit(resource.RLIMIT_DATA)[0])`, strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")},
		Env: []string{"PATH=/usr/bin:/bin"}, Limits: DefaultLimits}
	args, files, err := argv(rep, s, py, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 0 {
		t.Errorf("the fallback binds files: %v", files)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = s.Env
	cmd.SysProcAttr = sysProcAttr(rep, s)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(out.String())
	if len(lines) != 2 || lines[0] != "refused" {
		t.Errorf("without bubblewrap, the program reached a loopback port or failed: %q", out.String())
	}
	if len(lines) == 2 && lines[1] != "2147483648" {
		t.Errorf("RLIMIT_DATA = %s, want the default 2 GiB", lines[1])
	}
}

// A script (the go command's) without bubblewrap gets its network
// namespace from unshare: it cannot reach a loopback port either.
func TestFallbackScriptHasNoNetwork(t *testing.T) {
	rep := Report{Layers: []Layer{{Name: LayerNetwork, On: true}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const py = "/usr/bin/python3"
	s := Spec{Exe: py, Args: []string{"-c", `import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
    print("connected")
except OSError:
    print("refused")`, strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")},
		Env: []string{"PATH=/usr/bin:/bin"}, Limits: DefaultLimits}
	args, _, err := argv(rep, s, py, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.TrimSpace(string(out)) != "refused" {
		t.Errorf("the script's program without bubblewrap: %q, want refused", out)
	}
}
