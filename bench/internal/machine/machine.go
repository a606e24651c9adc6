// Package machine describes the machine a benchmark runs on, for its
// report: the benchmarks' figures depend on how loaded it was.
package machine

import (
	"os"
	"strings"
)

// LoadAvg returns the 1, 5 and 15 minute load averages as /proc/loadavg
// gives them ("1.64 3.69 7.18"), or "unknown".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
