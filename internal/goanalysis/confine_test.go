package goanalysis_test

import (
	"context"
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
// cache and GOROOT, it answers as the real one does; any other time it
// runs body, a shell script.
func standInGo(t *testing.T, base, body string) string {
	t.Helper()
	if err := os.Mkdir(filepath.Join(base, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "bin", "go")
	script := "#!/bin/sh\nif [ \"$1\" = env ] && [ \"$2\" = GOVERSION ]; then\n\texec " + goRoot(t) + "/bin/go \"$@\"\nfi\n" + body
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
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
