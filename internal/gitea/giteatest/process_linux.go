package giteatest

import (
	"errors"
	"syscall"
)

// procAttr has the kernel kill Gitea when the test binary dies without
// reaching Stop (a panic, a -timeout), so no server outlives its tests.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processGone reports whether no process has the pid, so what a test
// binary of that pid left behind may be removed.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
