package polyglot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/quorum-review/quorum/internal/sandbox"
)

// maxOutput bounds what an analyzer may print; more is a failure, not a
// review of a truncated report.
const maxOutput = 64 << 20

// limits bound one analyzer run (internal/sandbox): measured on real
// code, the analyzers use a few hundred megabytes at most
// (docs/languages.md); a hostile script that makes ShellCheck want
// gigabytes is stopped at 2 GiB.
var limits = sandbox.DefaultLimits

// sandboxRun is one run of an analyzer.
type sandboxRun struct {
	exe  string
	args []string
	// dir is the directory of the copied files it runs in (read-only to
	// it); its parent, also read-only, holds quorum's configuration of
	// the analyzer.
	dir string
	// analyzersDir, read-only, is where the analyzers are installed;
	// its bin goes first on PATH (hadolint finds shellcheck there).
	analyzersDir string
	// env is added to the analyzer's own environment.
	env []string
}

type ran struct {
	stdout []byte
	stderr string
	exit   int
}

// errTooMuchOutput is an analyzer's report over maxOutput.
var errTooMuchOutput = errors.New("printed more than 64 MiB")

// sandboxed runs s confined by internal/sandbox: as an unprivileged user,
// in namespaces of its own (no network, no process of the host, nothing
// of the file system but the system's programs, the analyzers and the
// copied files, read-only, and a private /tmp in memory), with limits on
// memory, CPU time, file size, open files and processes, an environment
// of its own (no variable of quorum's reaches it, secrets included), and
// killed with everything it started when ctx ends. A non-zero exit is not
// an error (analyzers exit 1 when they report something): the caller
// judges by the output.
func sandboxed(ctx context.Context, s sandboxRun) (ran, error) {
	path := "/usr/local/bin:/usr/bin:/bin"
	ro := []string{filepath.Dir(s.dir)}
	if s.analyzersDir != "" {
		path = filepath.Join(s.analyzersDir, "bin") + string(os.PathListSeparator) + path
		ro = append(ro, s.analyzersDir)
	}
	// Its HOME, temporary and XDG directories are the sandbox's own /tmp:
	// memory, bounded in size, gone with it. Nothing of the host is
	// writable to it.
	env := []string{
		"PATH=" + path,
		"HOME=/tmp",
		"TMPDIR=/tmp",
		"XDG_CACHE_HOME=/tmp/.cache",
		"XDG_CONFIG_HOME=/tmp/.config",
		"LANG=C.UTF-8",
		"NO_COLOR=1",
		// Node.js: no update checks, no telemetry, no colour.
		"NODE_OPTIONS=",
		"CI=1",
	}
	env = append(env, s.env...)
	var stdout, stderr bytes.Buffer
	out := &limited{w: &stdout, n: maxOutput}
	err := sandbox.Run(ctx, sandbox.Spec{
		Exe: s.exe, Args: s.args, Env: env, Dir: s.dir,
		ReadOnly: ro, Own: []string{filepath.Dir(s.dir)},
		Limits: limits,
	}, out, &limited{w: &stderr, n: 64 << 10, quiet: true})
	res := ran{stdout: stdout.Bytes(), stderr: stderr.String()}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if out.over {
		// Whatever the program did once its output was cut (a broken
		// pipe, an exit status), this is why it failed.
		return res, errTooMuchOutput
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.exit = exit.ExitCode()
		// Killed by a signal: the program itself, or, in bubblewrap,
		// the program whose status bubblewrap passes on as 128+signal.
		sig := syscall.Signal(0)
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig = ws.Signal()
		} else if sandbox.Probe().Bubblewrap != "" && res.exit > 128 && res.exit < 128+65 {
			sig = syscall.Signal(res.exit - 128)
		}
		switch sig {
		case 0:
		case syscall.SIGKILL, syscall.SIGXCPU, syscall.SIGXFSZ:
			// RLIMIT_CPU's hard limit and a file past RLIMIT_FSIZE.
			return res, fmt.Errorf("killed (signal: %s): %w (%s)", sig, sandbox.ErrLimit, describeLimits())
		default:
			if outOfMemory.MatchString(res.stderr) {
				return res, fmt.Errorf("killed (signal: %s): ran out of memory: %w (%s)", sig, sandbox.ErrLimit, describeLimits())
			}
			return res, fmt.Errorf("killed (signal: %s)", sig)
		}
		if outOfMemory.MatchString(res.stderr) {
			return res, fmt.Errorf("ran out of memory: %w (%s)", sandbox.ErrLimit, describeLimits())
		}
	case errors.Is(err, errTooMuchOutput):
		return res, err
	case err != nil:
		return res, err
	}
	return res, nil
}

// outOfMemory is how the analyzers' runtimes say an allocation failed
// (Python, Haskell's RTS, Rust's alloc, Node.js, libc).
var outOfMemory = regexp.MustCompile(`MemoryError|out of memory|memory allocation of \d+ bytes failed|JavaScript heap out of memory|Cannot allocate memory`)

func describeLimits() string {
	return fmt.Sprintf("memory %d MiB, CPU %s, files %d MiB", limits.Memory>>20, limits.CPU, limits.FileSize>>20)
}

// limited passes on at most n bytes; past them it fails the write (and
// so the run), or, quiet, drops the rest.
type limited struct {
	w     *bytes.Buffer
	n     int
	quiet bool
	// over says more than n bytes came.
	over bool
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) > l.n {
		l.w.Write(p[:l.n])
		l.n = 0
		l.over = true
		if l.quiet {
			return len(p), nil
		}
		return 0, errTooMuchOutput
	}
	l.n -= len(p)
	return l.w.Write(p)
}

// Sandbox says which layers confine the analyzers on this machine, for
// `quorum analyzers list` and serve's start log.
func Sandbox() sandbox.Report { return sandbox.Probe() }
