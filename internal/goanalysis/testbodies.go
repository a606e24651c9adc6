package goanalysis

import (
	"go/ast"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The test variant of a package is type-checked, and its SSA and
// staticcheck's IR built, over every test file of the package once one
// of them changed. In a large package most of that is test functions of
// files the change did not touch: nats-server's server package has
// 7.9 MB of tests beside 4.4 MB of code, and a review of a one-line test
// change peaked at 3 GB with them (docs/performance.md). A test, a
// benchmark, a fuzz test or an example is called by no code of the
// package (go test calls it), so its body makes no fact another
// function's analysis reads, and no finding is reported in a file the
// change did not touch: in those files such functions are type-checked
// without their bodies. Helpers keep theirs (a printf wrapper's fact is
// read where a changed test calls it).

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
	cut := false
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Body == nil || !testEntry(fd.Name.Name) {
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

// trimmedAt reports whether filename's test bodies were left out: an
// import used only in them is unused there, the one error that leaving
// them out makes.
func (tb *testBodies) trimmedAt(filename string) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.trimmed[filename]
}

// testEntry reports whether a function of that name in a test file is
// one go test calls: Test, Benchmark, Fuzz or Example followed by
// nothing or by a character that is not a lower-case letter (the go
// command's rule), TestMain included.
func testEntry(name string) bool {
	for _, prefix := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if len(name) == len(prefix) {
			return true
		}
		r, _ := utf8.DecodeRuneInString(name[len(prefix):])
		return !unicode.IsLower(r)
	}
	return false
}
