// Command weakhash runs the weakhash analyzer over packages, for
// measuring it on real code: go run ./internal/analyzer/weakhash/cmd/weakhash ./...
package main

import (
	"github.com/quorum-review/quorum/internal/analyzer/weakhash"
	"golang.org/x/tools/go/analysis/singlechecker"
)

func main() { singlechecker.Main(weakhash.Analyzer) }
