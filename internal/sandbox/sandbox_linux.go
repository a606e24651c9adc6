package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	probeOnce sync.Once
	probed    Report
)

// Probe finds out, once, which layers this machine gives: it runs true
// confined as a program would be, with bubblewrap, then without. Each
// call (Command and Script make one) first marks close-on-exec the
// descriptors quorum holds without it (closeInherited).
func Probe() Report {
	closeInherited()
	probeOnce.Do(func() { probed = probe() })
	return probed
}

// closeInherited marks close-on-exec every descriptor above stderr that
// quorum holds without it: Go marks the ones it opens, not the ones its
// parent left open (a socket, a pipe, a directory) or a C library opened
// without O_CLOEXEC, and neither bubblewrap nor setpriv closes them, so
// they would reach every confined program, a directory's being the
// host's file system from there up. The
// descriptors a run passes (its bound paths) are dup'ed onto 3, 4, …
// without the flag, and so still pass.
func closeInherited() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

func probe() Report {
	var rep Report
	user := Layer{Name: LayerUser, On: true}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			user = Layer{Name: LayerUser, Why: "quorum runs as root and util-linux's setpriv is not on PATH"}
		}
	}
	limits := Layer{Name: LayerLimits, On: true}
	if _, err := exec.LookPath("prlimit"); err != nil {
		limits = Layer{Name: LayerLimits, Why: "util-linux's prlimit is not on PATH"}
	}
	ns := Layer{Name: LayerNamespaces}
	if bwrap, err := exec.LookPath("bwrap"); err != nil {
		ns.Why = "bubblewrap (bwrap) is not installed: install Debian's bubblewrap"
	} else {
		rep.Bubblewrap = bwrap
		if err := try(rep); err != nil {
			rep.Bubblewrap = ""
			ns.Why = "bubblewrap cannot start a sandbox here (are user namespaces off? sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, or an AppArmor restriction on unprivileged user namespaces): " + err.Error()
		} else {
			ns.On = true
		}
	}
	rep.Layers = append(rep.Layers, ns)
	filter := Layer{Name: LayerSeccomp}
	switch {
	case !ns.On:
		filter.Why = "bubblewrap loads it, and does not run here"
	case seccompProgram() == nil:
		filter.Why = "no filter is written for this architecture"
	default:
		rep.seccomp = true
		if err := try(rep); err != nil {
			rep.seccomp = false
			filter.Why = "the kernel refused it: " + err.Error()
		} else {
			filter.On = true
		}
	}
	rep.Layers = append(rep.Layers, filter)
	if !ns.On {
		// Without bubblewrap, a network namespace of quorum's own.
		net := Layer{Name: LayerNetwork}
		rep.Layers = append(rep.Layers, net)
		if err := try(rep); err != nil {
			rep.Layers[len(rep.Layers)-1].Why = "the kernel refuses one: " + err.Error()
		} else {
			rep.Layers[len(rep.Layers)-1].On = true
		}
	}
	if os.Geteuid() == 0 && !ns.On && user.On {
		user = Layer{Name: LayerUser, Why: "quorum runs as root, and without bubblewrap to show them, nobody could not reach root's analyzers and module cache"}
	}
	rep.Layers = append(rep.Layers, user, limits, Layer{Name: LayerGroup, On: true})
	return rep
}

// try runs true as rep says.
func try(rep Report) error {
	exe, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	s := Spec{Exe: exe, Limits: DefaultLimits, Env: []string{"PATH=/usr/bin:/bin"}}
	filter, err := seccompPipe(rep)
	if err != nil {
		return err
	}
	args, files, err := argv(rep, s, exe, filter, false)
	if err != nil {
		return err
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = s.Env
	cmd.ExtraFiles = files
	cmd.SysProcAttr = sysProcAttr(rep, s)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

// sysProcAttr puts the program in a process group of its own, killed
// when quorum dies, and, where bubblewrap is not there to, in a network
// namespace of its own if the probe found the kernel gives one.
func sysProcAttr(rep Report, s Spec) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if rep.Bubblewrap != "" || !netOn(rep) {
		return a
	}
	a.Cloneflags = syscall.CLONE_NEWNET
	if os.Geteuid() != 0 {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
	}
	return a
}

// netOn reports whether the fallback's network namespace is on (or being
// tried by the probe).
func netOn(rep Report) bool {
	for _, l := range rep.Layers {
		if l.Name == LayerNetwork {
			return l.On || l.Why == ""
		}
	}
	return false
}

// killGroup kills the program and everything it started (bubblewrap's
// PID namespace goes with it).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
