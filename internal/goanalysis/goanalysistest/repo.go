// Package goanalysistest builds real git repositories holding Go modules
// for the tests of goanalysis and of the specialists built on it.
package goanalysistest

import (
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/goanalysis"
)

// Repo is a real git repository in a temp dir (changetest.Repo).
type Repo = changetest.Repo

// NewRepo returns an empty repository on branch main.
func NewRepo(t testing.TB) *Repo { return changetest.NewRepo(t) }

// Loader returns an offline loader, as the specialists' tests use.
func Loader() *goanalysis.Loader {
	return goanalysis.NewLoader(goanalysis.Config{})
}

// Marked returns the 1-based numbers of the lines of content that end with
// the comment "// "+marker.
func Marked(content, marker string) []int {
	var lines []int
	for i, l := range strings.Split(content, "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), "// "+marker) {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// GoMod is a go.mod for module path at the toolchain's language version.
func GoMod(path string) string {
	return "module " + path + "\n\ngo 1.26\n"
}
