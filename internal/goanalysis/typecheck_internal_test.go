package goanalysis

import (
	"context"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// A dependency a cancelled load never checked has no summary: the
// repository's package importing it gets an error, not a panic in the
// type checker's goroutine, which would end the service.
func TestImportOfAnUncheckedDependency(t *testing.T) {
	dep := &packages.Package{ID: "example.com/dep", PkgPath: "example.com/dep", Name: "dep"}
	root := &packages.Package{ID: "example.com/app", PkgPath: "example.com/app", Name: "app", Imports: map[string]*packages.Package{"example.com/dep": dep}}
	tc := &typeChecker{fset: token.NewFileSet(), shared: map[string]*types.Package{}, nodes: map[*packages.Package]*node{
		dep:  {p: dep, kind: fromExport},
		root: {p: root, kind: fromSource},
	}}
	_, err := tc.importer(tc.nodes[root])("example.com/dep")
	if err == nil || !strings.Contains(err.Error(), "was not type-checked") {
		t.Errorf("import of a dependency never checked: %v", err)
	}
}

// A file of the repository whose parsing panics is an error of every
// variant of its package that has it, not a file silently missing from
// the variants that asked after the first.
func TestParsePanicIsEveryVariantsError(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("package p\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "a.go")
	plain := &packages.Package{ID: "example.com/p", PkgPath: "example.com/p", Name: "p", CompiledGoFiles: []string{file}, Imports: map[string]*packages.Package{}}
	variant := &packages.Package{ID: "example.com/p [example.com/p.test]", PkgPath: "example.com/p", Name: "p", ForTest: "example.com/p", CompiledGoFiles: []string{file}, Imports: map[string]*packages.Package{}}
	parse := func(*token.FileSet, string, []byte) (*ast.File, error) { panic("boom") }
	checkTypes(context.Background(), []*packages.Package{plain, variant}, []*packages.Package{plain, variant}, root, nil, parse, nil)
	for _, p := range []*packages.Package{plain, variant} {
		if !p.IllTyped || len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Msg, "panicked") || p.Errors[0].Kind != packages.ParseError {
			t.Errorf("%s: ill-typed %v, errors %v; want the parser's panic as a parse error", p.ID, p.IllTyped, p.Errors)
		}
	}
}
