package goanalysis

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"slices"

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

// explosive says why the Go files of one package, by their syntax alone,
// declare types too large to type-check, or "". The type checker itself
// expands instances of generic types without memory when it validates
// them, so 40 lines of nested generic types (P1[T] holds two P0[T], …
// P39) keep it busy for hours, in-process, where no deadline can stop
// it: such a package must be caught before it is loaded. Each declared
// type's fields and array elements are counted through the package's own
// declarations (memoized), an instance as its generic type times its type
// arguments.
func explosive(files []*ast.File) string {
	decls := map[string]ast.Expr{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				if ts, ok := spec.(*ast.TypeSpec); ok {
					decls[ts.Name.Name] = ts.Type
				}
			}
		}
	}
	s := syntaxExpansion{decls: decls, memo: map[string]int{}, busy: map[string]bool{}}
	names := slices.Sorted(maps.Keys(decls))
	for _, name := range names {
		if n := s.named(name); n > maxExpansion {
			return fmt.Sprintf("its type %s expands to more than %d fields and elements, past what the type checker is given", name, maxExpansion)
		}
	}
	return ""
}

// syntaxExpansion counts what declared types expand to, saturating past
// maxExpansion.
type syntaxExpansion struct {
	decls map[string]ast.Expr
	memo  map[string]int
	busy  map[string]bool
}

func (s syntaxExpansion) named(name string) int {
	if n, ok := s.memo[name]; ok {
		return n
	}
	if s.busy[name] {
		return 1
	}
	s.busy[name] = true
	defer delete(s.busy, name)
	n := min(s.expr(s.decls[name]), maxExpansion+1)
	s.memo[name] = n
	return n
}

func (s syntaxExpansion) expr(e ast.Expr) int {
	sat := func(n int) int { return min(n, maxExpansion+1) }
	switch e := e.(type) {
	case *ast.Ident:
		if _, ok := s.decls[e.Name]; ok {
			return s.named(e.Name)
		}
	case *ast.ParenExpr:
		return s.expr(e.X)
	case *ast.StructType:
		n := 1
		for _, f := range e.Fields.List {
			n = sat(n + max(1, len(f.Names))*s.expr(f.Type))
		}
		return n
	case *ast.ArrayType:
		if e.Len != nil {
			return sat(1 + s.expr(e.Elt))
		}
	case *ast.IndexExpr:
		return sat(s.expr(e.X) * max(1, s.expr(e.Index)))
	case *ast.IndexListExpr:
		args := 0
		for _, a := range e.Indices {
			args = sat(args + s.expr(a))
		}
		return sat(s.expr(e.X) * max(1, args))
	}
	return 1
}
