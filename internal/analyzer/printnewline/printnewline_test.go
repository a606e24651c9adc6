package printnewline_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/quorum-review/quorum/internal/analyzer/analyzertest"
	"github.com/quorum-review/quorum/internal/analyzer/printnewline"
)

func TestAnalyzer(t *testing.T) {
	analyzertest.RunWithSuggestedFixes(t, analysistest.TestData(), printnewline.Analyzer, "a")
}
