package goanalysis

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"
)

// maxExpansion bounds how many fields and elements one type of a changed
// package may expand to, counted through nested structs and arrays. Some
// analyzers walk a type's fields recursively without memory (copylocks
// looking for a lock; sizes and layouts), so a few lines of nested
// generic types (P1[T] holds two P0[T], P2[T] two P1[T], … P39) make them
// run for hours. Real code stays far below: the largest standard-library
// structs expand to a few hundred.
const maxExpansion = 1 << 16

// pathological says why a package's types are too large to analyse, or "".
// It counts each type's expansion once (memoized), so the check itself is
// linear in the number of distinct types.
func pathological(pkg *packages.Package) string {
	if pkg.TypesInfo == nil {
		return ""
	}
	e := expansion{memo: &typeutil.Map{}, busy: map[types.Type]bool{}}
	check := func(t types.Type) string {
		if t == nil {
			return ""
		}
		if n := e.size(t); n > maxExpansion {
			return fmt.Sprintf("its type %s expands to more than %d fields and elements, past what the analyzers are given", types.TypeString(t, types.RelativeTo(pkg.Types)), maxExpansion)
		}
		return ""
	}
	for _, obj := range pkg.TypesInfo.Defs {
		if obj == nil {
			continue
		}
		if why := check(obj.Type()); why != "" {
			return why
		}
	}
	for _, tv := range pkg.TypesInfo.Types {
		if why := check(tv.Type); why != "" {
			return why
		}
	}
	return ""
}

// expansion counts the fields and elements of types, saturating past
// maxExpansion.
type expansion struct {
	memo *typeutil.Map
	busy map[types.Type]bool
}

func (e expansion) size(t types.Type) int {
	if n, ok := e.memo.At(t).(int); ok {
		return n
	}
	if e.busy[t] {
		return 1 // a recursive type expands through pointers only
	}
	e.busy[t] = true
	defer delete(e.busy, t)
	n := 1
	switch u := t.Underlying().(type) {
	case *types.Struct:
		for i := range u.NumFields() {
			n += e.size(u.Field(i).Type())
			if n > maxExpansion {
				break
			}
		}
	case *types.Array:
		n += e.size(u.Elem())
	}
	n = min(n, maxExpansion+1)
	e.memo.Set(t, n)
	return n
}

// explosive says, for each directory of Go files (byDir) whose declared
// types are too large to type-check, by their syntax alone, why. The type
// checker itself expands instances of generic types without memory when
// it validates them, so 40 lines of nested generic types (P1[T] holds two
// P0[T], … P39) keep it busy for hours, in-process, where no deadline can
// stop it: such a package must be caught before it is loaded. Each
// declared type's fields and array elements are counted through the
// declarations of its package and of the packages of the tree it imports
// (imports maps a directory's import paths to directories), memoized
// across all of them, an instance as its generic type times its type
// arguments: nested types split over packages (P0–P13 in a, P14–P27 in b
// importing a, …) add up as they do in the type checker. It returns, for
// each such directory, the type expressions of all its declarations past
// the bound too: with those alone made small, the package can be given
// to the type checker.
func explosive(byDir map[string][]*ast.File, imports map[string]map[string]string) (map[string]string, map[string][]overType) {
	names := map[string]string{}
	for dir, files := range byDir {
		for _, f := range files {
			if !strings.HasSuffix(f.Name.Name, "_test") {
				names[dir] = f.Name.Name
			}
		}
	}
	s := syntaxExpansion{decls: map[typeKey]typeDecl{}, memo: map[typeKey]int{}, busy: map[typeKey]bool{}}
	for dir, files := range byDir {
		for _, f := range files {
			sc := &fileScope{dir: dir, imported: map[string]string{}}
			for _, spec := range f.Imports {
				ip, err := strconv.Unquote(spec.Path.Value)
				to, ok := imports[dir][ip]
				if err != nil || !ok {
					continue
				}
				name := cmp.Or(names[to], path.Base(ip))
				if spec.Name != nil {
					name = spec.Name.Name
				}
				switch name {
				case "_":
				case ".":
					sc.dots = append(sc.dots, to)
				default:
					sc.imported[name] = to
				}
			}
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, spec := range gd.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						s.decls[typeKey{dir, ts.Name.Name}] = typeDecl{expr: ts.Type, scope: sc}
					}
				}
			}
		}
	}
	out := map[string]string{}
	over := map[string][]overType{}
	keys := slices.SortedFunc(maps.Keys(s.decls), func(a, b typeKey) int {
		return cmp.Or(strings.Compare(a.dir, b.dir), strings.Compare(a.name, b.name))
	})
	for _, k := range keys {
		if n := s.named(k); n > maxExpansion {
			over[k.dir] = append(over[k.dir], overType{k.name, s.decls[k].expr})
			if _, ok := out[k.dir]; !ok {
				out[k.dir] = fmt.Sprintf("its type %s expands to more than %d fields and elements, past what the type checker is given", k.name, maxExpansion)
			}
		}
	}
	return out, over
}

// overType is a declared type past the bound: its name and its type
// expression.
type overType struct {
	name string
	expr ast.Expr
}

// typeKey names a declared type: its package's directory and its name.
type typeKey struct{ dir, name string }

// typeDecl is a type's declaration and the scope of the file declaring it.
type typeDecl struct {
	expr  ast.Expr
	scope *fileScope
}

// fileScope is what a file's type expressions may name besides its own
// package's types: the packages of the tree it imports, by the name it
// gives them, and those it imports with a dot.
type fileScope struct {
	dir      string
	imported map[string]string
	dots     []string
}

// syntaxExpansion counts what declared types expand to, saturating past
// maxExpansion.
type syntaxExpansion struct {
	decls map[typeKey]typeDecl
	memo  map[typeKey]int
	busy  map[typeKey]bool
}

func (s syntaxExpansion) named(k typeKey) int {
	if n, ok := s.memo[k]; ok {
		return n
	}
	if s.busy[k] {
		return 1
	}
	s.busy[k] = true
	defer delete(s.busy, k)
	d := s.decls[k]
	n := min(s.expr(d.expr, d.scope), maxExpansion+1)
	s.memo[k] = n
	return n
}

// lookup returns the declared type a name in a file's scope stands for.
func (s syntaxExpansion) lookup(sc *fileScope, name string) (typeKey, bool) {
	for _, dir := range append([]string{sc.dir}, sc.dots...) {
		if _, ok := s.decls[typeKey{dir, name}]; ok {
			return typeKey{dir, name}, true
		}
	}
	return typeKey{}, false
}

func (s syntaxExpansion) expr(e ast.Expr, sc *fileScope) int {
	sat := func(n int) int { return min(n, maxExpansion+1) }
	switch e := e.(type) {
	case *ast.Ident:
		if k, ok := s.lookup(sc, e.Name); ok {
			return s.named(k)
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			k := typeKey{sc.imported[x.Name], e.Sel.Name}
			if _, ok := s.decls[k]; ok && k.dir != "" {
				return s.named(k)
			}
		}
	case *ast.ParenExpr:
		return s.expr(e.X, sc)
	case *ast.StructType:
		n := 1
		for _, f := range e.Fields.List {
			n = sat(n + max(1, len(f.Names))*s.expr(f.Type, sc))
		}
		return n
	case *ast.ArrayType:
		if e.Len != nil {
			return sat(1 + s.expr(e.Elt, sc))
		}
	case *ast.IndexExpr:
		return sat(s.expr(e.X, sc) * max(1, s.expr(e.Index, sc)))
	case *ast.IndexListExpr:
		args := 0
		for _, a := range e.Indices {
			args = sat(args + s.expr(a, sc))
		}
		return sat(s.expr(e.X, sc) * max(1, args))
	}
	return 1
}
