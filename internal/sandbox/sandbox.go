// Package sandbox runs a program on untrusted input — an analyzer of
// another language on a pull request's files, the go command listing a
// pull request's packages — confined with the field's parts rather than
// our own: bubblewrap (the sandbox Flatpak uses) for the namespaces and the
// file-system view, util-linux's setpriv and prlimit for the user and the
// resource limits.
//
// A confined program
//   - runs as an unprivileged user: nobody (65534) when quorum is root,
//     quorum's own user otherwise, with no capabilities and no_new_privs;
//   - is in user, mount, PID, network, IPC, UTS and cgroup namespaces of
//     its own: it sees no process of the host (so no /proc/<quorum>/environ),
//     has no network but a loopback of its own (no port of the host, no
//     abstract Unix socket), cannot create further user namespaces, and
//     dies with everything it started when quorum kills it or dies;
//   - sees the system's /usr read-only, a few files of /etc that programs
//     need to start (nothing secret), the paths it is given read-only, one
//     or more writable private directories, an empty /tmp and a minimal
//     /dev; nothing else of the host exists for it;
//   - has limits on its data segment (memory), CPU time, the size of a
//     file it writes, open files and processes;
//   - gets the environment it is given and nothing of quorum's.
//
// Where a layer cannot be had (bubblewrap not installed, user namespaces
// off), Probe says so, quorum says it at start and in `quorum analyzers
// list`, and the rest is kept: the unprivileged user, the limits, a
// process group of its own and, where the kernel allows one, a network
// namespace.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// NobodyID is the user and group a program runs as when quorum is root.
const NobodyID = 65534

// Limits bound one confined program (each process of it: they are
// setrlimit's).
type Limits struct {
	// Memory is RLIMIT_DATA: the private writable memory a process may
	// map. Unlike RLIMIT_AS it does not count the address space runtimes
	// reserve without using (V8's, GHC's, Go's), only what they can
	// write to.
	Memory uint64
	// CPU is RLIMIT_CPU, rounded up to a second.
	CPU time.Duration
	// FileSize is RLIMIT_FSIZE: the largest file it may write.
	FileSize uint64
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles uint64
	// Processes is RLIMIT_NPROC: processes and threads of its user.
	Processes uint64
}

// DefaultLimits are the limits of an analyzer run: far above what the
// analyzers use on real code (docs/languages.md), far below what takes a
// machine down.
var DefaultLimits = Limits{
	Memory:    2 << 30,
	CPU:       5 * time.Minute,
	FileSize:  256 << 20,
	OpenFiles: 1024,
	Processes: 1024,
}

// Spec is one program to run confined.
type Spec struct {
	// Exe and Args are the program and its arguments. Exe is an absolute
	// path, or a name looked up on the host's PATH.
	Exe  string
	Args []string
	// Env is its whole environment.
	Env []string
	// Dir is its working directory; it must be visible (under ReadOnly
	// or Writable).
	Dir string
	// ReadOnly are host paths it sees read-only, at the same place.
	ReadOnly []string
	// Writable are host paths it sees writable, at the same place: its
	// private directories, created for this run.
	Writable []string
	// Own are directories quorum made for this run (the copied files,
	// the private directories): when the program runs as nobody they are
	// given to nobody, so that it can read them.
	Own []string
	// Before is a program, by absolute path, and its first arguments,
	// that runs inside the sandbox, confined as Exe is, and is given Exe
	// and its arguments to run: the module fetch's bridge to quorum's
	// proxy, which must listen in the sandbox's network namespace before
	// the go command starts.
	Before []string
	// Set are variables ("K=V") a Script sets before it starts the
	// sandbox, over those it is run with.
	Set []string
	// Limits; the zero value means DefaultLimits.
	Limits Limits
}

// Layer is one part of the confinement and whether this machine has it.
type Layer struct {
	Name string
	On   bool
	// Why says why it is off.
	Why string
}

// Report says which layers confine programs on this machine.
type Report struct {
	// Bubblewrap is the bwrap found, "" when none is.
	Bubblewrap string
	Layers     []Layer
	// seccomp says bubblewrap loads the seccomp filter.
	seccomp bool
}

// Namespaces reports whether programs run in namespaces of their own
// (bubblewrap with user namespaces, or at least a network namespace).
func (r Report) Namespaces() bool {
	for _, l := range r.Layers {
		if l.Name == LayerNamespaces || l.Name == LayerNetwork {
			if l.On {
				return true
			}
		}
	}
	return false
}

// Off returns the layers that are off, each with why.
func (r Report) Off() []Layer {
	var out []Layer
	for _, l := range r.Layers {
		if !l.On {
			out = append(out, l)
		}
	}
	return out
}

// String says in one line what confines programs.
func (r Report) String() string {
	var on, off []string
	for _, l := range r.Layers {
		if l.On {
			on = append(on, l.Name)
		} else {
			off = append(off, l.Name+" ("+l.Why+")")
		}
	}
	s := "sandbox: " + strings.Join(on, ", ")
	if len(off) > 0 {
		s += "; OFF: " + strings.Join(off, "; ")
	}
	return s
}

// The layers' names.
const (
	LayerNamespaces = "bubblewrap namespaces (user, mount, PID, network, IPC, UTS, cgroup) and a read-only view of the file system"
	LayerNetwork    = "network namespace"
	LayerUser       = "unprivileged user"
	LayerLimits     = "resource limits"
	LayerGroup      = "process group killed as a whole"
	LayerSeccomp    = "seccomp filter (no new user namespace, mount, keyring, ptrace, bpf, perf or io_uring)"
)

// ErrLimit is a run ended by one of its limits (memory, CPU time, file
// size): the program was killed or could not allocate.
var ErrLimit = errors.New("stopped by the sandbox's limits")

// Command returns the command that runs s confined, and a function that
// releases what it holds (call it once the command has finished).
// Stdin, Stdout and Stderr are the caller's to set; the command's
// Cancel kills the program and everything it started.
func Command(ctx context.Context, s Spec) (*exec.Cmd, func(), error) {
	rep := Probe()
	if s.Limits == (Limits{}) {
		s.Limits = DefaultLimits
	}
	exe, err := resolve(s.Exe, s.Env)
	if err != nil {
		return nil, nil, err
	}
	if err := own(s.Own); err != nil {
		return nil, nil, err
	}
	filter, err := seccompPipe(rep)
	if err != nil {
		return nil, nil, err
	}
	argv, files, err := argv(rep, s, exe, filter, false)
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		for _, f := range files {
			f.Close()
		}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = s.Env
	cmd.Dir = s.Dir
	cmd.ExtraFiles = files
	cmd.SysProcAttr = sysProcAttr(rep, s)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 2 * time.Second
	return cmd, release, nil
}

// WriteExecutable writes a program (a script such as Script's) to path,
// to be run soon after. It holds syscall.ForkLock while the file is open
// for writing: a child that this process forks in the meantime (any
// goroutine's exec) would otherwise hold the descriptor until its own
// exec, and running the program then fails with "text file busy"
// (ETXTBSY; golang/go#22315): with 8 goroutines each writing and running
// 50 scripts, 32 of the 400 runs failed so, and none under the lock
// (TestWriteExecutableIsNotBusy).
func WriteExecutable(path string, data []byte, perm os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, data, perm)
}

// Script returns a shell script that runs s's program confined with the
// arguments the script is given ("$@"): for a child that a library starts
// by name from PATH (go/packages runs "go"). The script itself is not
// confined; it opens the paths to bind and starts the sandbox. dir is a
// private directory of the caller's, for the files the script reads (the
// seccomp filter); it must outlive the script's runs and not be shown to
// the program.
func Script(s Spec, dir string) (string, error) {
	rep := Probe()
	if s.Limits == (Limits{}) {
		s.Limits = DefaultLimits
	}
	exe, err := resolve(s.Exe, s.Env)
	if err != nil {
		return "", err
	}
	s.Args = nil
	if err := own(s.Own); err != nil {
		return "", err
	}
	var filter *os.File
	if prog := seccompProgram(); prog != nil && rep.seccomp {
		p := filepath.Join(dir, "seccomp.bpf")
		if err := os.WriteFile(p, prog, 0o600); err != nil {
			return "", err
		}
		if filter, err = os.Open(p); err != nil {
			return "", err
		}
	}
	argv, files, err := argv(rep, s, exe, filter, true)
	if err != nil {
		return "", err
	}
	// dash, Debian's sh, redirects descriptors 0 to 9 only: past the
	// seventh file, bash (Essential on Debian) opens them.
	shell := "/bin/sh"
	if len(files) > 7 {
		shell = "/bin/bash"
		if _, err := os.Stat(shell); err != nil {
			for _, f := range files {
				f.Close()
			}
			return "", fmt.Errorf("sandbox: %d paths to show need %s: %w", len(files), shell, err)
		}
	}
	var b strings.Builder
	b.WriteString("#!" + shell + "\n# Written by quorum: runs " + Quote(exe) + " in its sandbox (internal/sandbox).\n")
	for i, f := range files {
		fmt.Fprintf(&b, "exec %d<%s\n", 3+i, Quote(f.Name()))
		f.Close()
	}
	for _, kv := range s.Set {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "%s=%s; export %s\n", k, Quote(v), k)
	}
	b.WriteString("exec")
	for _, a := range argv {
		b.WriteString(" " + Quote(a))
	}
	b.WriteString(" \"$@\"\n")
	return b.String(), nil
}

// seccompPipe returns the read end of a pipe holding the seccomp filter,
// or nil where bubblewrap does not load one.
func seccompPipe(rep Report) (*os.File, error) {
	prog := seccompProgram()
	if prog == nil || !rep.seccomp || rep.Bubblewrap == "" {
		return nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// A few hundred bytes: within the pipe's buffer, so the write does
	// not wait for bubblewrap to read.
	_, err = w.Write(prog)
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Quote quotes s for a POSIX shell.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resolve finds exe: absolute, or on env's PATH, then on the host's.
func resolve(exe string, env []string) (string, error) {
	if filepath.IsAbs(exe) {
		return exe, nil
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(p) {
				c := filepath.Join(d, exe)
				if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return c, nil
				}
			}
		}
	}
	return exec.LookPath(exe)
}

// Own gives dir, recursively, to the user confined programs run as,
// unless it is theirs already: a directory kept across runs (a build
// cache) that they write to.
func Own(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == NobodyID {
		return nil
	}
	return own([]string{dir})
}

// own gives dirs, recursively, to nobody when quorum is root and drops
// to nobody for the program; otherwise they are quorum's already. Their
// directories become 0711.
func own(dirs []string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := os.Lchown(p, NobodyID, NobodyID); err != nil {
				return err
			}
			if e.IsDir() {
				// Others may pass through, not list: bubblewrap, as
				// root without capabilities, changes into it before
				// setpriv drops to nobody.
				return os.Chmod(p, 0o711)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("sandbox: give %s to the sandbox's user: %w", d, err)
		}
	}
	return nil
}

// limitArgs are prlimit's flags for l.
func limitArgs(l Limits) []string {
	cpu := uint64((l.CPU + time.Second - 1) / time.Second)
	return []string{
		"--data=" + strconv.FormatUint(l.Memory, 10),
		"--cpu=" + strconv.FormatUint(cpu, 10),
		"--fsize=" + strconv.FormatUint(l.FileSize, 10),
		"--nofile=" + strconv.FormatUint(l.OpenFiles, 10),
		"--nproc=" + strconv.FormatUint(l.Processes, 10),
		"--core=0",
	}
}

// etcFiles are the files of /etc a program may need to start: the
// dynamic loader's cache and configuration, Debian's alternatives (the
// links /usr/bin/node and the like go through), the time zone, OpenSSL's
// configuration (Node.js reads it at start). Nothing
// secret: no passwd, shadow, or host keys.
var etcFiles = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime", "/etc/ssl/openssl.cnf"}

// systemDirs are shown read-only, or as the links they are (merged /usr).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// ErrUnavailable is a path the program must see that does not exist.
var ErrUnavailable = errors.New("sandbox: a path to show does not exist")

// argv builds the command line that runs exe confined as s says, and the
// files to pass it as descriptors 3, 4, …: the paths it binds, opened by
// quorum, so that bubblewrap, as nobody, need not be able to walk to them.
func argv(rep Report, s Spec, exe string, filter *os.File, script bool) ([]string, []*os.File, error) {
	var out []string
	var files []*os.File
	if filter != nil && rep.Bubblewrap == "" {
		filter.Close()
		filter = nil
	}
	fail := func(err error) ([]string, []*os.File, error) {
		for _, f := range files {
			f.Close()
		}
		if filter != nil {
			filter.Close()
		}
		return nil, nil, err
	}
	root := os.Geteuid() == 0
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		setpriv = ""
	}
	// Root drops to nobody with setpriv: inside bubblewrap when there is
	// one (bubblewrap, run by root, can then bind paths only root can
	// walk to, and keeps nothing but the capabilities setpriv needs to
	// change user; setpriv clears them all), before running the program
	// otherwise.
	drop := []string{setpriv, "--reuid=" + strconv.Itoa(NobodyID), "--regid=" + strconv.Itoa(NobodyID), "--clear-groups",
		"--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"}
	if prlimit, err := exec.LookPath("prlimit"); err == nil {
		out = append(append(append(out, prlimit), limitArgs(s.Limits)...), "--")
	}
	if rep.Bubblewrap == "" {
		// Without bubblewrap nothing is bound where nobody can reach
		// it (root's analyzers, module cache): the program keeps
		// quorum's user, and Probe says that layer is off. A Command
		// gets its network namespace from the kernel directly
		// (sysProcAttr); a script, run by a library, from util-linux's
		// unshare, in a session of its own.
		if script && netOn(rep) {
			if unshare, err := exec.LookPath("unshare"); err == nil {
				out = append(out, unshare, "--net", "--kill-child")
				if !root {
					out = append(out, "--map-current-user")
				}
				out = append(out, "--")
			}
			if setsid, err := exec.LookPath("setsid"); err == nil {
				out = append(out, setsid)
			}
		}
		if setpriv != "" {
			out = append(out, setpriv, "--no-new-privs", "--")
		}
		return append(append(append(out, s.Before...), exe), s.Args...), nil, nil
	}
	out = append(out, rep.Bubblewrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--hostname", "quorum-sandbox", "--cap-drop", "ALL")
	root = root && setpriv != ""
	if root {
		out = append(out, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
	} else {
		// Without root, a user namespace of its own, in which no
		// further one can be made.
		out = append(out, "--unshare-user", "--disable-userns")
	}
	out = append(out, "--unshare-net")
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return fail(err)
			}
			out = append(out, "--symlink", target, d)
		default:
			out = append(out, "--ro-bind", d, d)
		}
	}
	// /tmp is its own, world-writable like a real one, and small: a tmpfs
	// is memory.
	out = append(out, "--proc", "/proc", "--dev", "/dev", "--perms", "01777", "--size", strconv.FormatUint(s.Limits.FileSize, 10), "--tmpfs", "/tmp")
	// The directories above a bound path are made 0755 inside (bubblewrap
	// would copy the host's modes, and the program, as nobody, could not
	// walk a 0700 temporary directory of root's to its own files).
	var bound []string
	made := map[string]bool{}
	parents := func(p string) {
		var up []string
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			up = append(up, d)
		}
		for i := len(up) - 1; i >= 0; i-- {
			if made[up[i]] || shown(up[i], bound) {
				continue
			}
			made[up[i]] = true
			out = append(out, "--perms", "0755", "--dir", up[i])
		}
		bound = append(bound, p)
	}
	for _, f := range etcFiles {
		if _, err := os.Stat(f); err == nil {
			parents(f)
			out = append(out, "--ro-bind", f, f)
		}
	}
	bind := func(flag, p string) error {
		parents(p)
		f, err := os.Open(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%w: %s", ErrUnavailable, p)
			}
			return err
		}
		files = append(files, f)
		out = append(out, flag, strconv.Itoa(2+len(files)), p)
		return nil
	}
	// The program itself (and the one before it), when it lives outside
	// what is shown (an analyzer installed under quorum's data
	// directory).
	ro := append([]string(nil), s.ReadOnly...)
	progs := []string{exe}
	if len(s.Before) > 0 {
		progs = append(progs, s.Before[0])
	}
	for _, exe := range progs {
		real, err := filepath.EvalSymlinks(exe)
		if err != nil {
			return fail(err)
		}
		if !shown(real, ro) {
			ro = append(ro, filepath.Dir(real))
		}
		if dir := filepath.Dir(exe); !shown(exe, ro) && !isLink(dir) {
			ro = append(ro, dir) // the link to it, where it is called by
		}
	}
	for _, p := range ro {
		if shown(p, nil) {
			continue // under /usr
		}
		if err := bind("--ro-bind-fd", p); err != nil {
			return fail(err)
		}
	}
	for _, p := range s.Writable {
		if err := bind("--bind-fd", p); err != nil {
			return fail(err)
		}
	}
	if filter != nil {
		files = append(files, filter)
		out = append(out, "--seccomp", strconv.Itoa(2+len(files)))
	}
	if s.Dir != "" {
		out = append(out, "--chdir", s.Dir)
	}
	out = append(out, "--")
	if root {
		out = append(out, drop...)
	}
	out = append(append(out, s.Before...), exe)
	return append(out, s.Args...), files, nil
}

// isLink reports whether p is a symbolic link (/bin on a merged /usr).
func isLink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// shown reports whether p is under /usr or one of dirs.
func shown(p string, dirs []string) bool {
	for _, d := range append([]string{"/usr"}, dirs...) {
		if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// Run runs s confined, its output going to stdout and stderr, and
// returns what exec returns (an *exec.ExitError for a non-zero exit).
func Run(ctx context.Context, s Spec, stdout, stderr io.Writer) error {
	cmd, release, err := Command(ctx, s)
	if err != nil {
		return err
	}
	defer release()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}
