// Command lenguard runs the lenguard analyzer over packages, as go vet
// runs its passes: lenguard ./... in a module prints every report. It is
// how the analyzer is judged on real code (docs/analyzers.md).
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/quorum-review/quorum/internal/analyzer/lenguard"
)

func main() { singlechecker.Main(lenguard.Analyzer) }
