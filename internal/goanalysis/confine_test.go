package goanalysis_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/sandbox"
	"github.com/quorum-review/quorum/internal/sandbox/sandboxtest"
)

// The go command the loader starts (go list, through go/packages) runs in
// the sandbox: a go that plays the attacker, put in the real one's place,
// finds itself without quorum's environment (its secrets), the host's
// processes, a way to write outside its tree, or the root user.
func TestGoCommandRunsConfined(t *testing.T) {
	base := worldDir(t, "quorum-go-probe-")
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	const secret = "QUORUM-GO-PROBE-SECRET-31c"
	t.Setenv("QUORUM_GITHUB_PRIVATE_KEY", secret)
	// Run by go/packages it reports what it can reach, on stderr, which
	// the review gives as why loading failed.
	goExe := standInGo(t, base, `secret=no
for f in /proc/[0-9]*/environ; do grep -q `+secret+` "$f" 2>/dev/null && secret=yes; done
env | grep -q `+secret+` && secret=yes
wrote=no
(echo pwned > `+outside+`/x) 2>/dev/null && wrote=yes
echo "probe uid=$(id -u) procs=$(ls -d /proc/[0-9]* 2>/dev/null | wc -l) secret=$secret wrote=$wrote" >&2
exit 1
`)
	ch := probeChange(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := goanalysis.NewLoader(goanalysis.Config{Go: goExe, CacheDir: t.TempDir()}).Load(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	why := fallbackReasons(p)["p"]
	i := strings.Index(why, "probe ")
	if i < 0 {
		t.Fatalf("the probe's report is not in the reason the load gives: %q", why)
	}
	report := map[string]string{}
	for _, f := range strings.Fields(why[i+len("probe "):]) {
		k, v, _ := strings.Cut(f, "=")
		report[k] = v
	}
	t.Logf("go command: %v", report)
	if report["secret"] != "no" {
		t.Error("the go command could read quorum's environment")
	}
	if report["wrote"] != "no" {
		t.Error("the go command wrote outside its tree")
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a file appeared outside the tree")
	}
	if n, _ := strconv.Atoi(report["procs"]); n == 0 || n > 8 {
		t.Errorf("the go command sees %s processes", report["procs"])
	}
	if report["uid"] == "0" {
		t.Error("the go command ran as root")
	}
}

// The fetch's go command, whose go.mod and imports the pull request
// controls, has no network of the host: a go that plays the attacker, in
// the real one's place, cannot reach a port on the host's loopback (a
// database, a metadata service, quorum's API), only the fetch's proxy,
// through the bridge, at the GOPROXY it is given.
func TestFetchHasNoHostNetwork(t *testing.T) {
	base := worldDir(t, "quorum-go-probe-")
	host := sandboxtest.NewLoopback(t)
	// It writes its report into the module cache, the one directory a
	// fetch may write that the test can read afterwards; the load after
	// the fetch (GOPROXY file://) does nothing.
	goExe := standInGo(t, base, `case "$GOPROXY" in *http://*) ;; *) exit 1 ;; esac
exec /usr/bin/python3 - <<'PY'
import json, os, socket, urllib.request
r = {}
try:
    socket.create_connection(("127.0.0.1", `+strconv.Itoa(host.Port)+`), timeout=2).close()
    r["host"] = "reached"
except OSError as e:
    r["host"] = "refused: %s" % type(e).__name__
url = os.environ["GOPROXY"].split(",")[-1] + "/corp.example/lib/@v/list"
try:
    r["proxy"] = urllib.request.urlopen(url, timeout=10).read().decode().strip()
except Exception as e:
    r["proxy"] = "failed: %r" % e
open(os.path.join(os.environ["GOMODCACHE"], "probe.json"), "w").write(json.dumps(r))
PY
`)
	proxy := goanalysistest.NewGoProxy(t, goanalysistest.Module{Path: "corp.example/lib", Version: "v1.0.0", Files: map[string]string{"lib.go": "package lib\n"}})
	modCache := t.TempDir()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": "module example.com/probe\n\ngo 1.22\n\nrequire corp.example/lib v1.0.0\n", "p/p.go": "package p\n"})
	b := r.Commit("base")
	r.Write(map[string]string{"p/p.go": "package p\n\nfunc F() {}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := goanalysis.NewLoader(goanalysis.Config{Go: goExe, CacheDir: t.TempDir(), GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: modCache}).Load(ctx, r.Change(b, r.Commit("head")))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(modCache, "probe.json"))
	if err != nil {
		t.Fatalf("the probe did not run in the fetch: %v (%s)", err, reasons(p))
	}
	t.Logf("fetch's go command: %s", out)
	var report map[string]string
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatal(err)
	}
	if host.Reached() || report["host"] == "reached" {
		t.Errorf("the fetch's go command reached a port on the host's loopback: %s", out)
	}
	if report["proxy"] != "v1.0.0" {
		t.Errorf("the fetch's go command did not reach the fetch's proxy through the bridge: %s", out)
	}
}

// worldDir returns a new directory directly in the temporary directory,
// 0755, removed after the test: the sandbox's user must be able to walk
// to a stand-in go command in it (not so through t.TempDir's parent).
func worldDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// probeChange is a change of one package, p, for a stand-in go to load.
func probeChange(t *testing.T) *change.Change {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/probe"), "p/p.go": "package p\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"p/p.go": "package p\n\nfunc F() {}\n"})
	return r.Change(base, r.Commit("head"))
}

// standInGo writes base/bin/go, a go command that plays the attacker:
// asked by the loader itself (unconfined, once) for its version, module
// cache and GOROOT, or to build the fetch's bridge, it answers as the
// real one does; any other time it runs body, a shell script.
func standInGo(t *testing.T, base, body string) string {
	t.Helper()
	if err := os.Mkdir(filepath.Join(base, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "bin", "go")
	script := "#!/bin/sh\nif { [ \"$1\" = env ] && [ \"$2\" = GOVERSION ]; } || [ \"$1\" = build ]; then\n\texec " + goRoot(t) + "/bin/go \"$@\"\nfi\n" + body
	if err := sandbox.WriteExecutable(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// goRoot returns the real go command's GOROOT.
func goRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
