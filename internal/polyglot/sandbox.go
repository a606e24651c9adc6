package polyglot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// maxOutput bounds what an analyzer may print; more is a failure, not a
// review of a truncated report.
const maxOutput = 64 << 20

// sandbox is one run of an analyzer.
type sandbox struct {
	exe  string
	args []string
	// dir is the private directory it runs in; its HOME, TMPDIR and
	// XDG directories are made inside it.
	dir string
	// analyzersDir's bin goes first on PATH (hadolint finds shellcheck
	// there).
	analyzersDir string
}

type ran struct {
	stdout []byte
	stderr string
	exit   int
}

// errTooMuchOutput is an analyzer's report over maxOutput.
var errTooMuchOutput = errors.New("printed more than 64 MiB")

// sandboxed runs s: its own process group, killed as a whole when ctx
// ends; an environment of its own (no variable of quorum's reaches it,
// secrets included); a network namespace of its own where the kernel
// allows one. A non-zero exit is not an error (analyzers exit 1 when they
// report something): the caller judges by the output.
func sandboxed(ctx context.Context, s sandbox) (ran, error) {
	home := filepath.Join(s.dir, ".home")
	for _, d := range []string{home, filepath.Join(home, "tmp"), filepath.Join(home, "cache"), filepath.Join(home, "config")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return ran{}, err
		}
	}
	path := os.Getenv("PATH")
	if s.analyzersDir != "" {
		path = filepath.Join(s.analyzersDir, "bin") + string(os.PathListSeparator) + path
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + home,
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"LANG=C.UTF-8",
		"NO_COLOR=1",
		// Node.js: no update checks, no telemetry, no colour.
		"NODE_OPTIONS=",
		"CI=1",
	}
	var stdout, stderr bytes.Buffer
	run := func(isolate bool) error {
		cmd := exec.CommandContext(ctx, s.exe, s.args...)
		cmd.Dir = s.dir
		cmd.Env = env
		cmd.Stdin = nil
		cmd.Stdout = &limited{w: &stdout, n: maxOutput}
		cmd.Stderr = &limited{w: &stderr, n: 64 << 10, quiet: true}
		cmd.SysProcAttr = sysProcAttr(isolate)
		cmd.Cancel = func() error { return killGroup(cmd) }
		cmd.WaitDelay = 2 * time.Second
		return cmd.Run()
	}
	isolate := isolation()
	err := run(isolate)
	if err != nil && isolate && isolationRefused(err) {
		// The kernel refused a namespace it granted to the probe (a
		// limit reached): run without, as on a machine without them.
		stdout.Reset()
		stderr.Reset()
		err = run(false)
	}
	res := ran{stdout: stdout.Bytes(), stderr: stderr.String()}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.exit = exit.ExitCode()
		if exit.ExitCode() < 0 {
			return res, fmt.Errorf("killed (%s)", exit.String())
		}
	case errors.Is(err, errTooMuchOutput):
		return res, err
	case err != nil:
		return res, err
	}
	return res, nil
}

// limited passes on at most n bytes; past them it fails the write (and
// so the run), or, quiet, drops the rest.
type limited struct {
	w     *bytes.Buffer
	n     int
	quiet bool
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) > l.n {
		l.w.Write(p[:l.n])
		l.n = 0
		if l.quiet {
			return len(p), nil
		}
		return 0, errTooMuchOutput
	}
	l.n -= len(p)
	return l.w.Write(p)
}

var (
	isolationOnce sync.Once
	isolationOK   bool
)

// isolation reports whether analyzers run without network: whether this
// process can give a child a network namespace of its own (root, or
// unprivileged user namespaces allowed). Asked once.
func isolation() bool {
	isolationOnce.Do(func() {
		if !canIsolate {
			return
		}
		exe, err := exec.LookPath("true")
		if err != nil {
			return
		}
		cmd := exec.Command(exe)
		cmd.SysProcAttr = sysProcAttr(true)
		isolationOK = cmd.Run() == nil
	})
	return isolationOK
}

// Isolated reports whether analyzers run without network on this machine,
// for `quorum analyzers list` and serve's start log.
func Isolated() bool { return isolation() }

// isolationRefused reports whether starting a process failed on its
// namespaces.
func isolationRefused(err error) bool {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "operation not permitted") || strings.Contains(s, "no space left") || strings.Contains(s, "invalid argument")
}
