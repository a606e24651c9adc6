package main

import (
	"errors"
	"testing"
)

// TestReviewBudget: the flag wins; else the cgroup v2 limit of the
// process' own cgroup; else three quarters of MemTotal.
func TestReviewBudget(t *testing.T) {
	t.Parallel()
	files := func(m map[string]string) func(string) []byte {
		return func(p string) []byte {
			if v, ok := m[p]; ok {
				return []byte(v)
			}
			return nil
		}
	}
	meminfo := "MemTotal:       8388608 kB\n"
	for _, tc := range []struct {
		name  string
		flag  string
		files map[string]string
		want  int64
	}{
		{"flag", "1.5GiB", map[string]string{"/proc/meminfo": meminfo}, 3 << 29},
		{"systemd unit's MemoryMax", "", map[string]string{
			"/proc/self/cgroup": "0::/system.slice/quorum.service\n",
			"/sys/fs/cgroup/system.slice/quorum.service/memory.max": "4294967296\n",
			"/proc/meminfo": meminfo,
		}, 3 << 30},
		{"container", "", map[string]string{"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "2147483648\n", "/proc/meminfo": meminfo}, 3 << 29},
		{"no limit", "", map[string]string{"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "max\n", "/proc/meminfo": meminfo}, 6 << 30},
		{"cgroup v1", "", map[string]string{"/proc/self/cgroup": "4:memory:/x\n", "/proc/meminfo": meminfo}, 6 << 30},
	} {
		got, err := reviewBudget(tc.flag, files(tc.files))
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	if _, err := reviewBudget("", files(nil)); err == nil || errors.As(err, new(usageError)) {
		t.Errorf("nothing readable: err = %v, want an error that is not a usage error", err)
	}
}
