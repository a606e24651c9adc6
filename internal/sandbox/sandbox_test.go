package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/sandbox"
	"github.com/quorum-review/quorum/internal/sandbox/sandboxtest"
)

// probe is an analyzer that plays the attacker: it tries to get out of
// its sandbox every way the issue names and prints what it managed, as
// JSON. Each attempt is also tried where it must succeed (its private
// directory), so a probe that cannot do anything at all fails the test.
const probe = `#!/usr/bin/python3
import json, os, socket, subprocess, sys
args = json.loads(sys.argv[1])
out = {"uid": os.getuid(), "cwd": os.getcwd()}

def attempt(name, f):
    try:
        f()
        out[name] = "ok"
    except BaseException as e:
        out[name] = "refused: %s" % type(e).__name__

def write(p):
    with open(p, "w") as fh:
        fh.write("pwned")

attempt("write_private", lambda: write(os.path.join(args["private"], "x")))
attempt("write_outside", lambda: write(os.path.join(args["outside"], "x")))
attempt("write_readonly", lambda: write(os.path.join(args["readonly"], "x")))
attempt("write_usr", lambda: write("/usr/pwned"))
attempt("read_readonly", lambda: open(os.path.join(args["readonly"], "input.txt")).read())
attempt("read_outside", lambda: open(os.path.join(args["outside"], "secret.txt")).read())
attempt("read_shadow", lambda: open("/etc/shadow").read())

def connect():
    s = socket.create_connection(("127.0.0.1", args["port"]), timeout=2)
    s.close()
attempt("connect_loopback", connect)

def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(args["unix"])
attempt("connect_unix", unix)

def abstract():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect("\0" + args["abstract"])
attempt("connect_abstract", abstract)

found = []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        if args["secret"].encode() in open("/proc/%s/environ" % pid, "rb").read():
            found.append(pid)
    except OSError:
        pass
if args["secret"] in "".join(os.environ.values()):
    found.append("own")
out["secret_seen_in"] = found
out["processes_seen"] = len([p for p in os.listdir("/proc") if p.isdigit()])
out["own_environ_keys"] = sorted(os.environ.keys())

def userns():
    subprocess.run(["unshare", "--user", "--map-root-user", "true"], check=True, capture_output=True)
attempt("new_user_namespace", userns)

import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
# System call numbers: keyctl, clone.
nr = {"x86_64": (250, 56), "aarch64": (219, 220)}[platform.machine()]

def keyring():
    # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1): the
    # kernel's keyrings are not namespaced.
    if libc.syscall(nr[0], 0, -3, 1) < 0:
        raise OSError(ctypes.get_errno(), "keyctl")
attempt("keyring", keyring)

def clone_newuser():
    # clone(CLONE_NEWUSER|SIGCHLD) straight, not through unshare(2).
    pid = libc.syscall(nr[1], 0x10000000 | 17, 0, 0, 0, 0)
    if pid < 0:
        raise OSError(ctypes.get_errno(), "clone")
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
attempt("clone_new_user_namespace", clone_newuser)

def clone_plain():
    pid = libc.syscall(nr[1], 17, 0, 0, 0, 0)
    if pid < 0:
        raise OSError(ctypes.get_errno(), "clone")
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
attempt("clone_plain", clone_plain)

def memory():
    b = bytearray(args["allocate"])
    b[-1] = 1
attempt("allocate", memory)

# A child in a session of its own, meant to outlive the run.
subprocess.Popen(["/usr/bin/python3", "-c", "import time; time.sleep(300)", args["marker"]],
                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(json.dumps(out))
`

type probeResult struct {
	UID              int      `json:"uid"`
	WritePrivate     string   `json:"write_private"`
	WriteOutside     string   `json:"write_outside"`
	WriteReadonly    string   `json:"write_readonly"`
	WriteUsr         string   `json:"write_usr"`
	ReadReadonly     string   `json:"read_readonly"`
	ReadOutside      string   `json:"read_outside"`
	ReadShadow       string   `json:"read_shadow"`
	ConnectLoopback  string   `json:"connect_loopback"`
	ConnectUnix      string   `json:"connect_unix"`
	ConnectAbstract  string   `json:"connect_abstract"`
	SecretSeenIn     []string `json:"secret_seen_in"`
	ProcessesSeen    int      `json:"processes_seen"`
	OwnEnvironKeys   []string `json:"own_environ_keys"`
	NewUserNamespace string   `json:"new_user_namespace"`
	Keyring          string   `json:"keyring"`
	CloneNewUser     string   `json:"clone_new_user_namespace"`
	ClonePlain       string   `json:"clone_plain"`
	Allocate         string   `json:"allocate"`
}

// TestProbeCannotEscape installs the probe as an analyzer would be
// installed and runs it the way analyzers run: it cannot write outside
// its directory, read what it is not shown, reach a loopback port or a
// Unix socket, read the parent's environment (secrets), see the host's
// processes, allocate past its memory limit, or leave a process behind.
// Run as root, it also shows the drop to an unprivileged user; the test
// below runs it again as an unprivileged user.
func TestProbeCannotEscape(t *testing.T) {
	rep := sandbox.Probe()
	t.Log(rep)
	if off := rep.Off(); len(off) > 0 {
		t.Fatalf("this machine lacks sandbox layers (scripts/test installs bubblewrap): %v", off)
	}
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := mkdir(t, base, "analyzers")
	outside := mkdir(t, base, "outside")
	readonly := mkdir(t, base, "review")
	private := mkdir(t, readonly, ".home")
	write(t, filepath.Join(tool, "probe"), probe, 0o755)
	write(t, filepath.Join(outside, "secret.txt"), "secret", 0o644)
	write(t, filepath.Join(readonly, "input.txt"), "the pull request's file", 0o644)

	const secret = "QUORUM-PROBE-SECRET-7d1e"
	t.Setenv("QUORUM_WEBHOOK_SECRET", secret)

	loopback := sandboxtest.NewLoopback(t)
	sock := filepath.Join(outside, "s.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	os.Chmod(sock, 0o777)
	abstract := "quorum-probe-" + strconv.Itoa(os.Getpid())
	al, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()

	marker := "quorum-probe-marker-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	args, _ := json.Marshal(map[string]any{
		"private": private, "outside": outside, "readonly": readonly,
		"port": loopback.Port, "unix": sock, "abstract": abstract,
		"secret": secret, "marker": marker, "allocate": 1 << 30,
	})
	var stdout, stderr bytes.Buffer
	spec := sandbox.Spec{
		Exe:      filepath.Join(tool, "probe"),
		Args:     []string{string(args)},
		Env:      []string{"PATH=/usr/bin:/bin", "HOME=" + private},
		Dir:      readonly,
		ReadOnly: []string{readonly},
		Writable: []string{private},
		Own:      []string{readonly},
		Limits:   sandbox.Limits{Memory: 512 << 20, CPU: 30 * time.Second, FileSize: 1 << 20, OpenFiles: 256, Processes: 256},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sandbox.Run(ctx, spec, &stdout, &stderr); err != nil {
		t.Fatalf("probe: %v\nstderr: %s", err, stderr.String())
	}
	var got probeResult
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("probe's report: %v: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	t.Logf("probe: %+v", got)

	if got.UID == 0 {
		t.Error("the probe ran as uid 0")
	}
	must := map[string]string{"write_private": got.WritePrivate, "read_readonly": got.ReadReadonly, "clone_plain": got.ClonePlain}
	for what, res := range must {
		if res != "ok" {
			t.Errorf("%s: %s, want ok (the probe must be able to do its job)", what, res)
		}
	}
	mustNot := map[string]string{
		"write_outside": got.WriteOutside, "write_readonly": got.WriteReadonly, "write_usr": got.WriteUsr,
		"read_outside": got.ReadOutside, "read_shadow": got.ReadShadow,
		"connect_loopback": got.ConnectLoopback, "connect_unix": got.ConnectUnix, "connect_abstract": got.ConnectAbstract,
		"allocate 1 GiB past a 512 MiB limit": got.Allocate,
		"new_user_namespace":                  got.NewUserNamespace,
		"keyring":                             got.Keyring,
		"clone_new_user_namespace":            got.CloneNewUser,
	}
	for what, res := range mustNot {
		if !strings.HasPrefix(res, "refused") {
			t.Errorf("%s: %s, want refused", what, res)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("the probe wrote outside its directory")
	}
	if loopback.Reached() {
		t.Error("the probe reached a loopback port")
	}
	if len(got.SecretSeenIn) > 0 {
		t.Errorf("the probe read the parent's secret in %v", got.SecretSeenIn)
	}
	if got.ProcessesSeen > 5 {
		t.Errorf("the probe sees %d processes: the host's", got.ProcessesSeen)
	}
	for _, k := range got.OwnEnvironKeys {
		// PWD is bubblewrap's, LC_CTYPE Python's own (PEP 538).
		if k != "PATH" && k != "HOME" && k != "PWD" && k != "LC_CTYPE" {
			t.Errorf("the probe's environment has %s, which it was not given", k)
		}
	}
	// Nothing it started outlives the run.
	sandboxtest.NoneLeft(t, marker)
}

// TestProbeAsUnprivilegedUser runs TestProbeCannotEscape again with quorum
// as an unprivileged user (nobody), as the systemd unit's DynamicUser
// runs it: bubblewrap then makes its user namespace without root.
func TestProbeAsUnprivilegedUser(t *testing.T) {
	if os.Getenv("QUORUM_SANDBOX_PROBE_CHILD") != "" {
		t.Log("this run is the unprivileged one")
		return
	}
	if os.Geteuid() != 0 {
		t.Log("quorum's tests already run unprivileged here: TestProbeCannotEscape is that case")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Directly in /tmp: nobody cannot walk into t.TempDir()'s parent.
	dir, err := os.MkdirTemp("", "quorum-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	copyFile(t, exe, bin)
	cmd := exec.Command(bin, "-test.run=^TestProbeCannotEscape$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + dir, "HOME=" + dir, "QUORUM_SANDBOX_PROBE_CHILD=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: sandbox.NobodyID, Gid: sandbox.NobodyID}}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil {
		t.Fatalf("the probe test as an unprivileged user: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestProbeCannotEscape") {
		t.Fatal("the probe test did not run as the unprivileged user")
	}
}

// TestLimitsStopRunaways shows the memory limit on a program that asks
// for more than its limit, and the CPU limit on one that spins.
func TestLimitsStopRunaways(t *testing.T) {
	const py = "/usr/bin/python3"
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(code string, l sandbox.Limits) error {
		return sandbox.Run(ctx, sandbox.Spec{Exe: py, Args: []string{"-c", code}, Env: []string{"PATH=/usr/bin:/bin"},
			Dir: dir, Writable: []string{dir}, Own: []string{dir}, Limits: l}, io.Discard, io.Discard)
	}
	small := sandbox.Limits{Memory: 256 << 20, CPU: 2 * time.Second, FileSize: 1 << 20, OpenFiles: 64, Processes: 64}
	if err := run("x = bytearray(64 << 20)", small); err != nil {
		t.Fatalf("64 MiB under a 256 MiB limit: %v", err)
	}
	if err := run("x = bytearray(1 << 30)", small); err == nil {
		t.Error("1 GiB under a 256 MiB limit was allowed")
	}
	start := time.Now()
	if err := run("while True: pass", small); err == nil {
		t.Error("a spinning program was not stopped by its CPU limit")
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the CPU limit of 2 s stopped the program after %s", took)
	}
	if err := run("open('big', 'wb').write(b'x' * (2 << 20))", small); err == nil {
		t.Error("a 2 MiB file under a 1 MiB limit was written")
	}
}

// TestScriptRunsConfined: the script form (go/packages starts "go" from
// PATH) confines the same way.
func TestScriptRunsConfined(t *testing.T) {
	base := t.TempDir()
	os.Chmod(base, 0o755)
	private := mkdir(t, base, "private")
	outside := mkdir(t, base, "outside")
	const py = "/usr/bin/python3"
	script, err := sandbox.Script(sandbox.Spec{Exe: py, Env: []string{"PATH=/usr/bin:/bin"}, Dir: private,
		Writable: []string{private}, Own: []string{private}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := mkdir(t, base, "bin")
	write(t, filepath.Join(bin, "python3"), script, 0o755)
	code := `import os, sys
open(os.path.join(sys.argv[1], "in"), "w").write("ok")
try:
    open(os.path.join(sys.argv[2], "out"), "w").write("pwned")
except OSError:
    pass
print(os.getuid())`
	cmd := exec.Command(filepath.Join(bin, "python3"), "-c", code, private, outside)
	cmd.Dir = private
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(private, "in")); err != nil {
		t.Errorf("the confined program could not write its private directory: %v (%s)", err, out)
	}
	if _, err := os.Stat(filepath.Join(outside, "out")); err == nil {
		t.Error("the confined program wrote outside its private directory")
	}
	if strings.TrimSpace(string(out)) == "0" {
		t.Error("the confined program ran as root")
	}
}

// A script shows as many paths as it is given (dash, Debian's sh, opens
// descriptors up to 9 only), and runs the program Before, confined, which
// starts Exe: the module fetch's bridge and the go command.
func TestScriptShowsManyPathsAndRunsBefore(t *testing.T) {
	base := t.TempDir()
	os.Chmod(base, 0o755)
	private := mkdir(t, base, "private")
	var shown []string
	for i := range 9 {
		d := mkdir(t, base, "ro"+strconv.Itoa(i))
		write(t, filepath.Join(d, "f"), "x", 0o644)
		shown = append(shown, d)
	}
	const py = "/usr/bin/python3"
	script, err := sandbox.Script(sandbox.Spec{Exe: py, Env: []string{"PATH=/usr/bin:/bin"}, Dir: private,
		ReadOnly: shown, Writable: []string{private}, Own: []string{private},
		Before: []string{"/usr/bin/env", "QUORUM_BEFORE=ran"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := mkdir(t, base, "bin")
	write(t, filepath.Join(bin, "python3"), script, 0o755)
	code := `import os, sys
print(os.environ.get("QUORUM_BEFORE"), sum(os.path.exists(os.path.join(d, "f")) for d in sys.argv[1:]), os.getuid())`
	cmd := exec.Command(filepath.Join(bin, "python3"), append([]string{"-c", code}, shown...)...)
	cmd.Dir = private
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := strings.Fields(string(out))
	if len(got) != 3 || got[0] != "ran" || got[1] != "9" || got[2] == "0" {
		t.Errorf("the script's program: %q, want Before's variable, the 9 paths shown, not root", out)
	}
}

func mkdir(t *testing.T, parent, name string) string {
	t.Helper()
	d := filepath.Join(parent, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func write(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, string(b), 0o755)
}

// A script written with WriteExecutable runs, though other goroutines
// start programs while it is written: none of their children holds it
// open for writing ("text file busy"). Written with os.WriteFile, about
// one run in twelve failed so on this machine.
func TestWriteExecutableIsNotBusy(t *testing.T) {
	dir := t.TempDir()
	errs := make(chan error, 8*50)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				p := filepath.Join(dir, fmt.Sprintf("s%d-%d", g, i))
				if err := sandbox.WriteExecutable(p, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
					errs <- err
					continue
				}
				if err := exec.Command(p).Run(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 3 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Errorf("%d of the 400 runs failed", n)
	}
}
