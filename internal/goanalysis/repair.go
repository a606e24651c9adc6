package goanalysis

import (
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// repairable returns the ill-typed packages of the repository that every
// analyzer can run on once some function bodies are left out, with those
// functions: each of the package's own errors lies in a function body (or
// says a name or an import is unused), and what could not be typed for
// want of the review's environment (an import unavailable offline, a
// replacement dropped, an ill-typed dependency) is used in function
// bodies only, not in a package-level declaration or a signature.
// go/types goes on past errors and records the types of everything else
// completely; it types what it could not resolve as invalid, which is
// how the bodies using it are found; and a function without a body is
// what SSA and staticcheck's IR take for one written in assembly.
func repairable(root string, pkgs []*packages.Package) map[*packages.Package][]*ast.FuncDecl {
	out := map[*packages.Package][]*ast.FuncDecl{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if !p.IllTyped || len(p.Syntax) == 0 || p.TypesInfo == nil || p.Types == nil || !inside(root, firstFile(p)) {
			return
		}
		if lineDirectives(p) {
			// An error's position says where a //line directive puts
			// it, which may be another function: the body holding the
			// error would be kept, the wrong one left out.
			return
		}
		var fns []*ast.FuncDecl
		for _, e := range p.Errors {
			switch {
			case e.Kind == packages.TypeError && (unusedImport(e.Msg) || strings.HasPrefix(e.Msg, "declared and not used")):
			case !ownError(p, e):
				// The environment's: what it left untyped is found below.
			case e.Kind != packages.TypeError && e.Kind != packages.ParseError:
				return
			default:
				fd := errorFunc(p, e.Pos)
				if fd == nil {
					return
				}
				if !slices.Contains(fns, fd) {
					fns = append(fns, fd)
				}
			}
		}
		inv := invalid{info: p.TypesInfo, memo: map[types.Type]bool{}}
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
					continue // an import is no use of what it imports
				}
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					if inv.in(d) {
						return
					}
					continue
				}
				if (fd.Recv != nil && inv.in(fd.Recv)) || inv.in(fd.Type) {
					return
				}
				if fd.Body != nil && !slices.Contains(fns, fd) && inv.in(fd.Body) {
					fns = append(fns, fd)
				}
			}
		}
		out[p] = fns
	})
	return out
}

// withoutBodies returns a copy of each repairable package without the
// bodies of the functions that do not type-check, its imports among them
// copied too. The syntax trees are copied down to the declarations, and
// the type information down to what is keyed by file, so the packages
// as loaded keep their bodies (for the analyzers that need no SSA, and
// the differential step's function ranges).
func withoutBodies(repairs map[*packages.Package][]*ast.FuncDecl) map[*packages.Package]*packages.Package {
	copies := map[*packages.Package]*packages.Package{}
	for p, fns := range repairs {
		c := *p
		info := *p.TypesInfo
		info.FileVersions = maps.Clone(p.TypesInfo.FileVersions)
		info.Scopes = maps.Clone(p.TypesInfo.Scopes)
		c.Syntax = make([]*ast.File, len(p.Syntax))
		for i, f := range p.Syntax {
			nf := *f
			nf.Decls = slices.Clone(f.Decls)
			for j, d := range nf.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && slices.Contains(fns, fd) {
					nfd := *fd
					nfd.Body = nil
					nf.Decls[j] = &nfd
				}
			}
			if v, ok := info.FileVersions[f]; ok {
				info.FileVersions[&nf] = v
			}
			if s, ok := info.Scopes[f]; ok {
				info.Scopes[&nf] = s
			}
			c.Syntax[i] = &nf
		}
		c.TypesInfo = &info
		c.IllTyped = false
		copies[p] = &c
	}
	for _, c := range copies {
		imports := maps.Clone(c.Imports)
		for path, imp := range imports {
			if ci, ok := copies[imp]; ok {
				imports[path] = ci
			}
		}
		c.Imports = imports
	}
	return copies
}

// invalid finds what the type checker could not type in a syntax tree.
type invalid struct {
	info *types.Info
	memo map[types.Type]bool
}

// in reports whether an expression under n, or an object it names, has a
// type that is or holds an invalid type.
func (v invalid) in(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if found {
			return false
		}
		if e, ok := n.(ast.Expr); ok {
			tv, ok := v.info.Types[e]
			switch {
			case ok && v.holds(tv.Type):
				found = true
			case !ok:
				// go/types records no type for an expression it
				// could not type (router.New() of an import it could
				// not resolve): every call and selection it typed is
				// recorded.
				switch n.(type) {
				case *ast.CallExpr, *ast.SelectorExpr, *ast.BadExpr:
					found = true
				}
			}
		}
		if id, ok := n.(*ast.Ident); ok {
			obj := v.info.Defs[id]
			if obj == nil {
				obj = v.info.Uses[id]
			}
			switch obj := obj.(type) {
			case nil, *types.Builtin, *types.Label:
				// Typed invalid by go/types, and fine.
			case *types.PkgName:
				// An import that could not be had is an empty package.
				found = obj.Imported().Scope().Len() == 0 && obj.Imported().Path() != "C"
			default:
				found = v.holds(obj.Type())
			}
		}
		return !found
	})
	return found
}

// holds reports whether t is or holds an invalid type: through elements,
// fields, parameters and results, methods, and named types' definitions.
func (v invalid) holds(t types.Type) bool {
	if t == nil {
		return false
	}
	if r, ok := v.memo[t]; ok {
		return r
	}
	v.memo[t] = false // a recursive type holds what it holds elsewhere
	r := false
	switch t := t.(type) {
	case *types.Basic:
		r = t.Kind() == types.Invalid
	case *types.Alias:
		r = v.holds(types.Unalias(t))
	case *types.Pointer:
		r = v.holds(t.Elem())
	case *types.Slice:
		r = v.holds(t.Elem())
	case *types.Array:
		r = v.holds(t.Elem())
	case *types.Chan:
		r = v.holds(t.Elem())
	case *types.Map:
		r = v.holds(t.Key()) || v.holds(t.Elem())
	case *types.Tuple:
		for i := range t.Len() {
			r = r || v.holds(t.At(i).Type())
		}
	case *types.Signature:
		r = v.holds(t.Params()) || v.holds(t.Results())
	case *types.Struct:
		for i := range t.NumFields() {
			r = r || v.holds(t.Field(i).Type())
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			r = r || v.holds(t.Method(i).Type())
		}
	case *types.Named:
		r = v.holds(t.Underlying())
		for i := range t.TypeArgs().Len() {
			r = r || v.holds(t.TypeArgs().At(i))
		}
	}
	v.memo[t] = r
	return r
}

// errorFunc returns the function declaration of p whose body holds the
// position pos (file:line:col), or nil.
func errorFunc(p *packages.Package, pos string) *ast.FuncDecl {
	file, line, col := pos, 0, 0
	for i := 0; i < 2; i++ {
		j := strings.LastIndexByte(file, ':')
		if j < 0 {
			return nil
		}
		n, err := strconv.Atoi(file[j+1:])
		if err != nil {
			return nil
		}
		file, line, col = file[:j], n, line
	}
	for _, f := range p.Syntax {
		tf := p.Fset.File(f.Pos())
		if tf == nil || tf.Name() != file || line < 1 || line > tf.LineCount() {
			continue
		}
		at := tf.LineStart(line) + token.Pos(max(col-1, 0))
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && fd.Body.Pos() < at && at < fd.Body.End() {
				return fd
			}
		}
	}
	return nil
}

// lineDirectives reports whether a file of p has a //line or /*line
// directive, which moves the positions errors are reported at.
func lineDirectives(p *packages.Package) bool {
	for _, f := range p.Syntax {
		for _, g := range f.Comments {
			for _, c := range g.List {
				if strings.HasPrefix(c.Text, "//line ") || strings.HasPrefix(c.Text, "/*line ") {
					return true
				}
			}
		}
	}
	return false
}

// funcName is a function's name as a review says it: F, or T.M for a
// method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// typedInPart reports whether an ill-typed package was type-checked at
// all: go/types goes on past errors, so what they do not touch is typed.
func typedInPart(p *packages.Package) bool {
	return environmentOnly(p) || len(p.Syntax) > 0 && p.TypesInfo != nil && p.Types != nil
}
