package goanalysis_test

import (
	"context"
	"go/ast"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// TestDependenciesFromExportData: a dependency is held as its export
// data decoded, as far as the repository's code reaches it: no syntax and
// no type information of its own, the whole declarations of a package the
// changed one imports, nothing of one behind it that nothing refers to
// (TestDependenciesOutsideTheRepository sees SA1019 still report the
// standard library's deprecations). The changed package keeps all of its
// own, comments in bodies included.
func TestDependenciesFromExportData(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/comments"),
		"app/app.go": "package app\n\nfunc Nothing() {}\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"app/app.go": `package app

import "strings"

// Upper upper-cases s.
func Upper(s string) string {
	// a comment in a body
	return strings.ToUpper(s)
}
`})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil || p == nil || p.SyntaxOnly != "" {
		t.Fatalf("load: %v %v", p, err)
	}
	byPath := map[string]*packages.Package{}
	packages.Visit(p.Packages, nil, func(pkg *packages.Package) { byPath[pkg.PkgPath] = pkg })
	dep, behind, own := byPath["strings"], byPath["internal/bytealg"], byPath["example.com/comments/app"]
	if dep == nil || behind == nil || own == nil {
		t.Fatalf("strings, internal/bytealg or app not in the graph: %v %v %v", dep, behind, own)
	}
	if dep.Syntax != nil || dep.TypesInfo != nil {
		t.Errorf("strings kept %d files and type information %v", len(dep.Syntax), dep.TypesInfo)
	}
	if dep.Types == nil || dep.Types.Scope().Lookup("ToUpper") == nil || dep.Types.Scope().Lookup("Builder") == nil {
		t.Errorf("strings' declarations were not decoded: %v", dep.Types)
	}
	if n := behind.Types.Scope().Len(); n != 0 {
		t.Errorf("internal/bytealg, which strings' declarations do not name, holds %d objects", n)
	}
	if i := own.TypesInfo; len(i.Types) == 0 || len(i.Uses) == 0 {
		t.Errorf("app lost its own type information: %d types, %d uses", len(i.Types), len(i.Uses))
	}
	if obj := own.TypesInfo.Uses[findIdent(own, "ToUpper")]; obj == nil || obj != dep.Types.Scope().Lookup("ToUpper") {
		t.Errorf("app's strings.ToUpper is %v, not the decoded package's", obj)
	}
	var texts []string
	for _, f := range own.Syntax {
		for _, g := range f.Comments {
			texts = append(texts, g.Text())
		}
	}
	if !strings.Contains(strings.Join(texts, ""), "a comment in a body") {
		t.Errorf("the repository's own comment in a body was dropped: %q", texts)
	}
}

// findIdent returns the first identifier named name in pkg's files.
func findIdent(pkg *packages.Package, name string) *ast.Ident {
	var found *ast.Ident
	for _, f := range pkg.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == name && found == nil {
				found = id
			}
			return found == nil
		})
	}
	return found
}
