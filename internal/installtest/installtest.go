// Package installtest helps tests that run a program one of the
// repository's install scripts built (scripts/gitea/install,
// scripts/llm/install): where the script is, and a loopback port for the
// program to listen on.
package installtest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Root is the nearest directory above the working directory (a test's
// package) that holds script, a path from the repository's root such as
// "scripts/gitea/install".
func Root(script string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, script)); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s above %s: run the tests from inside the quorum repository", script, dir)
		}
	}
}

// FreePort is a loopback port nothing listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
