package goanalysis

import (
	"go/token"
	"go/types"
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
