package tests

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/quorum-review/quorum/internal/specialist"
)

// ecosystem is a language family's testing conventions: where its tests
// live, how a test, a skip and an assertion are written.
type ecosystem struct {
	name   string
	label  string // for people: "JavaScript/TypeScript"
	exts   []string
	syntax syntax
	// isTest says whether a path is a test file.
	isTest func(p string) bool
	// testDecl matches a test's declaration on a line; its "name" group
	// is the test's name, read from the original line (a JS test's name is
	// inside a string, which masking blanks).
	testDecl *regexp.Regexp
	// testAttr, when set, marks a test by an annotation on its own line
	// (@Test, #[test], [Fact]); the test's name is the first declName
	// match on the lines that follow.
	testAttr *regexp.Regexp
	declName *regexp.Regexp
	skips    []skipRule
	assert   *regexp.Regexp
	// sourceDecl finds a function or method declared in source, to tell a
	// test removed with the code it tested from a test dropped alone.
	sourceDecl *regexp.Regexp
}

// skipRule is one way of skipping or focusing tests.
type skipRule struct {
	re *regexp.Regexp
	// focus marks `.only` and its kin: every other test stops running.
	focus bool
	// imperative marks a skip called at run time (t.Skip, pytest.skip),
	// which may stand under a condition; decorators and x-prefixed tests
	// always skip.
	imperative bool
	// helper marks a skip helper of the project's own
	// (pgxtest.SkipCockroachDB(t, …)): it skips under a condition its
	// name tells.
	helper bool
	// conditional marks a decorator that skips under its condition
	// (pytest.mark.skipif).
	conditional bool
}

var (
	reJSTestFile = regexp.MustCompile(`\.(test|spec)\.[cm]?[jt]sx?$`)
	reJVMTest    = regexp.MustCompile(`(Test|Tests|IT|Spec)\.(java|kt)$|^Test\w*\.(java|kt)$`)
	reCSTest     = regexp.MustCompile(`(Test|Tests|Spec|Specs)\.cs$`)
)

// hasDir reports whether one of p's directories is named one of names.
func hasDir(p string, names ...string) bool {
	dirs := strings.Split(path.Dir(p), "/")
	for _, d := range dirs {
		if slices.Contains(names, d) {
			return true
		}
	}
	return false
}

var ecosystems = []*ecosystem{
	{
		name:   "go",
		label:  "Go",
		exts:   []string{".go"},
		syntax: syntaxC,
		isTest: func(p string) bool { return strings.HasSuffix(p, "_test.go") },
		// TestMain is the harness, not a test.
		testDecl: regexp.MustCompile(`^\s*func\s+(?P<name>(Test|Fuzz)(\w*))\s*\(`),
		skips: []skipRule{
			{re: regexp.MustCompile(`(\b[tbf]b?|\bT\(\))\.(Skip|SkipNow|Skipf)\(`), imperative: true},
			{re: regexp.MustCompile(`(^|[^\w.]|\b\w+\.)[Ss]kip(If|Unless|On|When|For)?[A-Z_]\w*\(\s*(t|b|tb)\s*[,)]`), imperative: true, helper: true},
		},
		assert:     regexp.MustCompile(`\b(t|b|tb|tt|f)\.(Error|Errorf|Fatal|Fatalf|Fail|FailNow)\(|\b(assert|require)\.[A-Z]\w*\(`),
		sourceDecl: regexp.MustCompile(`^\s*func\s+(\([^)]*\)\s*)?(?P<name>\w+)\s*[\[(]`),
	},
	{
		name:   "python",
		label:  "Python",
		exts:   []string{".py"},
		syntax: syntaxPython,
		isTest: func(p string) bool {
			b := path.Base(p)
			return strings.HasPrefix(b, "test_") || strings.HasSuffix(b, "_test.py") || b == "conftest.py" || hasDir(p, "tests", "test")
		},
		testDecl: regexp.MustCompile(`^\s*(async\s+)?def\s+(?P<name>test\w*)\s*\(`),
		skips: []skipRule{
			{re: regexp.MustCompile(`^\s*@(pytest\.mark\.skip|unittest\.skip|skip)\b`)},
			// skipif and its kin skip where a condition holds (Windows, a
			// missing tool), and run everywhere else.
			{re: regexp.MustCompile(`^\s*@(pytest\.mark\.skipif|unittest\.skip(If|Unless)|skip(If|Unless))\b`), conditional: true},
			{re: regexp.MustCompile(`\bpytest\.skip\(|\bself\.skipTest\(`), imperative: true},
		},
		assert:     regexp.MustCompile(`^\s*assert\b|\bself\.assert\w*\(|\bpytest\.raises\(|\bself\.fail\(`),
		sourceDecl: regexp.MustCompile(`^\s*(async\s+)?def\s+(?P<name>\w+)\s*\(`),
	},
	{
		name:   "javascript",
		label:  "JavaScript/TypeScript",
		exts:   []string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"},
		syntax: syntaxC,
		isTest: func(p string) bool {
			return reJSTestFile.MatchString(p) || hasDir(p, "__tests__", "test", "tests", "spec", "e2e", "cypress")
		},
		testDecl: regexp.MustCompile(`(^|[^.\w])[xf]?(it|test|specify)(\.(only|skip|concurrent|failing)|\.each\b[^(]*\([^)]*\))?\s*\(\s*(['"` + "`" + `])(?P<name>[^'"` + "`" + `]*)`),
		skips: []skipRule{
			{re: regexp.MustCompile(`\b(it|describe|test|context|suite|specify)\.skip\b|(^|[^.\w])x(it|describe|test|context|specify)\s*\(`)},
			{re: regexp.MustCompile(`\b(it|describe|test|context|suite|specify)\.only\b|(^|[^.\w])f(it|describe|context)\s*\(`), focus: true},
		},
		assert:     regexp.MustCompile(`\bexpect\s*\(|\bexpect\.\w+\(|\bassert(\.\w+)?\s*\(|\.should\b`),
		sourceDecl: regexp.MustCompile(`\bfunction\s*\*?\s*(?P<name>\w+)\s*\(|^\s*(export\s+)?(const|let|var)\s+(?P<name2>\w+)\s*=\s*(async\s*)?(\(|function)`),
	},
	{
		name:   "jvm",
		label:  "Java/Kotlin",
		exts:   []string{".java", ".kt"},
		syntax: syntaxC,
		isTest: func(p string) bool {
			return strings.Contains("/"+p, "/src/test/") || reJVMTest.MatchString(path.Base(p))
		},
		testAttr: regexp.MustCompile(`@(Test|ParameterizedTest|RepeatedTest|TestFactory)\b`),
		declName: regexp.MustCompile(`\b(void|fun)\s+(?P<name>\w+|` + "`[^`]+`" + `)\s*\(`),
		skips: []skipRule{
			{re: regexp.MustCompile(`@(Disabled|Ignore)\b`)},
		},
		assert:     regexp.MustCompile(`\bassert\w*\s*\(|\bAssertions?\.\w+\(|^\s*assert\s|\bverify\s*\(`),
		sourceDecl: regexp.MustCompile(`\b(void|fun|[A-Z]\w*(<[^>]*>)?)\s+(?P<name>[a-z]\w*)\s*\([^;]*$`),
	},
	{
		name:   "ruby",
		label:  "Ruby",
		exts:   []string{".rb"},
		syntax: syntaxRuby,
		isTest: func(p string) bool {
			b := path.Base(p)
			return strings.HasSuffix(b, "_spec.rb") || strings.HasSuffix(b, "_test.rb") || strings.HasPrefix(b, "test_") || hasDir(p, "spec", "test")
		},
		testDecl: regexp.MustCompile(`^\s*[xf]?(it|specify|scenario|test)\s*\(?\s*(['"])(?P<name>[^'"]*)|^\s*def\s+(?P<name2>test_\w+)`),
		skips: []skipRule{
			{re: regexp.MustCompile(`^\s*(xit|xdescribe|xcontext|xspecify|xscenario)\b`)},
			{re: regexp.MustCompile(`^\s*(skip|pending)\b`), imperative: true},
			{re: regexp.MustCompile(`^\s*(fit|fdescribe|fcontext)\b|\bfocus:\s*true\b|,\s*:focus\b`), focus: true},
		},
		assert:     regexp.MustCompile(`\bexpect\s*[({]|\bassert\w*\b|\.should\b|\brefute\w*\b|\bmust_\w+|\bwont_\w+`),
		sourceDecl: regexp.MustCompile(`^\s*def\s+(self\.)?(?P<name>\w+[?!]?)`),
	},
	{
		name:   "rust",
		label:  "Rust",
		exts:   []string{".rs"},
		syntax: syntaxRust,
		// Unit tests live in the same file under #[cfg(test)]; see
		// testRegion.
		isTest:   func(p string) bool { return hasDir(p, "tests") },
		testAttr: regexp.MustCompile(`#\[(tokio::)?test\b`),
		declName: regexp.MustCompile(`\bfn\s+(?P<name>\w+)\s*[<(]`),
		skips: []skipRule{
			{re: regexp.MustCompile(`#\[ignore\b`)},
		},
		assert:     regexp.MustCompile(`\b(assert|assert_eq|assert_ne|assert_matches|debug_assert|debug_assert_eq|debug_assert_ne)!\s*[(\[]`),
		sourceDecl: regexp.MustCompile(`\bfn\s+(?P<name>\w+)\s*[<(]`),
	},
	{
		name:   "csharp",
		label:  "C#",
		exts:   []string{".cs"},
		syntax: syntaxC,
		isTest: func(p string) bool {
			if reCSTest.MatchString(path.Base(p)) {
				return true
			}
			for _, d := range strings.Split(path.Dir(p), "/") {
				if strings.HasSuffix(d, ".Tests") || strings.HasSuffix(d, ".Test") || d == "Tests" || d == "test" || d == "tests" {
					return true
				}
			}
			return false
		},
		testAttr: regexp.MustCompile(`\[\s*(Fact|Theory|Test|TestMethod|TestCase)\b`),
		declName: regexp.MustCompile(`\b(void|Task)\s+(?P<name>\w+)\s*\(`),
		skips: []skipRule{
			{re: regexp.MustCompile(`\[\s*Ignore\b|\b(Fact|Theory)\s*\([^)]*\bSkip\s*=`)},
		},
		assert:     regexp.MustCompile(`\bAssert\.\w+\s*\(|\.Should\(\)`),
		sourceDecl: regexp.MustCompile(`\b(void|Task(<[^>]*>)?|[A-Z]\w*(<[^>]*>)?)\s+(?P<name>[A-Z]\w*)\s*\([^;]*$`),
	},
}

// ecosystemOf returns the ecosystem of the file at p, or nil for a file
// no ecosystem claims (documentation, configuration, data).
func ecosystemOf(p string) *ecosystem {
	ext := path.Ext(p)
	for _, e := range ecosystems {
		if slices.Contains(e.exts, ext) {
			return e
		}
	}
	return nil
}

// name returns the first non-empty named group of re's match in line.
func matchName(re *regexp.Regexp, line string) (string, bool) {
	m := re.FindStringSubmatchIndex(line)
	if m == nil {
		return "", false
	}
	for i, n := range re.SubexpNames() {
		if strings.HasPrefix(n, "name") && m[2*i] >= 0 {
			return line[m[2*i]:m[2*i+1]], true
		}
	}
	return "", true
}

// notSourceDirs hold code that is not the product's logic, or tests'
// helpers: a change there does not call for a test.
var notSourceDirs = []string{
	"doc", "docs", "example", "examples", "sample", "samples", "script", "scripts",
	"testdata", "fixtures", "fixture", "testutil", "testutils", "testing", "testhelpers",
	"mocks", "mock", "fakes", "bench", "benchmarks", "benches", "migrations", "hack",
	".github", ".circleci", "third_party", "vendor", "node_modules", "stories", ".storybook",
}

// reNotSourceName matches file names that are wiring, configuration,
// declarations or test support rather than logic to test.
var reNotSourceName = regexp.MustCompile(`^(main\.go|doc\.go|setup\.py|manage\.py|conftest\.py|__init__\.py|__main__\.py|build\.rs|Program\.cs|AssemblyInfo\.cs|Startup\.cs)$|` +
	`\.(config|conf|setup|stories|story|d)\.[cm]?[jt]sx?$|^\..*rc\.[cm]?js$|` +
	`(_mock|_mocks|_fake|_gen|_string)\.go$|^(mock|fake)_.*\.go$|\.pb\.go$|\.designer\.cs$`)

// isSource reports whether p is product code whose changes want tests.
func isSource(e *ecosystem, p string) bool {
	if e.isTest(p) || hasDir(p, notSourceDirs...) || reNotSourceName.MatchString(path.Base(p)) {
		return false
	}
	// Directories of test support code, like Go's storetest or
	// httptest packages.
	for _, d := range strings.Split(path.Dir(p), "/") {
		if strings.HasSuffix(d, "test") || strings.HasSuffix(d, "tests") {
			return false
		}
	}
	return true
}

// rePunct matches lines of code that carry no logic: closing brackets,
// Ruby's end, lone keywords.
var rePunct = regexp.MustCompile(`^[\s{}()\[\];,]*$|^\s*(end|else|pass|break|continue|\}\s*else\s*\{)\s*$`)

// reImport matches lines that declare a package or bring in names.
var reImport = regexp.MustCompile(`^\s*(package|import|from\s+\S+\s+import|use|using|require|require_relative|#include|mod\s+\w+;|extern crate)\b|^\s*"[^"]*"\s*$|^\s*\w+\s+"[^"]*"\s*$`)

// isLogic reports whether a masked line of code carries logic worth a
// test: not blank, not a comment, not punctuation, not an import.
func isLogic(masked string) bool {
	if strings.TrimSpace(masked) == "" || rePunct.MatchString(masked) {
		return false
	}
	return !reImport.MatchString(masked)
}

// subject is what a test file or test tests, by convention: foo_test.go,
// test_foo.py, foo.test.ts, FooTest.java and foo_spec.rb all test "foo";
// TestFoo and test_foo test "foo". Lower case, without underscores.
func subject(name string) string {
	b := path.Base(name)
	if i := strings.IndexByte(b, '.'); i > 0 {
		b = b[:i]
	}
	for _, s := range []string{"_test", "_spec", "Tests", "Test", "Spec", "IT"} {
		b = strings.TrimSuffix(b, s)
	}
	for _, p := range []string{"test_", "Test", "test"} {
		b = strings.TrimPrefix(b, p)
	}
	if i := strings.IndexByte(b, '_'); i > 0 && strings.HasPrefix(name, "Test") {
		b = b[:i] // TestFoo_bar tests Foo
	}
	return strings.ToLower(strings.ReplaceAll(b, "_", ""))
}

// severities of the findings.
const (
	sevUntested = specialist.SeverityLow
	sevDeleted  = specialist.SeverityMedium
	sevSkip     = specialist.SeverityMedium
	sevFocus    = specialist.SeverityHigh
	sevAssert   = specialist.SeverityMedium
	sevExport   = specialist.SeverityLow
)
