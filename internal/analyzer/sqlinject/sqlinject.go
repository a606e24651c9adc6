package sqlinject

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"
)

// Analyzer reports SQL text built from values that are not constant and
// passed to database/sql, pgx, sqlx or gorm as the query. Each diagnostic
// is at the place the unsafe value enters the text.
var Analyzer = &analysis.Analyzer{
	Name:     "sqlinject",
	Doc:      "report SQL queries built with fmt.Sprintf, + or a strings.Builder from values that are not constant",
	URL:      "https://cwe.mitre.org/data/definitions/89.html",
	Requires: []*analysis.Analyzer{buildssa.Analyzer},
	Run:      run,
}

// maxDepth bounds how many calls deep the analysis follows a value
// (into helpers' results and callers' arguments).
const maxDepth = 4

// checker holds what one pass knows about its package.
type checker struct {
	pass *analysis.Pass
	// calls are the static call sites of each function of the package.
	calls map[*ssa.Function][]ssa.CallInstruction
	// escapes are functions used other than as the callee of a static
	// call (so called from places the analysis cannot see).
	escapes map[*ssa.Function]bool
	// invokes are the calls through an interface, by method name.
	invokes map[string][]ssa.CallInstruction
	// globalStores and fieldStores are the values stored to each package
	// variable and to each unexported struct field.
	globalStores map[*ssa.Global][]ssa.Value
	globalLoads  map[*ssa.Global][]*ssa.UnOp
	fieldStores  map[*types.Var][]ssa.Value
	// fieldEscapes are fields whose address is used other than to store
	// to or load from.
	fieldEscapes map[*types.Var]bool
	// safeMemo caches safe's answer per value.
	safeMemo map[ssa.Value]bool
	// reported are the lines reported, "file:line": one report a line.
	reported map[string]bool
}

func run(pass *analysis.Pass) (any, error) {
	res, ok := pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA)
	if !ok || res == nil {
		return nil, nil
	}
	funcs := append([]*ssa.Function{}, res.SrcFuncs...)
	if init := res.Pkg.Func("init"); init != nil {
		funcs = append(funcs, init)
		funcs = append(funcs, init.AnonFuncs...)
	}
	c := &checker{
		pass:         pass,
		calls:        map[*ssa.Function][]ssa.CallInstruction{},
		escapes:      map[*ssa.Function]bool{},
		invokes:      map[string][]ssa.CallInstruction{},
		globalStores: map[*ssa.Global][]ssa.Value{},
		globalLoads:  map[*ssa.Global][]*ssa.UnOp{},
		fieldStores:  map[*types.Var][]ssa.Value{},
		fieldEscapes: map[*types.Var]bool{},
		safeMemo:     map[ssa.Value]bool{},
		reported:     map[string]bool{},
	}
	for _, fn := range funcs {
		c.index(fn)
	}
	for _, fn := range funcs {
		// Tests are not attack surface (gosec's findings in them are
		// dropped too).
		if strings.HasSuffix(pass.Fset.PositionFor(fn.Pos(), false).Filename, "_test.go") {
			continue
		}
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				call, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				name, q, ok := sink(call.Common())
				if !ok {
					continue
				}
				w := &walk{c: c, seen: map[ssa.Value]bool{}, judged: map[ssa.Value]bool{}}
				w.built(q, 0)
				for _, s := range w.sites {
					c.report(s, name, call)
				}
			}
		}
	}
	return nil, nil
}

// index records fn's call sites, escaping functions, stores to package
// variables and fields.
func (c *checker) index(fn *ssa.Function) {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if call, ok := instr.(ssa.CallInstruction); ok {
				common := call.Common()
				if common.IsInvoke() {
					c.invokes[common.Method.Name()] = append(c.invokes[common.Method.Name()], call)
				} else if f, ok := common.Value.(*ssa.Function); ok {
					c.calls[f] = append(c.calls[f], call)
				}
				for _, a := range common.Args {
					c.escape(a)
				}
				continue
			}
			switch instr := instr.(type) {
			case *ssa.UnOp:
				if g, ok := instr.X.(*ssa.Global); ok && instr.Op == token.MUL {
					c.globalLoads[g] = append(c.globalLoads[g], instr)
				}
			case *ssa.Store:
				switch addr := instr.Addr.(type) {
				case *ssa.Global:
					c.globalStores[addr] = append(c.globalStores[addr], instr.Val)
				case *ssa.FieldAddr:
					if f := field(addr); f != nil {
						c.fieldStores[f] = append(c.fieldStores[f], instr.Val)
					}
				}
				c.escape(instr.Val)
				continue
			case *ssa.FieldAddr:
				for _, r := range *instr.Referrers() {
					switch r := r.(type) {
					case *ssa.Store:
						if r.Addr == instr {
							continue
						}
					case *ssa.UnOp, *ssa.DebugRef:
						continue
					}
					if f := field(instr); f != nil {
						c.fieldEscapes[f] = true
					}
				}
			}
			var ops [8]*ssa.Value
			for _, op := range instr.Operands(ops[:0]) {
				if op != nil {
					c.escape(*op)
				}
			}
		}
	}
}

// escape records that v, if it is a function, may be called from
// anywhere.
func (c *checker) escape(v ssa.Value) {
	switch v := v.(type) {
	case *ssa.Function:
		c.escapes[v] = true
	case *ssa.MakeClosure:
		if f, ok := v.Fn.(*ssa.Function); ok {
			c.escapes[f] = true
		}
	}
}

// field returns the struct field addr points to.
func field(addr *ssa.FieldAddr) *types.Var {
	t := addr.X.Type().Underlying()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem().Underlying()
	}
	st, ok := t.(*types.Struct)
	if !ok || addr.Field >= st.NumFields() {
		return nil
	}
	return st.Field(addr.Field)
}

// site is where a value that is not safe enters a query's text.
type site struct {
	pos token.Pos
	how string
}

// report reports the site s of the query given to the sink call, named
// sinkName. The message names the function the sink is called in when it
// is another one than the site's, but no line: a finding's text must not
// change when lines above it move.
func (c *checker) report(s site, sinkName string, call ssa.CallInstruction) {
	pos := s.pos
	if !pos.IsValid() {
		pos = call.Pos()
	}
	at := c.pass.Fset.PositionFor(pos, false)
	line := fmt.Sprintf("%s:%d", at.Filename, at.Line)
	// Tests are not attack surface.
	if c.reported[line] || strings.HasSuffix(at.Filename, "_test.go") {
		return
	}
	c.reported[line] = true
	where := ""
	if fn := call.Parent(); fn != nil {
		if syn := fn.Syntax(); syn != nil && (pos < syn.Pos() || pos >= syn.End()) {
			where = " in " + funcName(fn)
			if q := c.pass.Fset.PositionFor(call.Pos(), false); q.Filename != at.Filename {
				where += " (" + filepath.Base(q.Filename) + ")"
			}
		}
	}
	c.pass.Report(analysis.Diagnostic{
		Pos:      pos,
		Category: "sql-injection",
		Message: fmt.Sprintf("SQL injection: the query passed to %s%s is built with %s from a value that is not constant\n"+
			"A value spliced into SQL text can change the statement itself. Use placeholders ($1, ?) and pass the value as an argument of the query; "+
			"a table or column name that must vary is chosen from a fixed set of constants or quoted with the driver's function (pq.QuoteIdentifier, pgx.Identifier{…}.Sanitize()).",
			sinkName, where, s.how),
	})
}

// funcName names fn as its source does: Name or Type.Name, and the
// function literal in it for a closure.
func funcName(fn *ssa.Function) string {
	if fn.Parent() != nil {
		return "a function literal in " + funcName(fn.Parent())
	}
	if recv := fn.Signature.Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			return n.Obj().Name() + "." + fn.Name()
		}
	}
	return fn.Name()
}

// walk follows one query back to where its text is built.
type walk struct {
	c    *checker
	seen map[ssa.Value]bool
	// judged are the values built here whose every part was found safe
	// or reported: their text needs no second look.
	judged map[ssa.Value]bool
	sites  []site
}

// built records the sites where v's text is built from a part that is not
// safe, and reports whether there was any.
func (w *walk) built(v ssa.Value, depth int) bool {
	if v == nil || depth > maxDepth {
		return false
	}
	if done, ok := w.seen[v]; ok {
		return done
	}
	w.seen[v] = false // a cycle adds nothing
	found := w.builtUncached(v, depth)
	w.seen[v] = found
	return found
}

func (w *walk) add(pos token.Pos, how string) bool {
	w.sites = append(w.sites, site{pos, how})
	return true
}

// parts records sites inside each part and reports whether any part not
// built here is unsafe.
func (w *walk) parts(vs []ssa.Value, at *ssa.BasicBlock, depth int) (found, unsafe bool) {
	for _, p := range vs {
		if w.built(p, depth) {
			found = true
		} else if !w.judged[p] && !w.c.safe(p, depth) && !w.c.guarded(p, at) {
			unsafe = true
		}
	}
	return found, unsafe
}

func (w *walk) builtUncached(v ssa.Value, depth int) bool {
	if vs, ok, _ := w.c.copyOf(v); ok {
		found := false
		judged := len(vs) > 0
		for _, x := range vs {
			found = w.built(x, depth) || found
			judged = judged && (w.judged[x] || w.c.safe(x, depth))
		}
		w.judged[v] = judged
		return found
	}
	switch v := v.(type) {
	case *ssa.BinOp:
		if v.Op != token.ADD || !isString(v.Type()) {
			return false
		}
		w.judged[v] = true
		found, unsafe := w.parts([]ssa.Value{v.X, v.Y}, v.Block(), depth)
		if unsafe {
			return w.add(v.Pos(), "string concatenation")
		}
		return found
	case *ssa.Extract:
		if call, ok := v.Tuple.(*ssa.Call); ok {
			return w.call(call, v.Index, depth)
		}
	case *ssa.Call:
		return w.call(v, 0, depth)
	}
	return false
}

// call records the sites inside result i of call.
func (w *walk) call(call *ssa.Call, result, depth int) bool {
	common := call.Common()
	if common.IsInvoke() {
		return false
	}
	if b, ok := common.Value.(*ssa.Builtin); ok {
		if b.Name() == "append" && len(common.Args) == 2 {
			w.judged[call] = true
			// append([]byte, string...) and friends: the bytes are text.
			found, unsafe := w.parts(common.Args, call.Block(), depth)
			if unsafe {
				return w.add(call.Pos(), "append")
			}
			return found
		}
		return false
	}
	fn, args := callee(common)
	switch {
	case fn == nil:
		return false
	case funcIs(fn, "fmt", "Sprintf", "Sprint", "Sprintln", "Appendf", "Append", "Appendln"):
		// A format that is not constant is a query template from
		// elsewhere (a file, a parameter): it is followed, but only the
		// operands spliced into it are judged.
		w.judged[call] = true
		found := false
		for _, t := range formatOf(common.Args) {
			found = w.built(t, depth) || found
		}
		parts, known := w.c.fmtParts(operandsOf(common.Args))
		f, unsafe := w.parts(parts, call.Block(), depth)
		if unsafe || !known {
			return w.add(call.Pos(), "fmt."+fn.Name())
		}
		return found || f
	case funcIs(fn, "strings", "Builder.String") || funcIs(fn, "bytes", "Buffer.String", "Buffer.Bytes"):
		w.judged[call] = true
		return w.builder(common.Args[0], depth)
	case funcIs(fn, "strings", "Replace", "ReplaceAll"):
		// A template's placeholder replaced with a value: the template
		// is followed, the value judged (an escaped quote is safe).
		w.judged[call] = true
		found := w.built(args[0], depth)
		if w.c.safeCall(call, 0, depth) {
			return found
		}
		if w.built(args[2], depth) {
			return true
		}
		if w.c.guarded(args[2], call.Block()) {
			return found
		}
		return w.add(call.Pos(), "strings."+fn.Name())
	case funcIs(fn, "strings", "Join"):
		w.judged[call] = true
		elems, _ := w.c.sliceElems(args[0])
		found, unsafe := w.parts(append(elems, args[1]), call.Block(), depth)
		if unsafe {
			return w.add(call.Pos(), "strings.Join")
		}
		return found
	}
	if i := passThrough(fn); i >= 0 && i < len(args) {
		return w.built(args[i], depth)
	}
	if f := common.StaticCallee(); f != nil && f.Pkg == w.c.pkg() && len(f.Blocks) > 0 && depth < maxDepth {
		found := false
		for _, r := range returned(f, result) {
			found = w.built(r, depth+1) || found
		}
		return found
	}
	return false
}

// builder records the sites of the writes to the strings.Builder or
// bytes.Buffer at addr.
func (w *walk) builder(addr ssa.Value, depth int) bool {
	writes, _ := w.c.builderWrites(addr)
	found := false
	for _, wr := range writes {
		f, unsafe := w.parts(wr.parts, wr.block, depth)
		if unsafe {
			w.add(wr.pos, wr.how)
			f = true
		}
		found = found || f
	}
	return found
}

func (c *checker) pkg() *ssa.Package {
	return c.pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA).Pkg
}

// safe reports whether v's text cannot carry anything but what the
// program itself chose: see the package documentation.
func (c *checker) safe(v ssa.Value, depth int) bool {
	if v == nil {
		return true
	}
	if s, ok := c.safeMemo[v]; ok {
		return s
	}
	c.safeMemo[v] = true // optimistic on cycles: the other edges decide
	s := c.safeUncached(v, depth)
	c.safeMemo[v] = s
	return s
}

func (c *checker) allSafe(vs []ssa.Value, depth int) bool {
	for _, v := range vs {
		if !c.safe(v, depth) {
			return false
		}
	}
	return true
}

func (c *checker) safeUncached(v ssa.Value, depth int) bool {
	if depth > maxDepth {
		return false
	}
	if isInert(v.Type()) {
		return true
	}
	if phi, ok := v.(*ssa.Phi); ok {
		for i, e := range phi.Edges {
			pred := phi.Block().Preds[i]
			if !c.safe(e, depth) && !c.edgeImplies(pred, phi.Block(), e) && !c.guarded(e, pred) {
				return false
			}
		}
		return true
	}
	if vs, ok, complete := c.copyOf(v); ok {
		return complete && c.allSafe(vs, depth)
	}
	switch v := v.(type) {
	case *ssa.Const:
		return true
	case *ssa.BinOp:
		return c.safe(v.X, depth) && c.safe(v.Y, depth)
	case *ssa.Lookup:
		return c.constantMap(v.X, false, depth)
	case *ssa.Extract:
		switch t := v.Tuple.(type) {
		case *ssa.Lookup:
			return v.Index == 0 && c.constantMap(t.X, false, depth)
		case *ssa.Call:
			return c.safeCall(t, v.Index, depth)
		}
	case *ssa.Call:
		return c.safeCall(v, 0, depth)
	}
	return false
}

// copyOf returns the values v merely copies (a phi's edges, a
// conversion's operand, a closure's binding, the values stored where v is
// loaded from), whether v is such a copy, and whether the values are all
// there are.
func (c *checker) copyOf(v ssa.Value) (vs []ssa.Value, isCopy, complete bool) {
	switch v := v.(type) {
	case *ssa.Phi:
		return v.Edges, true, true
	case *ssa.Convert:
		return []ssa.Value{v.X}, true, true
	case *ssa.ChangeType:
		return []ssa.Value{v.X}, true, true
	case *ssa.MakeInterface:
		return []ssa.Value{v.X}, true, true
	case *ssa.FreeVar:
		b := binding(v)
		return []ssa.Value{b}, b != nil, true
	case *ssa.Parameter:
		args, complete := c.paramArgs(v)
		return args, true, complete
	case *ssa.UnOp:
		if v.Op != token.MUL {
			return nil, false, false
		}
		stored, known := c.storedTo(v.X)
		return stored, true, known
	case *ssa.Field:
		st, ok := v.X.Type().Underlying().(*types.Struct)
		if !ok {
			return nil, false, false
		}
		vs, complete := c.fieldValues(st.Field(v.Field))
		return vs, true, complete
	}
	return nil, false, false
}

// paramArgs returns the values the package's calls pass for p (through
// an interface too, for a method), and whether they are all the values p
// takes: the function is called at least once and never used as a value.
// Callers outside the package are not seen: see Limits in the package
// documentation.
func (c *checker) paramArgs(p *ssa.Parameter) ([]ssa.Value, bool) {
	fn := p.Parent()
	i := paramIndex(fn, p)
	if i < 0 || fn.Pkg != c.pkg() {
		return nil, false
	}
	var out []ssa.Value
	for _, call := range c.calls[fn] {
		if args := call.Common().Args; i < len(args) {
			out = append(out, args[i])
		}
	}
	complete := !c.escapes[fn] && len(out) > 0 && fn.Signature.Recv() == nil
	if fn.Signature.Recv() != nil && fn.Parent() == nil {
		complete = !c.escapes[fn] && len(out)+len(c.invokes[fn.Name()]) > 0
		for _, call := range c.invokes[fn.Name()] {
			common := call.Common()
			args := append([]ssa.Value{common.Value}, common.Args...)
			if i < len(args) {
				out = append(out, args[i])
			}
		}
	}
	return out, complete
}

// safeCall reports whether result i of call is safe.
func (c *checker) safeCall(call *ssa.Call, result, depth int) bool {
	common := call.Common()
	if b, ok := common.Value.(*ssa.Builtin); ok {
		return b.Name() == "append" && c.allSafe(common.Args, depth)
	}
	fn, args := callee(common)
	switch {
	case fn == nil:
		return false
	case quoting(fn), queryBuilder(fn):
		return result == 0
	case funcIs(fn, "fmt", "Sprintf", "Sprint", "Sprintln", "Appendf", "Append", "Appendln"):
		parts, known := c.fmtParts(operandsOf(common.Args))
		return known && c.allSafe(append(parts, formatOf(common.Args)...), depth)
	case funcIs(fn, "strings", "Builder.String") || funcIs(fn, "bytes", "Buffer.String", "Buffer.Bytes"):
		writes, known := c.builderWrites(common.Args[0])
		if !known {
			return false
		}
		for _, wr := range writes {
			if !c.allSafe(wr.parts, depth) {
				return false
			}
		}
		return true
	case funcIs(fn, "strings", "Join"):
		elems, known := c.sliceElems(args[0])
		return known && c.allSafe(append(elems, args[1]), depth)
	case funcIs(fn, "strings", "Repeat"):
		return c.safe(args[0], depth)
	case funcIs(fn, "strings", "ReplaceAll", "Replace"):
		old, oldOK := constString(args[1])
		repl, replOK := constString(args[2])
		// The template is the query passed through; the replacement is
		// what is spliced in.
		return (oldOK && replOK && isEscape(old, repl)) || c.safe(args[2], depth)
	}
	if i := passThrough(fn); i >= 0 && i < len(args) {
		return c.safe(args[i], depth)
	}
	if f := common.StaticCallee(); f != nil && f.Pkg == c.pkg() && len(f.Blocks) > 0 {
		rs := returned(f, result)
		return len(rs) > 0 && c.allSafe(rs, depth+1)
	}
	return false
}

// constantMap reports whether every value (every key, with keys) ever put
// in the map m is safe:
// a local map literal not passed anywhere, or a package variable holding
// such a literal that the package writes to nowhere else.
func (c *checker) constantMap(m ssa.Value, keys bool, depth int) bool {
	switch m := m.(type) {
	case *ssa.MakeMap:
		for _, r := range *m.Referrers() {
			switch r := r.(type) {
			case *ssa.MapUpdate:
				if v := r.Value; keys && !c.safe(r.Key, depth) || !keys && !c.safe(v, depth) {
					return false
				}
			case *ssa.Lookup, *ssa.DebugRef:
			case *ssa.Store:
				if _, ok := r.Addr.(*ssa.Global); !ok || r.Val != m {
					return false
				}
			default:
				return false
			}
		}
		return true
	case *ssa.UnOp:
		g, ok := m.X.(*ssa.Global)
		if !ok || m.Op != token.MUL {
			return false
		}
		stores := c.globalStores[g]
		if len(stores) == 0 {
			return false
		}
		for _, s := range stores {
			if !c.constantMap(s, keys, depth) {
				return false
			}
		}
		// No update through a load of the variable anywhere.
		for _, load := range c.globalLoads[g] {
			for _, rr := range *load.Referrers() {
				if u, ok := rr.(*ssa.MapUpdate); ok && (keys && !c.safe(u.Key, depth) || !keys && !c.safe(u.Value, depth)) {
					return false
				}
			}
		}
		return true
	case *ssa.Phi:
		for _, e := range m.Edges {
			if !c.constantMap(e, keys, depth) {
				return false
			}
		}
		return true
	}
	return false
}

// maxGuardSteps bounds how far up the blocks a guard is looked for.
const maxGuardSteps = 16

// guarded reports whether the block b can only be reached when v is known
// to be one of a set of safe values: through an edge of a comparison with
// a constant (v == "asc", or the false edge of v != "asc"), a lookup in a
// map whose keys are constants (_, ok := allowed[v], or allowed[v] true),
// or a predicate given v and a slice or map of constants
// (slices.Contains(cols, v), contains(v, sortFields)). Every way into b
// must pass such a test; the search goes maxGuardSteps blocks up.
func (c *checker) guarded(v ssa.Value, b *ssa.BasicBlock) bool {
	return c.guardedWithin(v, b, maxGuardSteps, map[*ssa.BasicBlock]bool{})
}

func (c *checker) guardedWithin(v ssa.Value, b *ssa.BasicBlock, steps int, seen map[*ssa.BasicBlock]bool) bool {
	if b == nil || steps == 0 || seen[b] || len(b.Preds) == 0 {
		return false
	}
	seen[b] = true
	defer delete(seen, b)
	for _, p := range b.Preds {
		if !c.edgeImplies(p, b, v) && !c.guardedWithin(v, p, steps-1, seen) {
			return false
		}
	}
	return true
}

// edgeImplies reports whether taking the edge from block p to block s
// means v is one of a set of safe values: p ends in an if on such a test.
func (c *checker) edgeImplies(p, s *ssa.BasicBlock, v ssa.Value) bool {
	if len(p.Instrs) == 0 || len(p.Succs) != 2 || p.Succs[0] == p.Succs[1] {
		return false
	}
	ifi, ok := p.Instrs[len(p.Instrs)-1].(*ssa.If)
	return ok && c.implies(ifi.Cond, p.Succs[0] == s, v)
}

// implies reports whether cond having the value outcome means v is one of
// a set of safe values.
func (c *checker) implies(cond ssa.Value, outcome bool, v ssa.Value) bool {
	switch cond := cond.(type) {
	case *ssa.UnOp:
		return cond.Op == token.NOT && c.implies(cond.X, !outcome, v)
	case *ssa.BinOp:
		if (cond.Op == token.EQL && outcome) || (cond.Op == token.NEQ && !outcome) {
			return (cond.X == v && c.safe(cond.Y, 0)) || (cond.Y == v && c.safe(cond.X, 0))
		}
	case *ssa.Extract:
		l, ok := cond.Tuple.(*ssa.Lookup)
		return ok && outcome && cond.Index == 1 && l.Index == v && c.constantMap(l.X, true, 0)
	case *ssa.Lookup:
		// A true value is found under its key.
		return outcome && cond.Index == v && c.constantMap(cond.X, true, 0)
	case *ssa.Call:
		if !outcome {
			return false
		}
		hasV, hasSet := false, false
		for _, a := range cond.Call.Args {
			if a == v {
				hasV = true
				continue
			}
			elems, known := c.sliceElems(a)
			hasSet = hasSet || (known && len(elems) > 0 && c.allSafe(elems, 0)) || c.constantMap(a, true, 0)
		}
		return hasV && hasSet
	}
	return false
}

// storedTo returns the values stored at addr, and whether they are all
// there is: addr is a local variable whose address is only stored to and
// loaded from, a package variable, or an unexported struct field whose
// address never escapes.
func (c *checker) storedTo(addr ssa.Value) ([]ssa.Value, bool) {
	switch addr := addr.(type) {
	case *ssa.Alloc:
		var out []ssa.Value
		known := true
		for _, r := range *addr.Referrers() {
			switch r := r.(type) {
			case *ssa.Store:
				if r.Addr == addr {
					out = append(out, r.Val)
				} else {
					known = false
				}
			case *ssa.UnOp, *ssa.DebugRef:
			case *ssa.MakeClosure:
				// A closure may store to it: its stores count too.
				stored, k := closureStores(r, addr)
				out, known = append(out, stored...), known && k
			default:
				known = false
			}
		}
		return out, known
	case *ssa.Global:
		stores := c.globalStores[addr]
		return stores, len(stores) > 0 && !addr.Object().Exported()
	case *ssa.FieldAddr:
		f := field(addr)
		if f == nil {
			return nil, false
		}
		return c.fieldValues(f)
	case *ssa.IndexAddr:
		return c.sliceElems(addr.X)
	case *ssa.FreeVar:
		if b := binding(addr); b != nil {
			return c.storedTo(b)
		}
	}
	return nil, false
}

// fieldValues returns the values the package stores to the field f when
// they are all it holds: f is unexported and its address never escapes.
// A field of another type, or one others may set, is not followed at all:
// a store to the same field of another object says nothing about this one.
func (c *checker) fieldValues(f *types.Var) ([]ssa.Value, bool) {
	stores := c.fieldStores[f]
	if len(stores) == 0 || f.Exported() || c.fieldEscapes[f] {
		return nil, false
	}
	return stores, true
}

// closureStores returns the values the closure mc stores to the variable
// addr it captures, and whether they are all: the closure only loads
// from and stores to it.
func closureStores(mc *ssa.MakeClosure, addr ssa.Value) ([]ssa.Value, bool) {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return nil, false
	}
	var out []ssa.Value
	for i, b := range mc.Bindings {
		if b != addr || i >= len(fn.FreeVars) {
			continue
		}
		fv := fn.FreeVars[i]
		for _, r := range *fv.Referrers() {
			switch r := r.(type) {
			case *ssa.Store:
				if r.Addr != fv {
					return nil, false
				}
				out = append(out, r.Val)
			case *ssa.UnOp, *ssa.DebugRef:
			default:
				return nil, false
			}
		}
	}
	return out, true
}

// binding returns the value a closure's free variable was bound to, when
// the closure is made once.
func binding(fv *ssa.FreeVar) ssa.Value {
	fn := fv.Parent()
	idx := -1
	for i, f := range fn.FreeVars {
		if f == fv {
			idx = i
		}
	}
	parent := fn.Parent()
	if idx < 0 || parent == nil {
		return nil
	}
	var bound ssa.Value
	for _, b := range parent.Blocks {
		for _, instr := range b.Instrs {
			if mc, ok := instr.(*ssa.MakeClosure); ok && mc.Fn == fn {
				if bound != nil {
					return nil
				}
				bound = mc.Bindings[idx]
			}
		}
	}
	return bound
}

// paramIndex returns p's index among fn's parameters (receiver first).
func paramIndex(fn *ssa.Function, p *ssa.Parameter) int {
	for i, q := range fn.Params {
		if q == p {
			return i
		}
	}
	return -1
}

// returned returns the values fn returns as result i.
func returned(fn *ssa.Function, i int) []ssa.Value {
	var out []ssa.Value
	for _, b := range fn.Blocks {
		if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && i < len(ret.Results) {
			out = append(out, ret.Results[i])
		}
	}
	return out
}

// formatOf returns the arguments of a call of a fmt function that
// are the text its operands are spliced into: the format of the *f
// functions, and the slice the Append* functions append to.
func formatOf(args []ssa.Value) []ssa.Value {
	n := len(args) - 1 // the operands
	if n < 0 {
		return nil
	}
	var out []ssa.Value
	for i, a := range args[:n] {
		if _, isWriter := a.Type().Underlying().(*types.Interface); isWriter && i == 0 {
			continue // Fprint*'s writer
		}
		out = append(out, a)
	}
	return out
}

// operandsOf returns the operands slice of a call of a fmt function.
func operandsOf(args []ssa.Value) []ssa.Value {
	if len(args) == 0 {
		return nil
	}
	return args[len(args)-1:]
}

// fmtParts returns the values in the operands slice of a fmt call, and
// whether they are all known.
func (c *checker) fmtParts(operands []ssa.Value) ([]ssa.Value, bool) {
	if len(operands) == 0 {
		return nil, true
	}
	return c.sliceElems(operands[0])
}

// sliceElems returns the values stored in the slice v, and whether they
// are all known: a nil slice, a literal, make, and append of those.
func (c *checker) sliceElems(v ssa.Value) ([]ssa.Value, bool) {
	return c.elems(v, map[ssa.Value]bool{})
}

func (c *checker) elems(v ssa.Value, seen map[ssa.Value]bool) ([]ssa.Value, bool) {
	if seen[v] {
		return nil, true
	}
	seen[v] = true
	switch v := v.(type) {
	case *ssa.Const:
		return nil, v.Value == nil
	case *ssa.Slice:
		return c.elems(v.X, seen)
	case *ssa.Alloc, *ssa.MakeSlice:
		var out []ssa.Value
		for _, r := range *v.Referrers() {
			ia, ok := r.(*ssa.IndexAddr)
			if !ok {
				continue
			}
			for _, rr := range *ia.Referrers() {
				if st, ok := rr.(*ssa.Store); ok && st.Addr == ia {
					out = append(out, st.Val)
				}
			}
		}
		return out, true
	case *ssa.Phi:
		var out []ssa.Value
		known := true
		for _, e := range v.Edges {
			es, k := c.elems(e, seen)
			out, known = append(out, es...), known && k
		}
		return out, known
	case *ssa.UnOp:
		stored, known := c.storedTo(v.X)
		var out []ssa.Value
		for _, a := range stored {
			es, k := c.elems(a, seen)
			out, known = append(out, es...), known && k
		}
		return out, known
	case *ssa.Parameter:
		args, known := c.paramArgs(v)
		var out []ssa.Value
		for _, a := range args {
			es, k := c.elems(a, seen)
			out, known = append(out, es...), known && k
		}
		return out, known
	case *ssa.Call:
		if b, ok := v.Call.Value.(*ssa.Builtin); ok && b.Name() == "append" && len(v.Call.Args) == 2 {
			a, ka := c.elems(v.Call.Args[0], seen)
			if isString(v.Call.Args[1].Type()) {
				return append(a, v.Call.Args[1]), ka
			}
			b, kb := c.elems(v.Call.Args[1], seen)
			return append(a, b...), ka && kb
		}
	}
	return nil, false
}

// write is one write to a builder: what it writes and where.
type write struct {
	block *ssa.BasicBlock
	pos   token.Pos
	how   string
	parts []ssa.Value
}

// builderWrites returns the writes to the local strings.Builder or
// bytes.Buffer at addr, and whether they are all known (the builder is
// not passed to anything but its own methods and fmt.Fprint*).
func (c *checker) builderWrites(addr ssa.Value) ([]write, bool) {
	alloc, ok := addr.(*ssa.Alloc)
	if !ok {
		return nil, false
	}
	var out []write
	known := true
	for _, r := range *alloc.Referrers() {
		switch r := r.(type) {
		case *ssa.DebugRef:
			continue
		case *ssa.MakeInterface:
			for _, rr := range *r.Referrers() {
				call, ok := rr.(*ssa.Call)
				if !ok {
					known = false
					continue
				}
				fn, args := callee(call.Common())
				if !funcIs(fn, "fmt", "Fprintf", "Fprint", "Fprintln") || len(args) == 0 || args[0] != r {
					known = false
					continue
				}
				parts, k := c.fmtParts(operandsOf(args))
				known = known && k
				out = append(out, write{call.Block(), call.Pos(), "fmt." + fn.Name(), parts})
			}
			continue
		case *ssa.Call:
			fn, args := callee(r.Common())
			if fn == nil || len(r.Common().Args) == 0 || r.Common().Args[0] != alloc {
				known = false
				continue
			}
			if fn.Pkg() != nil && (fn.Pkg().Path() == "strings" || fn.Pkg().Path() == "bytes") {
				switch fn.Name() {
				case "WriteString", "Write", "WriteByte", "WriteRune":
					how := "a strings.Builder"
					if fn.Pkg().Path() == "bytes" {
						how = "a bytes.Buffer"
					}
					out = append(out, write{r.Block(), r.Pos(), how, args})
					continue
				case "String", "Bytes", "Len", "Cap", "Grow", "Reset":
					continue
				}
			}
			known = false
		default:
			known = false
		}
	}
	return out, known
}

// constString returns v's value when it is a constant string.
func constString(v ssa.Value) (string, bool) {
	c, ok := v.(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(c.Value), true
}
