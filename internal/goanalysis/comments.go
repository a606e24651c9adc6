package goanalysis

import "go/ast"

// dropLooseComments keeps, of a dependency's comments, those attached to
// a declaration, a specification or a field (their doc and line
// comments, where deprecations are read from) and drops the rest: once
// trim has removed the function bodies, the comments that stood in them
// are attached to nothing and read by no analyzer.
func dropLooseComments(f *ast.File) {
	attached := map[*ast.CommentGroup]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if g, ok := n.(*ast.CommentGroup); ok {
			attached[g] = true
			return false
		}
		return true
	})
	kept := f.Comments[:0]
	for _, g := range f.Comments {
		if attached[g] {
			kept = append(kept, g)
		}
	}
	clear(f.Comments[len(kept):])
	f.Comments = kept
}
