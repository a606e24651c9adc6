package analyzertest_test

import (
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"

	"github.com/quorum-review/quorum/internal/analyzer/analyzertest"
)

// shout reports every identifier named X.
var shout = &analysis.Analyzer{
	Name: "shout",
	Doc:  "reports X",
	Run: func(pass *analysis.Pass) (any, error) {
		for _, f := range pass.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == "X" {
					pass.Reportf(id.Pos(), "found X in %s", pass.Pkg.Name())
				}
				return true
			})
		}
		return nil, nil
	},
}

// recorder is a TB that keeps what Run reports.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.errs = append(r.errs, "FATAL "+fmt.Sprintf(format, a...))
}
func (r *recorder) Failed() bool { return len(r.errs) > 0 }

// Run fails for a diagnostic no comment wants, for a comment no
// diagnostic matches, and for one that matches another's message, and
// passes where each want has its diagnostic, on a line that imports a
// package of the standard library from export data.
func TestRunChecksEveryExpectation(t *testing.T) {
	dir := t.TempDir()
	src := "package a\n\nimport \"net/http\"\n\n" +
		"var X = http.StatusOK // want `found X in a`\n" + // 5: matched
		"var Y = X\n" + // 6: unexpected
		"var Z = 1 // want \"found\"\n" + // 7: missing
		"func F() int { X := 2; return X } // want `found Y` `found X`\n" // 8: one wrong, and one X unwanted
	if err := os.MkdirAll(filepath.Join(dir, "src", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "a", "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	analyzertest.Run(r, dir, shout, "a")
	slices.Sort(r.errs)
	want := []string{
		"a: a.go:6: unexpected diagnostic: found X in a",
		"a: a.go:7: no diagnostic was reported matching `found`",
		"a: a.go:8: no diagnostic was reported matching `found Y`",
		"a: a.go:8: unexpected diagnostic: found X in a",
	}
	if !slices.Equal(r.errs, want) {
		t.Errorf("Run reported\n%s\nwant\n%s", strings.Join(r.errs, "\n"), strings.Join(want, "\n"))
	}

	ok := "package a\n\nimport \"net/http\"\n\nvar X = http.StatusOK // want `found X in a`\n" +
		"var W = X /* want \"found X\" */\n"
	if err := os.WriteFile(filepath.Join(dir, "src", "a", "a.go"), []byte(ok), 0o644); err != nil {
		t.Fatal(err)
	}
	r = &recorder{}
	analyzertest.Run(r, dir, shout, "a")
	if len(r.errs) > 0 {
		t.Errorf("Run failed data that meets its expectations: %q", r.errs)
	}
}

// An analyzer whose imports must be analysed (it, or one it requires,
// has facts) is refused, not checked without them.
func TestRunRefusesAnalyzersWithFacts(t *testing.T) {
	type fact struct{ analysis.Fact }
	withFacts := &analysis.Analyzer{Name: "withfacts", Doc: "has facts", FactTypes: []analysis.Fact{new(fact)}, Run: shout.Run}
	requiring := &analysis.Analyzer{Name: "requiring", Doc: "requires one with facts", Requires: []*analysis.Analyzer{withFacts}, Run: shout.Run}
	for _, a := range []*analysis.Analyzer{withFacts, requiring} {
		r := &recorder{}
		analyzertest.Run(r, t.TempDir(), a, "a")
		if len(r.errs) != 1 || !strings.Contains(r.errs[0], "FATAL "+a.Name+" has facts") {
			t.Errorf("%s: Run reported %q, want it refused", a.Name, r.errs)
		}
	}
}
