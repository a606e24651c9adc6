//go:build linux && !amd64 && !arm64

package sandbox

// No filter is written for this architecture: Probe says so.
const (
	auditArch = 0
	x32Bit    = 0
)
