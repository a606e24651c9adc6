// Command droppederror runs the droppederror analyzer over packages, for
// measuring it on real code: go run ./internal/analyzer/droppederror/cmd/droppederror ./...
package main

import (
	"github.com/quorum-review/quorum/internal/analyzer/droppederror"
	"golang.org/x/tools/go/analysis/singlechecker"
)

func main() { singlechecker.Main(droppederror.Analyzer) }
