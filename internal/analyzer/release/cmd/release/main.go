// Command release runs the release analyzer over packages, for measuring
// it on real code: go run ./internal/analyzer/release/cmd/release ./...
package main

import (
	"github.com/quorum-review/quorum/internal/analyzer/release"
	"golang.org/x/tools/go/analysis/singlechecker"
)

func main() { singlechecker.Main(release.Analyzer) }
