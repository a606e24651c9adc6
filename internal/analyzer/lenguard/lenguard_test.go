package lenguard_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/quorum-review/quorum/internal/analyzer/lenguard"
)

func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), lenguard.Analyzer, "a")
}
