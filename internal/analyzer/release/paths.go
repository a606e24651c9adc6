package release

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/cfg"
	"golang.org/x/tools/go/types/typeutil"
)

// held is the set of locks held at a point, "x\x00Unlock" for x.Lock()
// and "x\x00RUnlock" for x.RLock(); nil is "not reached yet" (every lock,
// for the intersection at a join).
type held map[string]bool

// checkLockPaths reports a return that leaves a lock held which the
// function releases on its other paths: the early return that forgot its
// Unlock (an `mu.Unlock()` deleted before `return err`). A lock is held at
// a return when it is held on every path to it; a deferred release, or a
// call of anything named like an unlock or release (a helper), ends the
// question for that lock. Only a return of an error, or a return of a
// function with no results, counts: a function that returns holding the
// lock on success and releases it on failure hands the lock to its
// caller on purpose.
func checkLockPaths(pass *analysis.Pass, body *ast.BlockStmt, results *ast.FieldList, unlocks unlockers) {
	info := pass.TypesInfo
	lockOp := func(n ast.Node) (string, string) { return unlocks.lockOp(info, n) }
	// The locks the function takes and then releases itself somewhere,
	// and those a defer releases (never left held). A lock whose first
	// use is a release is the caller's, held on entry and on return.
	releases, deferred, callers := map[string]bool{}, map[string]bool{}, map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.DeferStmt:
			ast.Inspect(n.Call, func(m ast.Node) bool {
				if k, m := lockOp(m); m == "Unlock" || m == "RUnlock" {
					deferred[k] = true
				}
				return true
			})
			return false
		}
		switch k, m := lockOp(n); m {
		case "Unlock", "RUnlock":
			if !releases[k] && !callers[k+"\x00taken"] {
				callers[k] = true
			}
			releases[k] = true
		case "Lock", "RLock":
			callers[k+"\x00taken"] = true
		}
		return true
	})
	if len(releases) == 0 {
		return
	}
	g := cfg.New(body, func(call *ast.CallExpr) bool { return !noReturn(info, call) })
	in := make([]held, len(g.Blocks))
	in[0] = held{}
	// apply runs the nodes of a block over h, calling at for each return.
	apply := func(b *cfg.Block, h held, at func(*ast.ReturnStmt, held)) held {
		h = clone(h)
		for _, n := range b.Nodes {
			if _, ok := n.(*ast.DeferStmt); ok {
				continue
			}
			ast.Inspect(n, func(m ast.Node) bool {
				if _, ok := m.(*ast.FuncLit); ok {
					return false
				}
				k, op := lockOp(m)
				switch op {
				case "Lock", "RLock":
					h[k] = true
				case "Unlock", "RUnlock":
					delete(h, k)
				case "release":
					clear(h)
				}
				return true
			})
			if r, ok := n.(*ast.ReturnStmt); ok && at != nil {
				at(r, h)
			}
		}
		return h
	}
	for changed := true; changed; {
		changed = false
		for _, b := range g.Blocks {
			if in[b.Index] == nil || !b.Live {
				continue
			}
			out := apply(b, in[b.Index], nil)
			for _, s := range b.Succs {
				next := meet(in[s.Index], out)
				if in[s.Index] == nil || len(next) != len(in[s.Index]) {
					in[s.Index], changed = next, true
				}
			}
		}
	}
	type exit struct {
		r    *ast.ReturnStmt
		held held
	}
	var exits []exit
	for _, b := range g.Blocks {
		if in[b.Index] != nil && b.Live {
			apply(b, in[b.Index], func(r *ast.ReturnStmt, h held) { exits = append(exits, exit{r, clone(h)}) })
		}
	}
	reported := map[*ast.ReturnStmt]bool{}
	for _, e := range exits {
		for k := range e.held {
			if !releases[k] || deferred[k] || callers[k] || reported[e.r] || !errorReturn(info, e.r, results) {
				continue
			}
			// The function must release k before some other return: a
			// function that never does before returning hands it on.
			other := false
			for _, o := range exits {
				if o.r != e.r && !o.held[k] {
					other = true
				}
			}
			if !other {
				continue
			}
			x, unlock, _ := strings.Cut(k, "\x00")
			reported[e.r] = true
			pass.Report(analysis.Diagnostic{
				Pos:      e.r.Pos(),
				End:      e.r.End(),
				Category: CategoryLock,
				Message:  "this return leaves " + x + " locked: the function releases it (" + x + "." + unlock + "()) before its other returns, not before this one, so the next " + strings.TrimPrefix(unlock, "Un") + " blocks forever",
			})
		}
	}
}

// unlockers are the functions of the package, and the closures assigned
// to variables, that release a lock their caller holds (their body
// releases a lock before taking it, if ever): calling one may release
// any lock.
type unlockers map[types.Object]bool

// indexUnlockers finds the functions and closures of files that release
// a lock their caller holds.
func indexUnlockers(info *types.Info, files []*ast.File) unlockers {
	u := unlockers{}
	unlocks := func(body ast.Node) bool {
		taken, found := map[string]bool{}, false
		ast.Inspect(body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				x := types.ExprString(sel.X)
				switch mutexMethod(info, sel) {
				case "Lock", "RLock":
					taken[x] = true
				case "Unlock", "RUnlock":
					found = found || !taken[x]
				}
			}
			return !found
		})
		return found
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body != nil && unlocks(n.Body) {
					u[info.Defs[n.Name]] = true
				}
			case *ast.AssignStmt:
				for i, r := range n.Rhs {
					if lit, ok := r.(*ast.FuncLit); ok && i < len(n.Lhs) && unlocks(lit.Body) {
						if id, ok := n.Lhs[i].(*ast.Ident); ok {
							if o := info.ObjectOf(id); o != nil {
								u[o] = true
							}
						}
					}
				}
			}
			return true
		})
	}
	return u
}

// lockOp returns what a node does to a lock: "Lock", "RLock", "Unlock" or
// "RUnlock" with the lock's key, or "release" for a call of a function
// that releases a lock or is named like an unlock or release (which may
// release any lock), else "".
func (u unlockers) lockOp(info *types.Info, n ast.Node) (key, op string) {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return "", ""
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		switch m := mutexMethod(info, sel); m {
		case "Lock", "Unlock":
			return types.ExprString(sel.X) + "\x00Unlock", m
		case "RLock", "RUnlock":
			return types.ExprString(sel.X) + "\x00RUnlock", m
		}
	}
	if fn := typeutil.Callee(info, call); fn != nil {
		name := strings.ToLower(fn.Name())
		if u[fn] || strings.Contains(name, "unlock") || strings.Contains(name, "release") {
			return "", "release"
		}
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && u[info.Uses[id]] {
		return "", "release"
	}
	return "", ""
}

// noReturn reports whether a call never returns: panic, os.Exit,
// log.Fatal and its kin, t.Fatal and its kin.
func noReturn(info *types.Info, call *ast.CallExpr) bool {
	fn := typeutil.Callee(info, call)
	if fn == nil {
		return false
	}
	if b, ok := fn.(*types.Builtin); ok {
		return b.Name() == "panic"
	}
	if fn.Pkg() == nil {
		return false
	}
	switch fn.Pkg().Path() + "." + fn.Name() {
	case "os.Exit", "log.Fatal", "log.Fatalf", "log.Fatalln", "log.Panic", "log.Panicf", "log.Panicln", "runtime.Goexit":
		return true
	}
	return false
}

// errorReturn reports whether r returns an error that is not nil, or
// returns from a function with no results.
func errorReturn(info *types.Info, r *ast.ReturnStmt, results *ast.FieldList) bool {
	if results == nil || len(results.List) == 0 {
		return true
	}
	if len(r.Results) == 0 {
		return false // named results: cannot tell
	}
	last := r.Results[len(r.Results)-1]
	t := info.TypeOf(last)
	if t == nil || !types.Identical(t, types.Universe.Lookup("error").Type()) {
		return false
	}
	if id, ok := ast.Unparen(last).(*ast.Ident); ok && id.Name == "nil" {
		return false
	}
	return true
}

func clone(h held) held {
	c := make(held, len(h))
	for k := range h {
		c[k] = true
	}
	return c
}

// meet intersects the locks held on two paths; nil (not reached) is the
// identity.
func meet(a, b held) held {
	if a == nil {
		return clone(b)
	}
	c := held{}
	for k := range a {
		if b[k] {
			c[k] = true
		}
	}
	return c
}
