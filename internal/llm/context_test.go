package llm

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// contextPackage is package p at base: a changed function's helper, type
// and constant live in other files, and another file calls it. Beside it
// are names the section must not show: a package q defining the same
// helper, a file of another package in p's directory, a test calling
// the function.
var contextPackage = map[string]string{
	"p/p.go": `package p

import "strings"

// Process trims and limits the name.
func Process(c *Config, name string) string {
	name = strings.TrimSpace(name)
	return limit(name, c.Max)
}

// Serve answers one request.
func (s *Server) Serve(name string) string {
	return Process(s.cfg, name)
}
`,
	"p/helper.go": `package p

// limit cuts s to n bytes.
func limit(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// unused is not called by the change.
func unused() {}
`,
	"p/types.go": `package p

// Config holds the limits.
type Config struct {
	Max int
}

// Server serves names.
type Server struct {
	cfg *Config
}

// DefaultMax is the limit when none is configured.
const DefaultMax = 64
`,
	"p/run.go": `package p

// Run processes every name.
func Run(c *Config, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, Process(c, n))
	}
	return out
}
`,
	"p/p_test.go": `package p

func useInTest() { _ = Process(nil, "x") }
`,
	"p/gen.go": `//go:build ignore

package main

// limit is another package's.
func limit(s string, n int) string { return "gen" }
`,
	"q/q.go": `package q

// limit is q's own.
func limit(s string, n int) string { return "q" }
`,
}

// contextChange commits contextPackage and a head where Process and
// Serve change.
func contextChange(t *testing.T) (repo, *change.Change) {
	t.Helper()
	r := newRepo(t)
	base := r.commit(contextPackage)
	head := r.commit(map[string]string{"p/p.go": strings.NewReplacer(
		"return limit(name, c.Max)", "if c.Max == 0 {\n\t\treturn limit(name, DefaultMax)\n\t}\n\treturn limit(name, c.Max)",
		"return Process(s.cfg, name)", "return Process(s.cfg, strings.ToLower(name))",
	).Replace(contextPackage["p/p.go"])})
	return r, r.Change(base, head)
}

// reviewPrompt reviews c with a fake model and returns the user messages
// it was sent.
func reviewPrompt(t *testing.T, c *change.Change, cfg Config) []string {
	t.Helper()
	f := newFakeAPI(t, reply{body: answer()})
	e, _, _ := newEngine(t, f, cfg, specialist.Logic)
	if _, err := e.Review(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, req := range f.seen() {
		out = append(out, req.user())
	}
	if len(out) == 0 {
		t.Fatal("nothing was asked")
	}
	return out
}

// TestContextDefinitionsAndCallers: a changed Go function's prompt shows
// the helper, type and constant it uses from other files of its package,
// and the function's callers there; nothing from another package, a
// file of another package in the directory, or a test file.
func TestContextDefinitionsAndCallers(t *testing.T) {
	t.Parallel()
	_, c := contextChange(t)
	user := reviewPrompt(t, c, Config{})[0]
	_, ctxPart, ok := strings.Cut(user, contextHeader)
	if !ok {
		t.Fatalf("no context section:\n%s", user)
	}
	for _, want := range []string{
		// The helper, short, whole, with its doc comment.
		"-- func limit, defined at p/helper.go:4:\n     3 | // limit cuts s to n bytes.\n     4 | func limit(s string, n int) string {\n",
		"     8 | \treturn s\n     9 | }\n",
		// The type of a parameter, and the receiver's type of a changed method.
		"-- type Config, defined at p/types.go:4:\n     3 | // Config holds the limits.\n     4 | type Config struct {\n     5 | \tMax int\n     6 | }\n",
		"-- type Server, defined at p/types.go:9:\n",
		"-- const DefaultMax, defined at p/types.go:14:\n    13 | // DefaultMax is the limit when none is configured.\n    14 | const DefaultMax = 64\n",
		// The caller in another file.
		"-- Process is called from p/run.go:7, in func Run:\n     7 | \t\tout = append(out, Process(c, n))\n",
	} {
		if !strings.Contains(ctxPart, want) {
			t.Errorf("context lacks %q:\n%s", want, ctxPart)
		}
	}
	for _, not := range []string{
		"unused", `"q"`, `"gen"`, "p/p_test.go", "useInTest",
		// Serve calls Process, but it is changed: shown in the diff already.
		"in func Server.Serve",
		// strings is imported: nothing of it is read.
		"strings.go",
	} {
		if strings.Contains(ctxPart, not) {
			t.Errorf("context shows %q:\n%s", not, ctxPart)
		}
	}
	if strings.Count(user, "-- func limit,") != 1 {
		t.Errorf("limit shown more than once:\n%s", ctxPart)
	}
}

// TestContextOfAMethodCallers: callers of a changed method are found
// through the type checker, whatever the receiver's variable is called.
func TestContextOfAMethodCallers(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	files := map[string]string{
		"m/t.go": "package m\n\n// T counts.\ntype T struct{ n int }\n\n// Add adds.\nfunc (t *T) Add(k int) {\n\tt.n += k\n}\n",
		"m/use.go": "package m\n\nfunc use(x *T) {\n\tx.Add(2)\n}\n\n" +
			"// Add is a function of the same name, not the method.\nfunc Add(k int) {}\n\nfunc other() { Add(3) }\n",
	}
	base := r.commit(files)
	head := r.commit(map[string]string{"m/t.go": strings.Replace(files["m/t.go"], "t.n += k", "t.n -= k", 1)})
	user := reviewPrompt(t, r.Change(base, head), Config{})[0]
	if !strings.Contains(user, "-- Add is called from m/use.go:4, in func use:\n     4 | \tx.Add(2)\n") {
		t.Errorf("the method's caller is not listed:\n%s", user)
	}
	if strings.Contains(user, "in func other") {
		t.Errorf("a call of another Add is listed as the method's:\n%s", user)
	}
}

// TestContextBudget: a context window that fits the diff but not the
// section gets the diff alone; the section never takes more than its
// share of a request.
func TestContextBudget(t *testing.T) {
	t.Parallel()
	_, c := contextChange(t)
	f := newFakeAPI(t, reply{body: answer()})
	e, _, _ := newEngine(t, f, Config{ContextTokens: 1600, MaxTokens: 100}, specialist.Logic)
	budget := mustPlan(t, e, 1600).budget
	if _, err := e.Review(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	sent := false
	for _, req := range f.seen() {
		user := req.user()
		sent = sent || strings.Contains(user, "+ \t\treturn limit(name, DefaultMax)\n")
		if _, ctxPart, ok := strings.Cut(user, contextHeader); ok && len(contextHeader)+len(ctxPart) > budget*contextShare/100 {
			t.Errorf("a budget of %d characters, and a context of %d:\n%s", budget, len(ctxPart), user)
		}
		if strings.Contains(user, "-- func limit,") {
			t.Errorf("a budget of %d characters holds the whole context:\n%s", budget, user)
		}
	}
	if !sent {
		t.Error("the changed line was not sent in the small context")
	}

	// With the unbounded default, the same change gets all of it.
	if user := reviewPrompt(t, c, Config{})[0]; !strings.Contains(user, "-- func limit,") {
		t.Errorf("no context with room for it:\n%s", user)
	}

	// A request with no room beside the diff gets no section.
	f0 := c.Files[0]
	src, err := c.ReadFile(context.Background(), f0.Path())
	if err != nil {
		t.Fatal(err)
	}
	cc := newCodeContext(c)
	if got := cc.render(context.Background(), f0, src, shownLines(f0), len(contextHeader)+40); got != "" {
		t.Errorf("a limit smaller than any definition, and a section:\n%s", got)
	}
}

// TestFindingOnContextIsDropped: the model reports on lines the context
// section shows, in the changed file and in another; both findings are
// dropped, since neither is on a changed line.
func TestFindingOnContextIsDropped(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	src := "package s\n\n// helper doubles.\nfunc helper(x int) int {\n\treturn x * 2\n}\n\n" +
		"// pad keeps helper out of the hunk's context lines.\nvar pad = []int{\n" + strings.Repeat("\t0,\n", 10) + "}\n\n" +
		"// F uses helper.\nfunc F(x int) int {\n\treturn helper(x)\n}\n"
	base := r.commit(map[string]string{"s/s.go": src, "s/o.go": "package s\n\n// G calls F.\nfunc G() int {\n\treturn F(1)\n}\n"})
	head := r.commit(map[string]string{"s/s.go": strings.Replace(src, "return helper(x)", "return helper(x + 1)", 1)})
	c := r.Change(base, head)
	f := newFakeAPI(t, reply{body: answer(
		quoted(finding("s/s.go", 5, 5, "high", "logic", "On the helper", nil), "\treturn x * 2"),
		quoted(finding("s/o.go", 5, 5, "high", "logic", "On the caller", nil), "\treturn F(1)"),
		quoted(finding("s/s.go", 24, 24, "high", "logic", "On the change", nil), "\treturn helper(x + 1)"),
	)})
	e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
	got, err := e.Review(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	user := f.seen()[0].user()
	for _, want := range []string{"     5 | \treturn x * 2\n", "     5 | \treturn F(1)\n", "  24 + \treturn helper(x + 1)\n"} {
		if !strings.Contains(user, want) {
			t.Fatalf("prompt lacks %q, so the test shows nothing:\n%s", want, user)
		}
	}
	if len(got) != 1 || got[0].Line != 24 {
		t.Fatalf("want the one finding on the changed line 24, got %+v", got)
	}
}

// TestContextOtherLanguages: a Python and a TypeScript change get the
// definitions of the names their changed lines call, from another file of
// the directory and from the same file outside the hunks.
func TestContextOtherLanguages(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	pad := strings.Repeat("\n", 12)
	files := map[string]string{
		"py/app.py": "from .util import clean\n\n\ndef local_helper(x):\n    \"\"\"Doubles x.\"\"\"\n    return x * 2\n" + pad +
			"\ndef handle(req):\n    return req\n",
		"py/util.py":  "import re\n\n\nclass Cleaner:\n    pass\n\n\ndef clean(s):\n    s = s.strip()\n    return s\n\n\ndef other():\n    pass\n",
		"py/far/x.py": "def clean(s):\n    return 'far'\n",
		// Bytes a prompt cannot carry as they are: mended, the request stays
		// valid JSON.
		"py/bad.py": "def odd(x):  # \xff\xfe\x00\n    return x\n",
		"web/a.ts":  "import { fmt } from './b';\n\nexport function handle(x: string): string {\n  return x;\n}\n",
		"web/b.ts":  "export const fmt = (s: string): string => {\n  return s.trim();\n};\n\nexport function unused() {}\n",
	}
	base := r.commit(files)
	head := r.commit(map[string]string{
		"py/app.py": strings.Replace(files["py/app.py"], "    return req\n", "    return clean(local_helper(req)) + Cleaner() + odd(1)\n", 1),
		"web/a.ts":  strings.Replace(files["web/a.ts"], "  return x;", "  return fmt(x);", 1),
	})
	user := strings.Join(reviewPrompt(t, r.Change(base, head), Config{}), "\n")
	for _, want := range []string{
		"-- clean, defined at py/util.py:8:\n     8 | def clean(s):\n     9 |     s = s.strip()\n    10 |     return s\n--",
		"-- Cleaner, defined at py/util.py:4:\n     4 | class Cleaner:\n",
		"-- local_helper, defined at py/app.py:4:\n     4 | def local_helper(x):\n     5 |     \"\"\"Doubles x.\"\"\"\n",
		"-- odd, defined at py/bad.py:1:\n     1 | def odd(x):  # \uFFFD\x00\n     2 |     return x\n",
		"-- fmt, defined at web/b.ts:1:\n     1 | export const fmt = (s: string): string => {\n     2 |   return s.trim();\n     3 | };\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
	for _, not := range []string{"'far'", "def other", "unused", "import re"} {
		if strings.Contains(user, not) {
			t.Errorf("prompt shows %q:\n%s", not, user)
		}
	}
}

// The attacker's tests: a pull request shaped to make the section read
// outside the change, or cost without bound.

// TestContextSymlinkIsNotFollowed: a .go file in the package that is a
// symbolic link to a Go file outside the repository is read as the
// link's text, not followed.
func TestContextSymlinkIsNotFollowed(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "outside.go")
	secret := "func limit(s string, n int) string { return \"SECRET-OUTSIDE\" }"
	if err := os.WriteFile(outside, []byte("package p\n\n"+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	files := maps.Clone(contextPackage)
	delete(files, "p/helper.go")
	r.Write(files)
	if err := os.Symlink(outside, filepath.Join(r.Dir, "p", "helper.go")); err != nil {
		t.Fatal(err)
	}
	base := r.Commit("base")
	head := r.commit(map[string]string{"p/p.go": strings.Replace(contextPackage["p/p.go"], "c.Max)", "c.Max+1)", 1)})
	user := reviewPrompt(t, r.Change(base, head), Config{})[0]
	if strings.Contains(user, "SECRET-OUTSIDE") {
		t.Fatalf("the context followed a symbolic link out of the repository:\n%s", user)
	}
	if !strings.Contains(user, "-- type Config") {
		t.Fatalf("the rest of the package lost its context:\n%s", user)
	}
}

// promptWithPackage commits contextPackage with extra's files added or
// in place of its own, changes Process at head, and returns the first
// prompt the review sends.
func promptWithPackage(t *testing.T, extra map[string]string) string {
	t.Helper()
	r := newRepo(t)
	files := maps.Clone(contextPackage)
	maps.Copy(files, extra)
	base := r.commit(files)
	head := r.commit(map[string]string{"p/p.go": strings.Replace(files["p/p.go"], "c.Max)", "c.Max+1)", 1)})
	return reviewPrompt(t, r.Change(base, head), Config{})[0]
}

// TestContextBoundsThePackage: a package of more files than
// maxContextFiles, or more bytes than maxContextBytes, gets no section,
// and a file past maxWholeFuncsSource is not parsed.
func TestContextBoundsThePackage(t *testing.T) {
	t.Parallel()
	many := map[string]string{}
	for i := range maxContextFiles {
		many["p/z"+strconv.Itoa(i)+".go"] = "package p\n"
	}
	if user := promptWithPackage(t, many); strings.Contains(user, contextHeader) {
		t.Errorf("a package of %d files got a context:\n%s", len(many)+len(contextPackage), user)
	}

	// Under the file count, over the bytes: files near
	// maxWholeFuncsSource each, so that the total passes maxContextBytes.
	big := map[string]string{}
	filler := "package p\n\n// " + strings.Repeat("x", maxWholeFuncsSource-20) + "\n"
	for i := range maxContextBytes/maxWholeFuncsSource + 1 {
		big["p/big"+strconv.Itoa(i)+".go"] = filler
	}
	if user := promptWithPackage(t, big); strings.Contains(user, contextHeader) {
		t.Errorf("a package over %d bytes got a context", maxContextBytes)
	}

	// One file past maxWholeFuncsSource, defining the helper: not
	// parsed, so the helper is not shown; the rest is.
	user := promptWithPackage(t, map[string]string{
		"p/helper.go": contextPackage["p/helper.go"] + "\n// " + strings.Repeat("x", maxWholeFuncsSource) + "\n",
	})
	if strings.Contains(user, "-- func limit") {
		t.Error("a file past maxWholeFuncsSource was parsed for the context")
	}
	if !strings.Contains(user, "-- type Config") {
		t.Errorf("the rest of the package lost its context:\n%s", user)
	}
}

// TestContextBoundsTheChange: a change touching many packages of near
// a mebibyte each reads at most maxContextReadBytes for its sections: the
// first packages get one, the last do not.
func TestContextBoundsTheChange(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	// One blob, stored once, in every directory.
	filler := "package p\n\n// " + strings.Repeat("x", maxWholeFuncsSource-20) + "\n"
	n := maxContextReadBytes/maxWholeFuncsSource + 2
	files, changed := map[string]string{}, map[string]string{}
	for i := range n {
		dir := fmt.Sprintf("d%02d/", i)
		files[dir+"filler.go"] = filler
		files[dir+"helper.go"] = contextPackage["p/helper.go"]
		files[dir+"p.go"] = "package p\n\nfunc F() string {\n\treturn limit(\"a\", 1)\n}\n"
		changed[dir+"p.go"] = strings.Replace(files[dir+"p.go"], "1)", "2)", 1)
	}
	base := r.commit(files)
	head := r.commit(changed)
	user := strings.Join(reviewPrompt(t, r.Change(base, head), Config{}), "\n")
	if !strings.Contains(user, "-- func limit, defined at d00/helper.go:4:") {
		t.Errorf("the first package has no section:\n%s", user)
	}
	last := fmt.Sprintf("d%02d/helper.go", n-1)
	if strings.Contains(user, last) {
		t.Errorf("%d packages of a mebibyte each, and the last, %s, still has a section", n, last)
	}
}

// TestContextHostileSource: files of the package made of deeply nested
// expressions (just under go/parser's nesting limit, so that go/types
// checks them), NUL bytes and invalid UTF-8 neither stop the review nor
// spoil the request; the changed function still gets its helper.
func TestContextHostileSource(t *testing.T) {
	t.Parallel()
	user := promptWithPackage(t, map[string]string{
		// go/parser stops at a nesting of 100,000.
		"p/deep.go":   "package p\n\nvar deep = " + strings.Repeat("(", 50000) + "1" + strings.Repeat(")", 50000) + "\n",
		"p/deeper.go": "package p\n\nvar deeper = " + strings.Repeat("-", 90000) + "1\n",
		// Go source is UTF-8 without NUL bytes: go/parser keeps no
		// declaration of these, and the section goes on without them.
		"p/utf.go": "package p\n\n// limitUTF has \xff\xfe bytes.\nfunc limitUTF() {}\n",
		"p/nul.go": "package p\n\n// limitNul has a \x00.\nfunc limitNul() {}\n",
	})
	if !strings.Contains(user, "-- func limit,") {
		t.Errorf("the helper is not shown beside hostile files:\n%s", user)
	}
}

// TestContextTypeCheckerCost: a kilobyte of struct types embedding each
// other in diamonds (exponential time in go/types' validType), or of
// string constants each doubling the one before (gigabytes once a length
// needs their value), is measured before the checker runs: the package
// gets no section, and the review goes on with the diff. Without the
// bounds the review would not finish.
func TestContextTypeCheckerCost(t *testing.T) {
	t.Parallel()
	var diamonds strings.Builder
	diamonds.WriteString("package p\n\ntype A0 struct{ X int }\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&diamonds, "type A%d struct {\n\tA%d\n\tB%d\n}\n\ntype B%d struct{ A%d }\n", i, i-1, i, i, i-1)
	}
	var doubling strings.Builder
	doubling.WriteString("package p\n\nconst s0 = \"xxxxxxxx\"\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&doubling, "const s%d = s%d + s%d\n", i, i-1, i-1)
	}
	doubling.WriteString("\nvar L = len(s40)\n")
	for name, attack := range map[string]string{"diamonds": diamonds.String(), "doubling": doubling.String()} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if len(attack) > 4096 {
				t.Fatalf("the attack is %d bytes; it is meant to be small", len(attack))
			}
			// The measures catch it before the checker starts (past
			// maxTypeCheck, the checker's goroutine would go on burning).
			f, err := parser.ParseFile(token.NewFileSet(), "attack.go", attack, 0)
			if err != nil {
				t.Fatal(err)
			}
			if typePaths([]*ast.File{f}) <= maxTypePaths && constStringBound([]*ast.File{f}) <= maxConstString {
				t.Fatal("the attack passes the measures")
			}
			user := promptWithPackage(t, map[string]string{"p/attack.go": attack})
			if strings.Contains(user, contextHeader) {
				t.Errorf("the package was type-checked:\n%s", user)
			}
			if !strings.Contains(user, "+ \treturn limit(name, c.Max+1)\n") {
				t.Errorf("the diff was not sent:\n%s", user)
			}
		})
	}
}

// TestTypeCheckBoundsLeaveRealPackagesAlone: the measures of
// TestContextTypeCheckerCost stay far under their bounds on this
// repository's own packages, so that real code keeps its section.
func TestTypeCheckBoundsLeaveRealPackagesAlone(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{".", "../store", "../../cmd/quorum"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var files []*ast.File
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".go") {
				f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
		}
		if p := typePaths(files); p > maxTypePaths/100 || p == 0 {
			t.Errorf("%s: %d type paths, against a bound of %d", dir, p, maxTypePaths)
		}
		if s := constStringBound(files); s > maxConstString/100 || s == 0 {
			t.Errorf("%s: string constants up to %d bytes, against a bound of %d", dir, s, maxConstString)
		}
	}
}
