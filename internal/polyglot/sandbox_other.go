//go:build !linux

package polyglot

import (
	"os/exec"
	"syscall"
)

// canIsolate: network namespaces are Linux's; elsewhere analyzers run
// with the machine's network, and Isolated says so.
const canIsolate = false

func sysProcAttr(bool) *syscall.SysProcAttr { return nil }

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
