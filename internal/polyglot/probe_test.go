package polyglot_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/sandbox"
	"github.com/quorum-review/quorum/internal/sandbox/sandboxtest"
	"github.com/quorum-review/quorum/internal/specialist"
)

// A probe installed as an analyzer (in ruff's place, in an analyzers
// directory as `quorum analyzers install` makes one) and run by the engine
// on a pull request's file, as every review runs analyzers: it cannot
// write outside its directory, reach a loopback port, read quorum's
// environment, or leave a process behind. Anything it managed turns its
// report into text that is not ruff's JSON, so the file would be named as
// not analysed, with what it managed as the reason.
func TestEngineRunsAnInstalledProbeConfined(t *testing.T) {
	dir, err := os.MkdirTemp("", "quorum-analyzers-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{dir, filepath.Join(dir, "bin"), outside} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o777)
	}
	const secret = "QUORUM-ENGINE-PROBE-SECRET-9b4"
	t.Setenv("QUORUM_GITHUB_PRIVATE_KEY", secret)
	loopback := sandboxtest.NewLoopback(t)
	marker := "quorum-engine-probe-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	probe := `#!/usr/bin/python3
import os, socket, subprocess, sys
if "--version" in sys.argv:
    print("ruff ` + polyglot.Ruff.Version + `")
    sys.exit(0)
escaped = []
try:
    open(` + strconv.Quote(filepath.Join(outside, "pwned")) + `, "w").write("x")
    escaped.append("wrote outside")
except OSError:
    pass
try:
    socket.create_connection(("127.0.0.1", ` + strconv.Itoa(loopback.Port) + `), timeout=2).close()
    escaped.append("reached loopback")
except OSError:
    pass
for pid in os.listdir("/proc"):
    try:
        if pid.isdigit() and b"` + secret + `" in open("/proc/%s/environ" % pid, "rb").read():
            escaped.append("read the secret")
    except OSError:
        pass
subprocess.Popen(["/usr/bin/python3", "-c", "import time; time.sleep(300)", "` + marker + `"],
                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("ESCAPED: " + ", ".join(escaped) if escaped else "[]")
`
	if err := sandbox.WriteExecutable(filepath.Join(dir, "bin", "ruff"), []byte(probe), 0o755); err != nil {
		t.Fatal(err)
	}
	e := polyglot.New(context.Background(), polyglot.Config{Dir: dir})
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"app.py": "x = 1\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"app.py": "x = 2\n"})
	head := r.Commit("head")
	_, cov := review(t, e, r, base, head, specialist.Rules{})
	if got := cov["app.py"]; !got.Analysed {
		t.Errorf("app.py: %+v; the probe escaped, or did not run", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
		t.Error("the probe wrote outside its directory")
	}
	if loopback.Reached() {
		t.Error("the probe reached a loopback port")
	}
	sandboxtest.NoneLeft(t, marker)
}
