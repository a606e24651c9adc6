package polyglot

import (
	"os"
	"os/exec"
	"syscall"
)

// canIsolate: Linux gives a process a network namespace of its own.
const canIsolate = true

// sysProcAttr puts the analyzer in a process group of its own, killed
// with quorum, and, isolated, in a network namespace of its own with
// nothing in it but a loopback that is down. Without root the namespace
// needs a user namespace, mapping the user to itself.
func sysProcAttr(isolate bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if !isolate {
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

// killGroup kills the analyzer and everything it started.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
