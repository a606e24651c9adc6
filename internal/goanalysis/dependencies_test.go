package goanalysis_test

import (
	"context"
	"fmt"
	"go/ast"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/goanalysis"

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

// TestDeprecationsOfAModule: a module's deprecations reach SA1019 though
// the module is held as export data, which carries no comments: a
// deprecated function of the package the change imports, and a deprecated
// method and field of a type of a package behind it, which the change
// reaches only through the first one's declarations.
func TestDeprecationsOfAModule(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, goanalysistest.Module{Path: "corp.example/lib", Version: "v1.0.0", Files: map[string]string{
		"lib.go": `package lib

import "corp.example/lib/inner"

// Old is old.
//
// Deprecated: use New.
func Old() int { return 1 }

// New makes a T.
func New() *inner.T { return &inner.T{} }
`,
		"inner/inner.go": `package inner

// T is a thing.
type T struct {
	// Count counts.
	//
	// Deprecated: always zero.
	Count int
}

// Legacy does nothing.
//
// Deprecated: do nothing yourself.
func (*T) Legacy() {}

// Current does nothing either.
func (*T) Current() {}
`,
	}})
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": requireLine("corp.example/lib v1.0.0"), "app/app.go": "package app\n\nfunc A() int { return 1 }\n"})
	base := r.Commit("base")
	app := `package app

import "corp.example/lib"

func A() int {
	t := lib.New()
	t.Legacy() // method
	t.Current()
	return lib.Old() + t.Count // function and field
}
`
	r.Write(map[string]string{"app/app.go": app})
	c := r.Change(base, r.Commit("head"))
	got := sa1019(t, loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir()}, c))
	method, both := goanalysistest.Marked(app, "method")[0], goanalysistest.Marked(app, "function and field")[0]
	want := []string{
		fmt.Sprintf("%d: (*corp.example/lib/inner.T).Legacy is deprecated: do nothing yourself.", method),
		fmt.Sprintf("%d: (corp.example/lib/inner.T).Count is deprecated: always zero.", both),
		fmt.Sprintf("%d: corp.example/lib.Old is deprecated: use New.", both),
	}
	if !slices.Equal(got, want) {
		t.Errorf("SA1019 found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
