//go:build !linux

package giteatest

import "syscall"

// procAttr is empty where there is no parent-death signal: a test binary
// that dies without reaching Stop leaves its Gitea running.
func procAttr() *syscall.SysProcAttr { return nil }

// processGone never says a process is gone here, so nothing is swept.
func processGone(pid int) bool { return false }
