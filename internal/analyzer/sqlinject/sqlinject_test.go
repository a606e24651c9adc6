package sqlinject_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/quorum-review/quorum/internal/analyzer/analyzertest"
	"github.com/quorum-review/quorum/internal/analyzer/sqlinject"
)

func TestAnalyzer(t *testing.T) {
	analyzertest.Run(t, analysistest.TestData(), sqlinject.Analyzer, "a")
}
