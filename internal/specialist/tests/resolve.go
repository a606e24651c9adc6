package tests

import (
	"go/ast"
	"go/token"
)

// Coverage credit by receiver type: a test that calls s.Post() on a Store
// exercises Store.Post, not every Post of the package. The receiver's type
// is read from syntax: the variable's declared or constructed type in the
// function that uses it (a parameter, `var s T`, `s := &T{}`, `T{}`,
// `new(T)`, or the declared result of a function or method of the
// package, `s := NewStore()`). A receiver whose type cannot be read, or
// is not a type of the package declaring that method (an interface, an
// embedding type, a field), is credited by name as before.

// ref is a use of a name in code: a bare name (a function called or
// referred to) or a selected one with the type of what it is selected
// from ("" when unknown).
type ref struct {
	name string
	recv string
	bare bool
	// call marks a bare name called: a function of the package, or a
	// variable holding a method value (readNext := mc.readNext).
	call bool
}

// typeTable is what the resolver knows of a package: its functions'
// first result types ("F" and "T.M" to a type name) and its type names.
type typeTable struct {
	results map[string]string
	types   map[string]bool
}

// addFile adds a parsed file's declarations to the table.
func (tt typeTable) addFile(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			key := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				key = typeName(d.Recv.List[0].Type) + "." + key
			}
			if res := d.Type.Results; res != nil && len(res.List) > 0 {
				if t := typeName(res.List[0].Type); t != "" {
					tt.results[key] = t
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					tt.types[ts.Name.Name] = true
				}
			}
		}
	}
}

// typeName is the name of a named type, pointer, qualifier and type
// arguments aside; "" for any other type.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	case *ast.ParenExpr:
		return typeName(e.X)
	}
	return ""
}

// refsOf returns the uses of names in a function declaration (with
// calls, only the names it calls), each selected name with the type of
// what it is selected from where syntax tells it.
func (tt typeTable) refsOf(fd *ast.FuncDecl, calls bool) []ref {
	env := map[string]string{}
	set := func(name, t string) {
		if name == "_" {
			return
		}
		if old, ok := env[name]; ok && old != t {
			t = "" // assigned values of two types: unknown
		}
		env[name] = t
	}
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				set(n.Name, typeName(f.Type))
			}
		}
	}
	fields(fd.Recv)
	ast.Inspect(fd, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncType:
			fields(n.Params)
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE && n.Tok != token.ASSIGN {
				break
			}
			for i, l := range n.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				t := ""
				switch {
				case len(n.Rhs) == len(n.Lhs):
					t = tt.typeOf(n.Rhs[i], env)
				case len(n.Rhs) == 1 && i == 0:
					if _, ok := ast.Unparen(n.Rhs[0]).(*ast.CallExpr); ok {
						t = tt.typeOf(n.Rhs[0], env)
					}
				}
				set(id.Name, t)
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				t := typeName(n.Type)
				if n.Type == nil && i < len(n.Values) {
					t = tt.typeOf(n.Values[i], env)
				}
				set(id.Name, t)
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok {
					set(id.Name, "")
				}
			}
		}
		return true
	})
	if fd.Body == nil {
		return nil
	}
	var out []ref
	var use func(e ast.Expr, call bool)
	use = func(e ast.Expr, call bool) {
		switch e := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			out = append(out, ref{name: e.Sel.Name, recv: tt.recvOf(e.X, env)})
		case *ast.Ident:
			out = append(out, ref{name: e.Name, bare: true, call: call})
		case *ast.IndexExpr:
			use(e.X, call)
		case *ast.IndexListExpr:
			use(e.X, call)
		}
	}
	sels := map[*ast.Ident]bool{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if calls {
				use(n.Fun, true)
			}
		case *ast.SelectorExpr:
			sels[n.Sel] = true
			if !calls {
				use(n, false)
			}
		case *ast.Ident:
			if !calls && !sels[n] {
				use(n, false)
			}
		}
		return true
	})
	return out
}

// recvOf is the type of what a name is selected from: a variable, a
// call, a literal, or a type itself (a method expression, T.M).
func (tt typeTable) recvOf(x ast.Expr, env map[string]string) string {
	if id, ok := ast.Unparen(x).(*ast.Ident); ok {
		if t, ok := env[id.Name]; ok {
			return t
		}
		if tt.types[id.Name] {
			return id.Name
		}
		return ""
	}
	if s, ok := ast.Unparen(x).(*ast.StarExpr); ok {
		return typeName(s.X)
	}
	return tt.typeOf(x, env)
}

// typeOf is the type of a value as syntax tells it, or "".
func (tt typeTable) typeOf(e ast.Expr, env map[string]string) string {
	switch e := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return tt.typeOf(e.X, env)
		}
	case *ast.CompositeLit:
		return typeName(e.Type)
	case *ast.Ident:
		return env[e.Name]
	case *ast.CallExpr:
		switch fn := ast.Unparen(e.Fun).(type) {
		case *ast.Ident:
			if fn.Name == "new" && len(e.Args) == 1 {
				return typeName(e.Args[0])
			}
			if tt.types[fn.Name] {
				return fn.Name // a conversion
			}
			return tt.results[fn.Name]
		case *ast.SelectorExpr:
			if t := tt.recvOf(fn.X, env); t != "" {
				return tt.results[t+"."+fn.Sel.Name]
			}
			if id, ok := fn.X.(*ast.Ident); ok {
				if _, local := env[id.Name]; !local {
					return tt.results[fn.Sel.Name] // pkg.NewT() from a test of package pkg_test
				}
			}
		case *ast.IndexExpr:
			return tt.typeOf(&ast.CallExpr{Fun: fn.X}, env)
		}
	}
	return ""
}

// targets returns the functions of a package a use of a name may reach:
// a bare name, the function of that name (a bare call of no function of
// the package calls a variable: any method of that name); a name
// selected from a value of a type of the package that declares that
// method, that method; any other, every function and method of that
// name.
func targets(r ref, byKey map[string]*goFunc, byName map[string][]*goFunc) []*goFunc {
	if r.bare {
		if f := byKey[r.name]; f != nil {
			return []*goFunc{f}
		}
		if r.call {
			return byName[r.name]
		}
		return nil
	}
	if r.recv != "" {
		if f := byKey[r.recv+"."+r.name]; f != nil {
			return []*goFunc{f}
		}
	}
	return byName[r.name]
}
