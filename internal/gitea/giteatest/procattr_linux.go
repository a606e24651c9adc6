package giteatest

import "syscall"

// procAttr has the kernel kill Gitea when the test binary dies without
// reaching Stop (a panic, a -timeout), so no server outlives its tests.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
