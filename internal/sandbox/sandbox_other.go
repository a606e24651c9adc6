//go:build !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// Probe: the namespaces, setpriv and prlimit are Linux's; elsewhere a
// program runs with quorum's user, network and limits, and Probe says so.
func Probe() Report {
	return Report{Layers: []Layer{
		{Name: LayerNamespaces, Why: "not Linux"},
		{Name: LayerUser, Why: "not Linux"},
		{Name: LayerLimits, Why: "not Linux"},
	}}
}

func sysProcAttr(Report, Spec) *syscall.SysProcAttr { return nil }

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
