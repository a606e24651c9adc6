package goanalysis

import (
	"go/ast"
	"go/types"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/tools/go/packages"
)

// The test variant of a package is type-checked, and its SSA and
// staticcheck's IR built, over every test file of the package once one
// of them changed. In a large package most of that is test functions of
// files the change did not touch: nats-server's server package has
// 7.9 MB of tests beside 4.4 MB of code, and a review of a one-line test
// change peaked at 3 GB with them (docs/performance.md). A test, a
// benchmark, a fuzz test or an example, with the signature go test
// calls (goTestCalls), is called by no code of the package as a rule, so
// its body makes no fact another function's analysis reads, and no
// finding is reported in a file the change did not touch: in those files
// such functions are type-checked without their bodies. Helpers keep
// theirs (a printf wrapper's fact is read where a changed test calls it).

// testBodies trims the bodies of the test entry points of the unchanged
// test files of one load, and remembers which files it trimmed.
type testBodies struct {
	// changed are the absolute names of the files the change touches.
	changed map[string]bool
	mu      sync.Mutex
	trimmed map[string]bool
}

// trim leaves out the bodies of f's test entry points when filename is
// a test file the change did not touch.
func (tb *testBodies) trim(filename string, f *ast.File) {
	if !strings.HasSuffix(filename, "_test.go") || tb.changed[filename] {
		return
	}
	testing := testingName(f)
	cut := false
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || !goTestCalls(fd, testing) {
			continue
		}
		fd.Body = nil
		cut = true
	}
	if !cut {
		return
	}
	// The comments that stood in those bodies are attached to nothing.
	dropLooseComments(f)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.trimmed == nil {
		tb.trimmed = map[string]bool{}
	}
	tb.trimmed[filename] = true
}

// forgive drops from p's errors those that leaving bodies out made: in
// a file whose test functions' bodies were left out, an import used only
// in them is unused, and that error is not the repository's. go/packages
// names an error's position as //line directives say, so a type error is
// matched by that and its message: as many times as one was made, and
// never when an error the repository made has the same (a changed file's
// //line may point its own unused import there).
func (tb *testBodies) forgive(p *packages.Package) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.trimmed) == 0 {
		return
	}
	made, kept := map[[2]string]int{}, map[[2]string]bool{}
	p.TypeErrors = slices.DeleteFunc(p.TypeErrors, func(e types.Error) bool {
		k := [2]string{e.Fset.Position(e.Pos).String(), e.Msg}
		if unusedImport(e.Msg) && tb.trimmed[e.Fset.PositionFor(e.Pos, false).Filename] {
			made[k]++
			return true
		}
		kept[k] = true
		return false
	})
	p.Errors = slices.DeleteFunc(p.Errors, func(e packages.Error) bool {
		k := [2]string{e.Pos, e.Msg}
		if e.Kind != packages.TypeError || made[k] == 0 || kept[k] {
			return false
		}
		made[k]--
		return true
	})
}

// goTestCalls reports whether go test calls fd, and nothing else does
// as a rule: a function (not a method, not generic) named Test,
// Benchmark or Fuzz followed by nothing or by a character that is not a
// lower-case letter (the go command's rule) that takes one *testing.T,
// *testing.B or *testing.F; TestMain taking one *testing.M; or an Example
// of that naming with no parameters and no results. testing is the name
// the file imports package testing under ("" when it does not). A
// function of such a name with another signature is an ordinary
// function, and keeps its body: a printf wrapper named Example_sprintf
// still makes its fact.
func goTestCalls(fd *ast.FuncDecl, testing string) bool {
	if fd.Recv != nil || fd.Type.TypeParams != nil {
		return false
	}
	name, params, results := fd.Name.Name, fd.Type.Params.List, fd.Type.Results
	if named(name, "Example") {
		return len(params) == 0 && (results == nil || len(results.List) == 0)
	}
	if results != nil && len(results.List) > 0 || len(params) != 1 || len(params[0].Names) > 1 || testing == "" {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != testing {
		return false
	}
	switch {
	case name == "TestMain":
		return sel.Sel.Name == "M"
	case named(name, "Test"):
		return sel.Sel.Name == "T"
	case named(name, "Benchmark"):
		return sel.Sel.Name == "B"
	case named(name, "Fuzz"):
		return sel.Sel.Name == "F"
	}
	return false
}

// named reports whether name is prefix followed by nothing or by a
// character that is not a lower-case letter.
func named(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	if len(name) == len(prefix) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(name[len(prefix):])
	return !unicode.IsLower(r)
}

// testingName returns the name f imports package testing under, or ""
// when it does not import it (or imports it blank or with a dot).
func testingName(f *ast.File) string {
	for _, imp := range f.Imports {
		if imp.Path.Value != `"testing"` {
			continue
		}
		if imp.Name == nil {
			return "testing"
		}
		if imp.Name.Name != "_" && imp.Name.Name != "." {
			return imp.Name.Name
		}
	}
	return ""
}
