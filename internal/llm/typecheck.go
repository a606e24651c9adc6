package llm

import (
	"context"
	"go/ast"
	"go/token"
	"go/types"
	"time"
)

// The pull request writes the package the prompt's context type-checks,
// and go/types, which cannot be stopped once started, has inputs whose
// cost does not follow their size: a kilobyte of struct types that embed
// each other in a diamond takes it exponential time (its validType walks
// every path through by-value components), and a few lines of string
// constants that each concatenate the one before twice make it hold
// gigabytes once a length or a comparison needs their value. Those two are
// measured on the syntax before the checker runs; anything else slow is
// cut off by maxTypeCheck, after which the checker's goroutine is left to
// finish on its own.

const (
	// maxTypePaths bounds the paths through by-value type components
	// (struct fields, array elements, type arguments) summed over the
	// package's type declarations. Real packages have a few thousand.
	maxTypePaths = 1 << 16
	// maxConstString bounds the length a string constant can reach.
	maxConstString = 1 << 20
	// maxTypeCheck is how long the checker may run for one package.
	maxTypeCheck = 5 * time.Second
)

// typeCheck runs conf.Check on files, and reports whether it finished:
// false when the files are over the bounds above, when the checker
// panicked (a checker bug the pull request trips must cost the section,
// not the review), or when it took longer than maxTypeCheck or ctx.
func typeCheck(ctx context.Context, conf types.Config, dir string, fset *token.FileSet, files []*ast.File, info *types.Info) bool {
	if typePaths(files) > maxTypePaths || constStringBound(files) > maxConstString {
		return false
	}
	done := make(chan bool, 1)
	go func() {
		ok := false
		defer func() {
			_ = recover()
			done <- ok
		}()
		_, _ = conf.Check(dir, fset, files, info)
		ok = true
	}()
	timer := time.NewTimer(maxTypeCheck)
	defer timer.Stop()
	select {
	case ok := <-done:
		return ok
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

// saturatingAdd adds without passing limit, so that counts of paths
// cannot overflow.
func saturatingAdd(a, b, limit int) int {
	if a+b > limit || a+b < 0 {
		return limit + 1
	}
	return a + b
}

// typePaths counts, over the package's type declarations, the paths from
// each through the package's named types it holds by value, as validType
// walks them: a field of type T is one, a *T, []T, map or func is not.
// Names are matched by spelling, over-counting a shadowed one at worst.
func typePaths(files []*ast.File) int {
	edges := map[string][]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				edges[ts.Name.Name] = append(edges[ts.Name.Name], byValueNames(ts.Type)...)
			}
		}
	}
	const limit = maxTypePaths
	memo := map[string]int{}
	var paths func(name string) int
	paths = func(name string) int {
		if n, ok := memo[name]; ok {
			return n
		}
		memo[name] = 1 // a cycle counts once; go/types reports it
		n := 1
		for _, to := range edges[name] {
			if _, ok := edges[to]; ok {
				n = saturatingAdd(n, paths(to), limit)
			}
		}
		memo[name] = n
		return n
	}
	total := 0
	for name := range edges {
		total = saturatingAdd(total, paths(name), limit)
	}
	return total
}

// byValueNames lists the names a type expression holds by value.
func byValueNames(e ast.Expr) []string {
	var out []string
	var walk func(ast.Expr)
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			out = append(out, e.Name)
		case *ast.ParenExpr:
			walk(e.X)
		case *ast.StructType:
			for _, f := range e.Fields.List {
				// Each name of "a, b T" is a path of its own.
				for range max(1, len(f.Names)) {
					walk(f.Type)
				}
			}
		case *ast.ArrayType:
			if e.Len != nil {
				walk(e.Elt)
			}
		case *ast.IndexExpr:
			walk(e.X)
			walk(e.Index)
		case *ast.IndexListExpr:
			walk(e.X)
			for _, x := range e.Indices {
				walk(x)
			}
		}
	}
	walk(e)
	return out
}

// constStringBound bounds the length of the longest string constant the
// files declare, anywhere: a string literal is its length, a name the
// bound of the constants of that name, and other expressions the sum of
// their parts'.
func constStringBound(files []*ast.File) int {
	exprs := map[string][]ast.Expr{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			gd, ok := n.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				return true
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						exprs[name.Name] = append(exprs[name.Name], vs.Values[i])
					}
				}
			}
			return true
		})
	}
	const limit = maxConstString
	memo := map[string]int{}
	var bound func(name string) int
	var size func(e ast.Expr) int
	bound = func(name string) int {
		if n, ok := memo[name]; ok {
			return n
		}
		memo[name] = 0 // a cycle adds nothing; go/types reports it
		n := 0
		for _, e := range exprs[name] {
			n = max(n, size(e))
		}
		memo[name] = n
		return n
	}
	size = func(e ast.Expr) int {
		n := 0
		ast.Inspect(e, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.BasicLit:
				if x.Kind == token.STRING {
					n = saturatingAdd(n, len(x.Value), limit)
				}
			case *ast.Ident:
				if _, ok := exprs[x.Name]; ok {
					n = saturatingAdd(n, bound(x.Name), limit)
				}
			}
			return true
		})
		return n
	}
	longest := 0
	for name := range exprs {
		longest = max(longest, bound(name))
	}
	return longest
}
