package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// TestReadmeReviewExitStatuses: the README's section on quorum review
// runs the built binary, not go run, which reports every non-zero exit
// status as 1, and lists each status the command exits with.
func TestReadmeReviewExitStatuses(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Reviewing a local repository\n")
	if !ok {
		t.Fatal("README.md has no section \"Reviewing a local repository\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "go run ") {
			t.Errorf("README.md runs quorum review with go run, which loses its exit status: %s", line)
		}
	}
	for _, err := range []error{nil, verdictError{}, usageError{errors.New("x")}, incompleteError{}} {
		if item := fmt.Sprintf("\n- %d: ", exitCode(err, io.Discard)); !strings.Contains(section, item) {
			t.Errorf("README.md's review section does not list exit status %q", strings.TrimSpace(item))
		}
	}
}
