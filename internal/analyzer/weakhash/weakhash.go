// Package weakhash reports MD5, SHA-1, MD4 and RIPEMD-160 used on a
// credential: a password or a secret hashed with them, or an HMAC over
// them keyed with a password. These hashes are fast (and MD5 and MD4
// broken): a password hashed with them falls to a dictionary in seconds.
//
// gosec's G401 flags every call of md5.New, md5.Sum, sha1.New and
// sha1.Sum, checksums and cache keys included, which are most of their
// uses in real code, and misses the hash passed as a value,
// hmac.New(sha1.New, []byte(username+password)). This analyzer looks at
// the use and at what flows into it, in the function around it: the
// argument of Sum, what is written to the hash (Write, WriteString,
// io.WriteString, fmt.Fprint*, io.Copy), an HMAC's key, followed through
// local variables, conversions, concatenations, fmt.Sprintf and
// composite literals, and the names of the fields, functions and
// form keys it comes from (u.Password, r.FormValue("passwd")). It reports
// on the line of the use when one of them names a password (password,
// passwd, passphrase, pass, credential) or a secret (secret, API key,
// private key), or when the function doing it is named for passwords
// (hashPassword). An HMAC keyed with a secret or a token is not reported:
// HMAC-SHA1 is the MAC of TOTP, OAuth 1 and webhook signatures, and is not
// broken. A function of the repository that hashes one of its parameters
// (util.MD5(s)) is a use at each of its calls, across packages (an object
// fact). Test files are left alone.
package weakhash

import (
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// Analyzer reports weak hashes of credentials.
var Analyzer = &analysis.Analyzer{
	Name:             "weakhash",
	Doc:              "report MD5, SHA-1, MD4 and RIPEMD-160 used to hash a password or a secret, or in an HMAC keyed with a password",
	URL:              "https://cwe.mitre.org/data/definitions/916.html",
	Requires:         []*analysis.Analyzer{inspect.Analyzer},
	RunDespiteErrors: true,
	FactTypes:        []analysis.Fact{new(Hashes)},
	Run:              run,
}

// Hashes is the fact of a function that hashes some of its parameters
// with a weak hash: util.MD5(s) hashes s.
type Hashes struct {
	// Algo is the hash's name ("MD5").
	Algo string
	// Params are the indexes of the parameters hashed.
	Params []int
}

// AFact marks Hashes as a fact.
func (*Hashes) AFact() {}

func (h *Hashes) String() string {
	s := make([]string, len(h.Params))
	for i, p := range h.Params {
		s[i] = strconv.Itoa(p)
	}
	return "hashes " + h.Algo + " of parameters " + strings.Join(s, ", ")
}

// weak names the weak hashes by package path and function.
var weak = map[string]string{
	"crypto/md5.New":                       "MD5",
	"crypto/md5.Sum":                       "MD5",
	"crypto/sha1.New":                      "SHA-1",
	"crypto/sha1.Sum":                      "SHA-1",
	"golang.org/x/crypto/md4.New":          "MD4",
	"golang.org/x/crypto/ripemd160.New":    "RIPEMD-160",
	"golang.org/x/crypto/sha1.New":         "SHA-1",
	"github.com/golang/crypto/md4.New":     "MD4",
	"code.google.com/p/go.crypto/md4.New":  "MD4",
	"code.google.com/p/go.crypto/sha1.New": "SHA-1",
}

// funcKey is "path.Name" of a package-level function, or "".
func funcKey(fn *types.Func) string {
	if fn == nil || fn.Pkg() == nil {
		return ""
	}
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
		return ""
	}
	return fn.Pkg().Path() + "." + fn.Name()
}

// weakFunc returns the hash a function is (MD5 for md5.New), or "".
func weakFunc(info *types.Info, e ast.Expr) string {
	if info == nil {
		return ""
	}
	var id *ast.Ident
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		id = e
	case *ast.SelectorExpr:
		id = e.Sel
	default:
		return ""
	}
	fn, _ := info.Uses[id].(*types.Func)
	return weak[funcKey(fn)]
}

// The kinds of credential a name may say.
const (
	none = iota
	secret
	password
)

// words splits an identifier or a key into lower-case words: userPasswd
// is user, passwd; DB_PASSWORD db, password; APIKey api, key.
func words(s string) []string {
	var out []string
	var cur []rune
	rs := []rune(s)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r):
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0:
			prevLower := unicode.IsLower(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// kind says which credential a name says.
func kind(name string) int {
	ws := words(name)
	k := none
	for i, w := range ws {
		switch w {
		case "password", "passwords", "passwd", "passphrase", "pass", "credential", "credentials", "creds":
			return password
		case "secret", "secrets":
			k = secret
		case "key":
			if i > 0 && (ws[i-1] == "api" || ws[i-1] == "private") {
				k = secret
			}
		case "apikey", "privatekey":
			k = secret
		}
	}
	return k
}

// keyLiteral matches a string literal that names a key (a form field, an
// environment variable), not text.
var keyLiteral = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-]{0,40}$`)

// credential is the credential an expression's value derives from, and
// its name.
type credential struct {
	kind int
	name string
	// params are the enclosing function's parameters the value derives
	// from, by index.
	params []int
}

func (c *credential) add(k int, name string) {
	if k > c.kind {
		c.kind, c.name = k, name
	}
}

// tracer follows a value back through one function.
type tracer struct {
	info *types.Info
	// defs maps a local variable to the expressions assigned to it in the
	// function.
	defs map[*types.Var][]ast.Expr
	// params are the function's parameters, by object.
	params map[*types.Var]int
	// helpers are the functions known to hash some of their parameters.
	helpers func(*types.Func) *Hashes
	seen    map[*types.Var]bool
	memo    map[*types.Var]*credential
}

func (t *tracer) expr(e ast.Expr, c *credential, depth int) {
	if e == nil || depth > 12 {
		return
	}
	switch e := e.(type) {
	case *ast.Ident:
		t.ident(e, c, depth)
	case *ast.SelectorExpr:
		c.add(kind(e.Sel.Name), exprName(e))
		// The receiver's own name says nothing of a field (user.Name).
	case *ast.CallExpr:
		// A parameter reaches the hash through what passes its value
		// on (a conversion, fmt.Sprintf, append), not through any call
		// (os.Open(path)): only names count there.
		if !t.passesOn(e) {
			params := c.params
			defer func() { c.params = params }()
			c.params = slices.Clone(params)
		}
		switch fun := ast.Unparen(e.Fun).(type) {
		case *ast.Ident:
			if !t.isType(fun) {
				c.add(kind(fun.Name), fun.Name)
			}
		case *ast.SelectorExpr:
			c.add(kind(fun.Sel.Name), fun.Sel.Name)
			t.expr(fun.X, c, depth+1)
		}
		for _, a := range e.Args {
			if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && keyLiteral.MatchString(s) {
					c.add(kind(s), strconv.Quote(s))
				}
				continue
			}
			t.expr(a, c, depth+1)
		}
	case *ast.BinaryExpr:
		t.expr(e.X, c, depth+1)
		t.expr(e.Y, c, depth+1)
	case *ast.ParenExpr:
		t.expr(e.X, c, depth+1)
	case *ast.StarExpr:
		t.expr(e.X, c, depth+1)
	case *ast.UnaryExpr:
		t.expr(e.X, c, depth+1)
	case *ast.SliceExpr:
		t.expr(e.X, c, depth+1)
	case *ast.IndexExpr:
		t.expr(e.X, c, depth+1)
		if lit, ok := e.Index.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				c.add(kind(s), strconv.Quote(s))
			}
		}
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			t.expr(el, c, depth+1)
		}
	}
}

// passesOn reports whether a call's result is its arguments' value in
// another form: a conversion, append, a formatting or joining function.
func (t *tracer) passesOn(call *ast.CallExpr) bool {
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && (id.Name == "append" || t.isType(id)) {
		return true
	}
	if _, ok := ast.Unparen(call.Fun).(*ast.ArrayType); ok {
		return true // []byte(s)
	}
	if t.info == nil {
		return false
	}
	fn, _ := typeutil.Callee(t.info, call).(*types.Func)
	switch funcKey(fn) {
	case "fmt.Sprintf", "fmt.Sprint", "fmt.Sprintln", "strings.Join", "bytes.Join", "strings.ToLower", "strings.ToUpper", "strings.TrimSpace", "strings.Repeat", "fmt.Appendf":
		return true
	}
	return false
}

// isType reports whether id names a type (a conversion, []byte(x)).
func (t *tracer) isType(id *ast.Ident) bool {
	if t.info == nil {
		return id.Name == "string"
	}
	_, ok := t.info.Uses[id].(*types.TypeName)
	return ok
}

// local returns the function's variable id refers to, or nil.
func (t *tracer) local(id *ast.Ident) *types.Var {
	if t.info == nil {
		return nil
	}
	v, _ := t.info.Uses[id].(*types.Var)
	if v == nil {
		return nil
	}
	if _, ok := t.defs[v]; ok {
		return v
	}
	if _, ok := t.params[v]; ok {
		return v
	}
	return nil
}

func (t *tracer) ident(id *ast.Ident, c *credential, depth int) {
	c.add(kind(id.Name), id.Name)
	v := t.local(id)
	if v == nil || t.seen[v] {
		return
	}
	if i, ok := t.params[v]; ok {
		if !slices.Contains(c.params, i) {
			c.params = append(c.params, i)
		}
		return
	}
	// What a variable derives from is worked out once: a function
	// reassigning many variables from each other would otherwise be
	// followed down every path.
	vc, ok := t.memo[v]
	if !ok {
		t.seen[v] = true
		vc = &credential{}
		for _, d := range t.defs[v] {
			t.expr(d, vc, depth+1)
		}
		delete(t.seen, v)
		t.memo[v] = vc
	}
	c.add(vc.kind, vc.name)
	for _, i := range vc.params {
		if !slices.Contains(c.params, i) {
			c.params = append(c.params, i)
		}
	}
}

// exprName is a short text of a selector (u.Password).
func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x := exprName(e.X); x != "" && len(x) < 30 {
			return x + "." + e.Sel.Name
		}
		return e.Sel.Name
	}
	return ""
}

// use is one weak hash used in a function: what flows in.
type use struct {
	node ast.Node
	algo string
	// via is the helper through which it hashes ("util.MD5"), if any.
	via string
	// data flows into the hash; key is an HMAC's key.
	data, key []ast.Expr
	hmac      bool
}

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	var funcs []*ast.FuncDecl
	ins.Preorder([]ast.Node{(*ast.FuncDecl)(nil)}, func(n ast.Node) {
		fd := n.(*ast.FuncDecl)
		if fd.Body == nil || strings.HasSuffix(pass.Fset.File(fd.Pos()).Name(), "_test.go") {
			return
		}
		funcs = append(funcs, fd)
	})

	// The package's own helpers are found first, rounds until none is
	// added, so a helper calling a helper counts.
	local := map[*types.Func]*Hashes{}
	helpers := func(fn *types.Func) *Hashes {
		if h := local[fn]; h != nil {
			return h
		}
		if pass.ImportObjectFact == nil || fn == nil || fn.Pkg() == pass.Pkg {
			return nil
		}
		var h Hashes
		if pass.ImportObjectFact(fn, &h) {
			return &h
		}
		return nil
	}
	for range 3 {
		added := false
		for _, fd := range funcs {
			fn, _ := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if fn == nil {
				continue
			}
			t := newTracer(pass.TypesInfo, fd, helpers)
			for _, u := range uses(pass.TypesInfo, fd, helpers) {
				var c credential
				for _, e := range u.data {
					t.expr(e, &c, 0)
				}
				if u.hmac || c.kind != none || kind(fd.Name.Name) == password {
					// The key of a MAC is no parameter hashed; a
					// function reported itself is no helper.
					continue
				}
				if len(c.params) > 0 && local[fn] == nil {
					slices.Sort(c.params)
					local[fn] = &Hashes{Algo: u.algo, Params: c.params}
					added = true
				}
			}
		}
		if !added {
			break
		}
	}
	if pass.ExportObjectFact != nil {
		for fn, h := range local {
			if fn.Exported() {
				pass.ExportObjectFact(fn, h)
			}
		}
	}

	// One report a line: hexMD5(hexMD5(password + user) + salt) is one
	// problem.
	reported := map[string]bool{}
	report := func(n ast.Node, category, msg string) {
		p := pass.Fset.PositionFor(n.Pos(), false)
		at := p.Filename + ":" + strconv.Itoa(p.Line)
		if !reported[at] {
			reported[at] = true
			pass.Report(analysis.Diagnostic{Pos: n.Pos(), End: n.End(), Category: category, Message: msg})
		}
	}
	for _, fd := range funcs {
		t := newTracer(pass.TypesInfo, fd, helpers)
		byName := kind(fd.Name.Name) == password
		for _, u := range uses(pass.TypesInfo, fd, helpers) {
			var data, key credential
			for _, e := range u.data {
				t.expr(e, &data, 0)
			}
			for _, e := range u.key {
				t.expr(e, &key, 0)
			}
			what := u.algo
			if u.via != "" {
				what += " (through " + u.via + ")"
			}
			switch {
			case key.kind == password:
				report(u.node, CategoryPassword, "HMAC-"+what+" keyed with a password ("+key.name+"): the password is hashed with a fast hash; store and derive from passwords with bcrypt, scrypt, Argon2 or PBKDF2")
			case data.kind == password:
				report(u.node, CategoryPassword, what+" of a password ("+data.name+"): a fast hash, broken by a dictionary in seconds; hash passwords with bcrypt, scrypt or Argon2")
			case data.kind == secret && !u.hmac:
				report(u.node, CategorySecret, what+" of a secret ("+data.name+"): "+u.algo+" is weak; use SHA-256 or, to derive a key, HKDF or a password hash")
			case byName && len(u.data)+len(u.key) > 0 && !u.hmac:
				report(u.node, CategoryPassword, what+" in "+fd.Name.Name+": a fast hash, broken by a dictionary in seconds; hash passwords with bcrypt, scrypt or Argon2")
			}
		}
	}
	return nil, nil
}

// The categories of the diagnostics: what the weak hash is used on.
const (
	CategoryPassword = "password"
	CategorySecret   = "secret"
)

// newTracer returns a tracer for the function fd: the expressions
// assigned to each of its local variables.
func newTracer(info *types.Info, fd *ast.FuncDecl, helpers func(*types.Func) *Hashes) *tracer {
	t := &tracer{info: info, defs: map[*types.Var][]ast.Expr{}, params: map[*types.Var]int{}, helpers: helpers, seen: map[*types.Var]bool{}, memo: map[*types.Var]*credential{}}
	if info == nil {
		return t
	}
	i := 0
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			i++
		}
		for _, n := range f.Names {
			if v, ok := info.Defs[n].(*types.Var); ok {
				t.params[v] = i
			}
			i++
		}
	}
	obj := func(id *ast.Ident) *types.Var {
		if v, ok := info.Defs[id].(*types.Var); ok {
			return v
		}
		v, _ := info.Uses[id].(*types.Var)
		return v
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				v := obj(id)
				if v == nil {
					continue
				}
				switch {
				case len(n.Lhs) == len(n.Rhs):
					t.defs[v] = append(t.defs[v], n.Rhs[i])
				case len(n.Rhs) == 1:
					t.defs[v] = append(t.defs[v], n.Rhs[0])
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				v := obj(id)
				if v == nil {
					continue
				}
				switch {
				case len(n.Names) == len(n.Values):
					t.defs[v] = append(t.defs[v], n.Values[i])
				case len(n.Values) == 1:
					t.defs[v] = append(t.defs[v], n.Values[0])
				default:
					t.defs[v] = append(t.defs[v], nil)
				}
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok {
					if v := obj(id); v != nil {
						t.defs[v] = append(t.defs[v], n.X)
					}
				}
			}
		}
		return true
	})
	return t
}

// uses finds the weak hashes used in fd: Sum calls, hashes made with New
// and written to, HMACs over a weak hash, and calls of helpers that hash
// their parameters.
func uses(info *types.Info, fd *ast.FuncDecl, helpers func(*types.Func) *Hashes) []use {
	if info == nil {
		return nil
	}
	var out []use
	// hashVar maps a variable holding a weak hash to its use.
	hashVar := map[*types.Var]int{}
	// First the hashes made, so their writes can be found after.
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn, _ := typeutil.Callee(info, call).(*types.Func)
		key := funcKey(fn)
		switch {
		case strings.HasSuffix(key, ".Sum") && weak[key] != "":
			out = append(out, use{node: call, algo: weak[key], data: call.Args})
		case strings.HasSuffix(key, ".New") && weak[key] != "":
			out = append(out, use{node: call, algo: weak[key]})
		case key == "crypto/hmac.New" && len(call.Args) >= 2:
			if algo := weakFunc(info, call.Args[0]); algo != "" {
				out = append(out, use{node: call.Args[0], algo: algo, key: call.Args[1:2], hmac: true})
			}
		case fn != nil && helpers(fn) != nil:
			h := helpers(fn)
			u := use{node: call, algo: h.Algo, via: helperName(fn)}
			for _, i := range h.Params {
				if i < len(call.Args) {
					u.data = append(u.data, call.Args[i])
				}
			}
			out = append(out, u)
		}
		return true
	})
	if len(out) == 0 {
		return nil
	}
	// A hash (or an HMAC) assigned to a variable: what is written to it
	// flows in. The parents are mapped only for the few functions that
	// make a weak hash: for every function of a package at once they were
	// 22 MB of a caddy review's largest live heap (docs/performance.md).
	parents := parentsIn(fd.Body)
	for i, u := range out {
		call, ok := u.node.(*ast.CallExpr)
		if u.hmac {
			call, ok = parents[u.node].(*ast.CallExpr)
		}
		if !ok || (u.data != nil && !u.hmac) || u.via != "" {
			continue
		}
		var lhs ast.Expr
		switch p := parents[call].(type) {
		case *ast.AssignStmt:
			if len(p.Lhs) == len(p.Rhs) {
				for j, r := range p.Rhs {
					if r == call {
						lhs = p.Lhs[j]
					}
				}
			}
		case *ast.ValueSpec:
			if len(p.Names) == len(p.Values) {
				for j, r := range p.Values {
					if r == call {
						lhs = p.Names[j]
					}
				}
			}
		}
		id, ok := lhs.(*ast.Ident)
		if !ok {
			continue
		}
		v, _ := info.Defs[id].(*types.Var)
		if v == nil {
			v, _ = info.Uses[id].(*types.Var)
		}
		if v != nil {
			hashVar[v] = i
		}
	}
	if len(hashVar) == 0 {
		return out
	}
	isHash := func(e ast.Expr) (int, bool) {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return 0, false
		}
		v, _ := info.Uses[id].(*types.Var)
		i, ok := hashVar[v]
		return i, ok && v != nil
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
			if i, ok := isHash(sel.X); ok {
				switch sel.Sel.Name {
				case "Write", "WriteString", "WriteByte", "WriteRune":
					out[i].data = append(out[i].data, call.Args...)
				}
				return true
			}
		}
		fn, _ := typeutil.Callee(info, call).(*types.Func)
		switch funcKey(fn) {
		case "io.WriteString", "io.Copy", "io.CopyN", "io.CopyBuffer", "fmt.Fprint", "fmt.Fprintf", "fmt.Fprintln":
			if len(call.Args) >= 2 {
				if i, ok := isHash(call.Args[0]); ok {
					out[i].data = append(out[i].data, call.Args[1:]...)
				}
			}
		}
		return true
	})
	return out
}

// parentsIn maps each node under root to its parent.
func parentsIn(root ast.Node) map[ast.Node]ast.Node {
	parents := map[ast.Node]ast.Node{}
	var stack []ast.Node
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		if len(stack) > 0 {
			parents[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		return true
	})
	return parents
}

// helperName is how a helper is called: util.MD5, or MD5 in its package.
func helperName(fn *types.Func) string {
	if fn.Pkg() == nil {
		return fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}
