package goanalysis_test

import (
	"context"
	"go/ast"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// TestDependenciesSlimmed: of a dependency, the loader keeps the comments
// attached to declarations (deprecations are read from them), not those
// that stood in the function bodies it trims, and of its type information
// only the objects its declarations define (what the deprecation facts
// look up; TestDependenciesOutsideTheRepository sees SA1019 still report
// the standard library's). The changed package keeps all of its own.
func TestDependenciesSlimmed(t *testing.T) {
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
	var dep, own *packages.Package
	packages.Visit(p.Packages, nil, func(pkg *packages.Package) {
		switch pkg.PkgPath {
		case "strings":
			dep = pkg
		case "example.com/comments/app":
			own = pkg
		}
	})
	if dep == nil || own == nil {
		t.Fatalf("strings or app not loaded: %v %v", dep, own)
	}
	if i := dep.TypesInfo; len(i.Types)+len(i.Uses)+len(i.Selections)+len(i.Scopes)+len(i.Implicits) != 0 || len(i.Defs) == 0 {
		t.Errorf("strings: %d types, %d uses, %d selections, %d scopes, %d implicits, %d defs; want defs only",
			len(i.Types), len(i.Uses), len(i.Selections), len(i.Scopes), len(i.Implicits), len(i.Defs))
	}
	if i := own.TypesInfo; len(i.Types) == 0 || len(i.Uses) == 0 {
		t.Errorf("app lost its own type information: %d types, %d uses", len(i.Types), len(i.Uses))
	}
	docs := 0
	for _, f := range dep.Syntax {
		attached := map[*ast.CommentGroup]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.CommentGroup); ok {
				attached[g] = true
			}
			return true
		})
		for _, g := range f.Comments {
			if !attached[g] {
				t.Errorf("%s: a comment attached to nothing kept: %q", dep.Fset.Position(g.Pos()), g.Text())
			}
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "ToUpper" && fd.Doc != nil && strings.Contains(fd.Doc.Text(), "ToUpper returns") {
				docs++
			}
		}
	}
	if docs != 1 {
		t.Errorf("strings.ToUpper's doc comment found %d times, want 1", docs)
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
