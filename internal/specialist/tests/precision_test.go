package tests

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
)

// The cases below mirror noise the specialist produced on ordinary
// merged commits of public Go repositories (docs/review-quality.md, "tests
// specialist"): each failed before the rule it tests was reworked.

// storeFiles is a package with a Store and a test that calls its Get, and
// a package without tests whose five files call Get eight times each.
func storeFiles(call string) map[string]string {
	files := map[string]string{
		"store/store.go": "package store\n\n// Store holds values.\ntype Store struct{ m map[string]int }\n\n" +
			"// Get returns the value of k.\nfunc (s *Store) Get(k string) int { return s.m[k] }\n",
		"store/store_test.go": "package store\n\nimport \"testing\"\n\nfunc TestGet(t *testing.T) {\n" +
			"\ts := &Store{m: map[string]int{\"a\": 1}}\n\tif got := s.Get(\"a\"); got != 1 {\n\t\tt.Errorf(\"Get = %d\", got)\n\t}\n}\n",
	}
	for i := range 5 {
		var b strings.Builder
		fmt.Fprintf(&b, "package report\n\nimport \"example.com/store\"\n\n// Sum%d adds values.\nfunc Sum%d(s *store.Store) int {\n\ttotal := 0\n", i, i)
		for j := range 8 {
			fmt.Fprintf(&b, "\ttotal += %s\"k%d\")\n", call, j)
		}
		b.WriteString("\treturn total\n}\n")
		files[fmt.Sprintf("report/sum%d.go", i)] = b.String()
	}
	return files
}

// A method renamed and given a new argument, its callers in five files
// updated, is not new behavior: no coverage advice, once or five times.
func TestGoRenameTouchingFiveCallersIsClean(t *testing.T) {
	t.Parallel()
	base := storeFiles("s.Get(")
	head := storeFiles("s.Lookup(nil, ")
	head["store/store.go"] = strings.Replace(head["store/store.go"], "func (s *Store) Get(k string) int",
		"func (s *Store) Lookup(_ any, k string) int", 1)
	head["store/store_test.go"] = strings.Replace(head["store/store_test.go"], `s.Get("a")`, `s.Lookup(nil, "a")`, 1)
	fs, _, files := runReview(t, nil, base, head)
	check(t, fs, files)
}

// scoreSource is a package pkg whose Score function has 45 branches of new
// logic.
func scoreSource(pkg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\n// Score scores v.\nfunc Score(v int) int {\n\tr := 0\n", pkg)
	for i := range 45 {
		fmt.Fprintf(&b, "\tif v > %d {\n\t\tr += %d\n\t}\n", i, i*3)
	}
	b.WriteString("\treturn r\n}\n")
	return b.String()
}

// New behavior in several files of untested packages is one finding, on
// the first file, naming them all, and never above low however large.
func TestGoCoverageAdviceIsOneLowFinding(t *testing.T) {
	t.Parallel()
	// The repository keeps Go tests, elsewhere.
	base := map[string]string{"README.md": "x\n", "other/other_test.go": "package other\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n"}
	fs, _, files := runReview(t, nil, base, map[string]string{"alpha/score.go": scoreSource("alpha"), "beta/score.go": scoreSource("beta")})
	// The exports of the files it names are not reported again.
	check(t, fs, files, want{"alpha/score.go", "", RuleUntestedChange, "low"})
	for _, f := range fs {
		if f.Rule == RuleUntestedChange && !(strings.Contains(f.Body, "alpha/score.go") && strings.Contains(f.Body, "beta/score.go")) {
			t.Errorf("coverage finding does not name both files: %s", f.Body)
		}
	}
}

// A repository that keeps no test in a language (knadh/listmonk: no Go
// test in 94 Go files) gets no coverage advice, nor untested exports, in
// that language: every change would get it, and the team would mute it.
func TestGoNoCoverageAdviceWhereTheRepositoryKeepsNoTests(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, map[string]string{"README.md": "x\n", "web/app.test.js": "test('x', () => {})\n"},
		map[string]string{"alpha/score.go": scoreSource("alpha")})
	check(t, fs, files)
}

// A Go package that had no test before the change (the handlers of
// NyaaPantsu/nyaa, prest's adapters) gets no coverage advice, though the
// repository tests other packages: its team does not test it, and would
// get the note on every change. A new package still does (see
// TestGoCoverageAdviceIsOneLowFinding).
func TestGoNoCoverageAdviceInPackageNeverTested(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, map[string]string{
		"handlers/doc.go":     "// Package handlers handles.\npackage handlers\n",
		"other/other_test.go": "package other\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n",
	}, map[string]string{"handlers/score.go": scoreSource("handlers")})
	check(t, fs, files)
}

// New logic in a function the package's existing tests already call is
// exercised by them: no coverage advice. Logic in a function no test
// reaches still gets it.
func TestGoChangeInFunctionExistingTestsCallIsClean(t *testing.T) {
	t.Parallel()
	branchy := strings.Replace(goCalc, "func Add(a, b int) int { return a + b }", `func Add(a, b int) int {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	sum := a
	for i := 0; i < b; i++ {
		sum++
	}
	for i := 0; i > b; i-- {
		sum--
	}
	return sum
}`, 1)
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"calc/calc.go": branchy})
	check(t, fs, files)
}

// A function moved to another package, exported on the way, is neither an
// untested export nor new behavior.
func TestGoFunctionMovedToAnotherPackageIsClean(t *testing.T) {
	t.Parallel()
	fn := `func %s(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	if len(r) == 0 {
		return ""
	}
	out := string(r)
	out = strings.TrimSpace(out)
	out = strings.ToLower(out)
	return out
}
`
	base := goBase()
	base["calc/text.go"] = "package calc\n\nimport \"strings\"\n\n" + fmt.Sprintf(fn, "reverse") +
		"\n// Title reverses s.\nfunc Title(s string) string { return reverse(s) }\n"
	base["calc/text_test.go"] = "package calc\n\nimport \"testing\"\n\nfunc TestTitle(t *testing.T) {\n\tif Title(\"ab\") != \"ba\" {\n\t\tt.Error(\"title\")\n\t}\n}\n"
	fs, _, files := runReview(t, nil, base, map[string]string{
		"calc/text.go": "package calc\n\nimport \"example.com/calc/strutil\"\n\n// Title reverses s.\nfunc Title(s string) string { return strutil.Reverse(s) }\n",
		"calc/strutil/strutil.go": "// Package strutil works on strings.\npackage strutil\n\nimport \"strings\"\n\n// Reverse reverses s.\n" +
			fmt.Sprintf(fn, "Reverse"),
	})
	check(t, fs, files)
}

// parseTest is a test of a Parse that returns an error.
const parseTest = `package calc

import "testing"

func TestParse(t *testing.T) {
	v, err := Parse("1")
	if err != nil {
		t.Fatal(err)
	}
	if v != 1 {
		t.Errorf("Parse = %d", v)
	}
}

func TestParseTwo(t *testing.T) {
	v, err := Parse("2")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if v != 2 {
		t.Errorf("Parse = %d", v)
	}
}
`

// A call that stopped returning an error takes its error checks with it:
// nothing is left to assert, and nothing is reported.
func TestGoCheckGoneWithItsErrorIsClean(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"calc/parse.go":      "package calc\n\nimport \"strconv\"\n\n// Parse parses s.\nfunc Parse(s string) (int, error) { return strconv.Atoi(s) }\n",
		"calc/parse_test.go": parseTest,
	}
	head := strings.ReplaceAll(parseTest, "v, err := Parse", "v := Parse")
	head = strings.Replace(head, "\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n", "", 1)
	head = strings.Replace(head, "\tif err != nil {\n\t\tt.Fatalf(\"Parse: %v\", err)\n\t}\n", "", 1)
	fs, _, files := runReview(t, nil, base, map[string]string{
		"calc/parse.go":      "package calc\n\nimport \"strconv\"\n\n// Parse parses s; 0 when it is no number.\nfunc Parse(s string) int { n, _ := strconv.Atoi(s); return n }\n",
		"calc/parse_test.go": head,
	})
	check(t, fs, files)
}

// An error check dropped while the call still returns the error, assigned
// and unchecked, is reported; one rewritten as require.NoError is not.
func TestGoErrorCheckDroppedIsReported(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"calc/parse.go":      "package calc\n\nimport \"strconv\"\n\n// Parse parses s.\nfunc Parse(s string) (int, error) { return strconv.Atoi(s) }\n",
		"calc/parse_test.go": parseTest,
	}
	head := strings.Replace(parseTest, "\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n", "\t_ = err // TODO\n", 1)
	head = strings.Replace(head, "\tif err != nil {\n\t\tt.Fatalf(\"Parse: %v\", err)\n\t}\n", "\trequire.NoError(t, err)\n", 1)
	fs, _, files := runReview(t, nil, base, map[string]string{"calc/parse_test.go": head})
	check(t, fs, files, want{"calc/parse_test.go", "_ = err // TODO", RuleAssertionRemoved, "medium"})
}

// A debug t.Error dropped while the real comparison stays is no loss.
func TestGoDroppedDebugErrorIsClean(t *testing.T) {
	t.Parallel()
	base := goBase()
	base["calc/calc_test.go"] = strings.Replace(goCalcTest, "\t\tt.Errorf(\"Add(1, 2) = %d, want 3\", got)\n",
		"\t\tt.Error(\"debug: Add mismatch\")\n\t\tt.Errorf(\"Add(1, 2) = %d, want 3\", got)\n", 1)
	fs, _, files := runReview(t, nil, base, map[string]string{"calc/calc_test.go": goCalcTest})
	check(t, fs, files)
}

// Checks rewritten with an assertion object (r := require.New(t)) are
// still checks.
func TestGoChecksRewrittenWithRequireNewAreClean(t *testing.T) {
	t.Parallel()
	head := strings.Replace(goCalcTest, `	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}`, `	r := require.New(t)
	got := Add(1, 2)
	r.Equal(3, got)`, 1)
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"calc/calc_test.go": head})
	check(t, fs, files)
}

// A skip in a test the change adds (a platform guard) is how the test is
// written; in a test that ran before it is reported.
func TestGoSkipInNewTestIsClean(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go": goCalcTest + "\nfunc TestAddWindows(t *testing.T) {\n\tif runtime.GOOS != \"windows\" {\n\t\tt.SkipNow()\n\t}\n\tif Add(1, 1) != 2 {\n\t\tt.Error(\"add\")\n\t}\n}\n",
	})
	check(t, fs, files)

	fs, _, files = runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go": goCalcTest + "\nfunc TestAddLater(t *testing.T) {\n\tt.Skip(\"later\")\n\tif Add(1, 1) != 2 {\n\t\tt.Error(\"add\")\n\t}\n}\n",
	})
	check(t, fs, files, want{"calc/calc_test.go", `t.Skip("later")`, RuleSkipAdded, "low"})
}

// Tests removed with the type they tested (the flag type folded into
// another), and tests merged into one table test, are not lost.
func TestGoTestsRemovedWithTheirTypeOrMergedAreClean(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"flag/int.go":   "package flag\n\n// IntFlag is an int flag.\ntype IntFlag struct{ V int }\n",
		"flag/int64.go": "package flag\n\n// Int64Flag is an int64 flag.\ntype Int64Flag struct{ V int64 }\n\n// Get returns the value.\nfunc (f *Int64Flag) Get() int64 { return f.V }\n",
		"flag/flag_test.go": "package flag\n\nimport \"testing\"\n\n" +
			"func TestInt64Value(t *testing.T) {\n\tf := &Int64Flag{V: 2}\n\tif f.V != 2 {\n\t\tt.Error(\"v\")\n\t}\n}\n\n" +
			"func TestGroupGet(t *testing.T) {\n\tcheckMethod(t, \"GET\")\n}\n\n" +
			"func TestGroupPost(t *testing.T) {\n\tcheckMethod(t, \"POST\")\n}\n\n" +
			"func checkMethod(t *testing.T, m string) {\n\tif m == \"\" {\n\t\tt.Error(\"empty\")\n\t}\n}\n",
	}
	fs, _, files := runReview(t, nil, base, map[string]string{
		"flag/int64.go": "",
		"flag/flag_test.go": "package flag\n\nimport \"testing\"\n\n" +
			"func TestGroup(t *testing.T) {\n\tfor _, m := range []string{\"GET\", \"POST\"} {\n\t\tcheckMethod(t, m)\n\t}\n}\n\n" +
			"func checkMethod(t *testing.T, m string) {\n\tif m == \"\" {\n\t\tt.Error(\"empty\")\n\t}\n}\n",
	})
	check(t, fs, files)
}

// Small exported predicates that tested code calls are exercised by the
// package's tests, even when no test names them.
func TestGoExportCalledByTestedCodeIsClean(t *testing.T) {
	t.Parallel()
	base := goBase()
	fs, _, files := runReview(t, nil, base, map[string]string{
		"calc/calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\tif IsZero(a) {\n\t\treturn b\n\t}\n\treturn a + b\n}\n\n" +
			"// IsZero reports whether v is 0.\nfunc IsZero(v int) bool { return v == 0 }\n",
	})
	check(t, fs, files)
}

// A feature reverted, its source file deleted, takes its test with it.
func TestGoTestRemovedWithRevertedFeatureIsClean(t *testing.T) {
	t.Parallel()
	base := goBase()
	base["calc/detect.go"] = "package calc\n\nimport \"os\"\n\nfunc init() { testing = len(os.Args) > 0 }\n\nvar testing bool\n"
	base["calc/calc_test.go"] = goCalcTest + "\nfunc TestNoOSArgs(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Error(\"add\")\n\t}\n}\n"
	fs, _, files := runReview(t, nil, base, map[string]string{"calc/detect.go": "", "calc/calc_test.go": goCalcTest})
	check(t, fs, files)
}

// An exported wrapper that only hands its arguments on, or a getter that
// returns a field as it is, is not worth a test of its own; one that
// computes is.
func TestGoDelegatingExportIsClean(t *testing.T) {
	t.Parallel()
	head := map[string]string{
		"calc/calc.go": goCalc + "\n// AddTo adds b to a.\nfunc AddTo(a, b int) int {\n\treturn sum(a, b)\n}\n\nfunc sum(a, b int) int { return a + b }\n\n" +
			"// Acc accumulates.\ntype Acc struct{ n int }\n\n// N is the sum so far.\nfunc (a *Acc) N() int {\n\treturn a.n\n}\n\n" +
			"// Twice doubles a.\nfunc Twice(a int) int {\n\treturn 2 * a\n}\n",
	}
	fs, _, files := runReview(t, nil, goBase(), head)
	check(t, fs, files, want{"calc/calc.go", "func Twice", RuleUntestedExport, "low"})
}

// A skip helper of the project's own added to a test that ran before
// (pgx's pgxtest.SkipCockroachDB(t, conn, "…")) is a skip, conditional by
// its name; a helper that merely mentions skipping in another argument
// position, or a t.Skip mentioned in a string, is not.
func TestGoSkipHelperAddedIsReported(t *testing.T) {
	t.Parallel()
	head := strings.Replace(goCalcTest, "func TestAddZero(t *testing.T) {\n",
		"func TestAddZero(t *testing.T) {\n\ttestutil.SkipCockroachDB(t, conn, \"known server issue\")\n\tlog(\"skipIf(t) is not called here\")\n\tskipper.Run(ctx, t)\n", 1)
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"calc/calc_test.go": head})
	check(t, fs, files, want{"calc/calc_test.go", `testutil.SkipCockroachDB(t, conn, "known server issue")`, RuleSkipAdded, "low"})
}

// A helper call or an assertion of a test commented out (shiori's
// `// testSqliteGetBookmarksWithDash(t)`) no longer runs; a debug print
// commented out, or a comment that is not a deleted line, is no loss.
func TestGoTestCodeCommentedOutIsReported(t *testing.T) {
	t.Parallel()
	base := strings.Replace(goCalcTest, "func TestAddZero(t *testing.T) {\n",
		"func TestAddZero(t *testing.T) {\n\tcheckDash(t)\n\tfmt.Println(\"debug\")\n", 1)
	head := strings.Replace(goCalcTest, "func TestAddZero(t *testing.T) {\n",
		"func TestAddZero(t *testing.T) {\n\t// checkDash(t)\n\t// fmt.Println(\"debug\")\n\t// checkOther(t)\n", 1)
	head = strings.Replace(head, "\t\tt.Fatalf(\"Add(0, 0) = %d\", got)\n", "\t\t// t.Fatalf(\"Add(0, 0) = %d\", got)\n", 1)
	b := goBase()
	b["calc/calc_test.go"] = base
	fs, _, files := runReview(t, nil, b, map[string]string{"calc/calc_test.go": head})
	check(t, fs, files,
		want{"calc/calc_test.go", "// checkDash(t)", RuleCommentedOut, "medium"},
		want{"calc/calc_test.go", "// t.Fatalf(\"Add(0, 0) = %d\", got)", RuleAssertionRemoved, "medium"})
}

// A test removed with the behaviour it checked, taken out of a function
// that stays (filebrowser fb6aeba moved the scope collision check out of
// CreateUserHome, and TestCreateUserHomeRejectsCollision with it), is no
// loss; a test removed while its function keeps its logic still is.
func TestGoTestRemovedWithBehaviourTakenOutIsClean(t *testing.T) {
	t.Parallel()
	src := "package home\n\nimport \"errors\"\n\n// Taken reports whether scope is in use.\nvar Taken func(string) bool\n\n// Create makes the home of user.\nfunc Create(user string) (string, error) {\n\tscope := \"/users/\" + user\n\tif Taken != nil && Taken(scope) {\n\t\terr := errors.New(\"scope taken\")\n\t\treturn \"\", err\n\t}\n\treturn scope, nil\n}\n\n// Base is the base of scope.\nfunc Base(scope string) string {\n\tif scope == \"\" {\n\t\treturn \"/\"\n\t}\n\treturn scope\n}\n"
	test := "package home\n\nimport \"testing\"\n\nfunc TestCreate(t *testing.T) {\n\tif s, _ := Create(\"a\"); s != \"/users/a\" {\n\t\tt.Fatal(s)\n\t}\n}\n\nfunc TestCreateRejectsCollision(t *testing.T) {\n\tTaken = func(string) bool { return true }\n\tif _, err := Create(\"a\"); err == nil {\n\t\tt.Fatal(\"no error\")\n\t}\n}\n\nfunc TestBaseEmpty(t *testing.T) {\n\tif Base(\"\") != \"/\" {\n\t\tt.Fatal(\"base\")\n\t}\n}\n"
	headSrc := strings.Replace(src, "\tif Taken != nil && Taken(scope) {\n\t\terr := errors.New(\"scope taken\")\n\t\treturn \"\", err\n\t}\n", "", 1)
	headSrc = strings.Replace(headSrc, "import \"errors\"\n\n", "", 1)
	headTest := strings.Replace(test, "func TestCreateRejectsCollision(t *testing.T) {\n\tTaken = func(string) bool { return true }\n\tif _, err := Create(\"a\"); err == nil {\n\t\tt.Fatal(\"no error\")\n\t}\n}\n\n", "", 1)
	fs, _, files := runReview(t, nil, map[string]string{"home/home.go": src, "home/home_test.go": test},
		map[string]string{"home/home.go": headSrc, "home/home_test.go": headTest})
	check(t, fs, files)

	// Base keeps its logic: removing its test is reported.
	headTest = strings.Replace(test, "func TestBaseEmpty(t *testing.T) {\n\tif Base(\"\") != \"/\" {\n\t\tt.Fatal(\"base\")\n\t}\n}\n", "", 1)
	fs, _, _ = runReview(t, nil, map[string]string{"home/home.go": src, "home/home_test.go": test},
		map[string]string{"home/home.go": src, "home/home_test.go": headTest})
	if len(fs) != 1 || fs[0].Rule != RuleTestDeleted || !strings.Contains(fs[0].Headline, "TestBaseEmpty") {
		t.Fatalf("findings %+v, want TestBaseEmpty's removal", fs)
	}
}

// pyScore is a Python module whose score function has 30 branches of new
// logic.
func pyScore() string {
	var b strings.Builder
	b.WriteString("def score(v):\n    r = 0\n")
	for i := range 30 {
		fmt.Fprintf(&b, "    if v > %d:\n        r += %d\n", i, i*3)
	}
	b.WriteString("    return r\n")
	return b.String()
}

// In a collection of small projects (geekcomputers/Python: 800 scripts in
// 300 directories, a dozen of them with tests) the tests of one project say
// nothing of the others: new logic in an untested project gets no coverage
// advice; in the tested one it still does.
func TestPythonCoverageAdviceOnlyWhereTheProjectKeepsTests(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"BrowserHistory/history.py":            "def visit(u):\n    return u\n",
		"BrowserHistory/tests/test_history.py": "from history import visit\n\n\ndef test_visit():\n    assert visit(1) == 1\n",
		"bank/backend.py":                      "def balance():\n    return 0\n",
		"dir_test.py":                          "import os\n\nprint(os.path.isdir('x'))\n",
	}
	fs, _, files := runReview(t, nil, base, map[string]string{"bank/score.py": pyScore()})
	check(t, fs, files)
	fs, _, files = runReview(t, nil, base, map[string]string{"BrowserHistory/score.py": pyScore()})
	check(t, fs, files, want{"BrowserHistory/score.py", "", RuleUntestedChange, "low"})
	// A script named like a test at the root declares no test: the
	// scripts at the root have none. A real test there covers them.
	fs, _, files = runReview(t, nil, base, map[string]string{"area.py": pyScore()})
	check(t, fs, files)
	base["test_area.py"] = "from area import score\n\n\ndef test_score():\n    assert score(0) == 0\n"
	fs, _, files = runReview(t, nil, base, map[string]string{"area.py": pyScore()})
	check(t, fs, files, want{"area.py", "", RuleUntestedChange, "low"})
}

// descSource is a package whose Desc keeps the error of its making, read
// through the field at base and through an accessor at head.
const descSource = "package metric\n\nimport \"errors\"\n\n// Desc describes a metric.\ntype Desc struct{ err error }\n\n" +
	"// NewDesc makes a Desc; its error says what is wrong with name.\nfunc NewDesc(name string) *Desc {\n\tif name == \"\" {\n\t\treturn &Desc{err: errors.New(\"empty name\")}\n\t}\n\treturn &Desc{}\n}\n"

const descTest = `package metric

import "testing"

func TestNewDescEmptyName(t *testing.T) {
	desc := NewDesc("")
	if desc.err == nil {
		t.Errorf("NewDesc: want an error, got %v", desc.err)
	}
}
`

// A check rewritten from a field to its new accessor (desc.err to
// desc.Err()) still checks the same subject: not an assertion removed.
// The check dropped while desc is still made is.
func TestGoCheckRewrittenToAccessorIsClean(t *testing.T) {
	t.Parallel()
	base := map[string]string{"metric/desc.go": descSource, "metric/desc_test.go": descTest}
	head := map[string]string{
		"metric/desc.go":      descSource + "\n// Err is the error of the Desc's making.\nfunc (d *Desc) Err() error { return d.err }\n",
		"metric/desc_test.go": strings.ReplaceAll(descTest, "desc.err", "desc.Err()"),
	}
	fs, _, files := runReview(t, nil, base, head)
	check(t, fs, files)

	head["metric/desc_test.go"] = strings.Replace(descTest, "\tif desc.err == nil {\n\t\tt.Errorf(\"NewDesc: want an error, got %v\", desc.err)\n\t}\n", "\t_ = desc.Err()\n", 1)
	fs, _, files = runReview(t, nil, base, head)
	check(t, fs, files, want{"metric/desc_test.go", "_ = desc.Err()", RuleAssertionRemoved, "medium"})
}

const jsFindTest = `import { find } from "./find";

describe("find", () => {
  it("finds by id", () => {
    const results = find(db, id);
    const count = db.count();
    expect(results).toHaveLength(1);
    expect(results[0].id).toBe(id);
    expect(count).toBe(3);
  });
});
`

// An expectation replaced by a stricter one on the same subject
// (toHaveLength(1) and a member's toBe by toEqual of the whole list)
// checks more, not less: not an assertion removed. One whose subject is
// no longer checked at all is.
func TestJSExpectationMadeStricterIsClean(t *testing.T) {
	t.Parallel()
	base := map[string]string{"src/find.ts": "export function find(db, id) { return db.get(id); }\n", "src/find.test.ts": jsFindTest, "package.json": "{}\n"}
	stricter := strings.Replace(jsFindTest, "    expect(results).toHaveLength(1);\n    expect(results[0].id).toBe(id);\n",
		"    expect(results).toEqual([{ id }]);\n", 1)
	fs, _, files := runReview(t, nil, base, map[string]string{"src/find.test.ts": stricter})
	check(t, fs, files)

	lost := strings.Replace(stricter, "    expect(count).toBe(3);\n", "", 1)
	fs, _, files = runReview(t, nil, base, map[string]string{"src/find.test.ts": lost})
	check(t, fs, files, want{"src/find.test.ts", "expect(results).toEqual([{ id }]);", RuleAssertionRemoved, "medium"})
	if len(fs) != 1 || !strings.Contains(fs[0].Headline, "expect(count).toBe(3)") {
		t.Errorf("findings %+v, want the count's check named", fs)
	}
}

// feedHandler is a handler of package handler, at base: it asks the store
// whether a category exists and answers 400 when it does not. extra is
// more of its body.
func feedHandler(name, extra string) string {
	return fmt.Sprintf(`package handler

import "net/http"

// %[1]s updates a feed of the category in the request.
func (h *Handler) %[1]s(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("category")
	if !h.store.CategoryExists(id) {
		http.Error(w, "no such category", http.StatusBadRequest)
		return
	}
%[2]s	w.WriteHeader(http.StatusNoContent)
}
`, name, extra)
}

// withError is a handler's change when CategoryExists returns (bool,
// error): the error answered with a 500.
func withError(src string) string {
	return strings.Replace(src, "\tif !h.store.CategoryExists(id) {\n",
		"\texists, err := h.store.CategoryExists(id)\n\tif err != nil {\n\t\thttp.Error(w, err.Error(), http.StatusInternalServerError)\n\t\treturn\n\t}\n\tif !exists {\n", 1)
}

const categoryStore = `package store

import "database/sql"

// Storage is the database.
type Storage struct{ db *sql.DB }

// Count counts the categories.
func (s *Storage) Count() int {
	var n int
	s.db.QueryRow("SELECT count(*) FROM categories").Scan(&n)
	return n
}

// CategoryExists reports whether the category id exists.
func (s *Storage) CategoryExists(id string) bool {
	var result bool
	s.db.QueryRow("SELECT true FROM categories WHERE id=$1", id).Scan(&result)
	return result
}
`

// A change that propagates a new (bool, error) result through the
// handlers (the only new path is a database error the tests cannot
// inject) adds no behavior to test: no coverage advice. A handler given
// new checks of its own still gets it.
func TestGoErrorPropagatedThroughHandlersIsClean(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"store/store.go":          categoryStore,
		"store/store_test.go":     "package store\n\nimport \"testing\"\n\nfunc TestCount(t *testing.T) {\n\tif (&Storage{}).Count() < 0 {\n\t\tt.Error(\"count\")\n\t}\n}\n",
		"handler/handler.go":      "package handler\n\n// Handler serves the API.\ntype Handler struct{ store interface{ CategoryExists(string) bool } }\n",
		"handler/handler_test.go": "package handler\n\nimport \"testing\"\n\nfunc TestHandler(t *testing.T) {\n\tif (&Handler{}) == nil {\n\t\tt.Error(\"nil\")\n\t}\n}\n",
	}
	head := map[string]string{
		"store/store.go": strings.Replace(strings.Replace(categoryStore, "func (s *Storage) CategoryExists(id string) bool {", "func (s *Storage) CategoryExists(id string) (bool, error) {", 1),
			"\ts.db.QueryRow(\"SELECT true FROM categories WHERE id=$1\", id).Scan(&result)\n\treturn result\n",
			"\terr := s.db.QueryRow(\"SELECT true FROM categories WHERE id=$1\", id).Scan(&result)\n\tif err != nil {\n\t\treturn false, fmt.Errorf(\"store: category %s: %w\", id, err)\n\t}\n\treturn result, nil\n", 1),
		"handler/handler.go": "package handler\n\n// Handler serves the API.\ntype Handler struct{ store interface{ CategoryExists(string) (bool, error) } }\n",
	}
	for _, name := range []string{"UpdateFeed", "CreateFeed", "MarkRead"} {
		p := "handler/" + strings.ToLower(name) + ".go"
		base[p] = feedHandler(name, "")
		head[p] = withError(feedHandler(name, ""))
	}
	fs, _, files := runReview(t, nil, base, head)
	check(t, fs, files)

	head["handler/createfeed.go"] = withError(feedHandler("CreateFeed", "\tid = strings.TrimSpace(id)\n\tif len(id) > 64 {\n\t\thttp.Error(w, \"category id too long\", http.StatusBadRequest)\n\t\treturn\n\t}\n"+
		"\tif strings.HasPrefix(id, \"-\") {\n\t\thttp.Error(w, \"category id starts with a dash\", http.StatusBadRequest)\n\t\treturn\n\t}\n"))
	fs, _, files = runReview(t, nil, base, head)
	check(t, fs, files, want{"handler/createfeed.go", "", RuleUntestedChange, "low"})
}

// client is a file of package api whose request is built one builder
// call at a time; chained, the same calls in one expression.
func client(name string, chained bool) string {
	body := "\tb := newBuilder(c.base)\n\tb.Method(\"GET\")\n\tb.Path(path)\n\tb.Header(\"Accept\", \"application/json\")\n\tb.Header(\"User-Agent\", c.agent)\n\tb.Timeout(c.timeout)\n\treturn b.Build()\n"
	if chained {
		body = "\treturn newBuilder(c.base).\n\t\tMethod(\"GET\").\n\t\tPath(path).\n\t\tHeader(\"Accept\", \"application/json\").\n\t\tHeader(\"User-Agent\", c.agent).\n\t\tTimeout(c.timeout).\n\t\tBuild()\n"
	}
	return fmt.Sprintf("package api\n\n// %[1]sRequest makes the request of the %[1]s endpoint.\nfunc (c *Client) %[1]sRequest(path string) *Request {\n%[2]s}\n", name, body)
}

// Builder calls rewritten as one method chain (each method returns the
// builder) are the same calls: no new behavior, no coverage advice. A
// chain that makes a new call is new behavior.
func TestGoBuilderCallsChainedIsClean(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"api/builder.go":  "package api\n\n// Client calls the API.\ntype Client struct{ base, agent string; timeout int }\n\n// Request is a request.\ntype Request struct{}\n",
		"api/api_test.go": "package api\n\nimport \"testing\"\n\nfunc TestClient(t *testing.T) {\n\tif (&Client{}) == nil {\n\t\tt.Error(\"nil\")\n\t}\n}\n",
	}
	head := map[string]string{}
	for _, name := range []string{"Users", "Groups", "Feeds"} {
		p := "api/" + strings.ToLower(name) + ".go"
		base[p] = client(name, false)
		head[p] = client(name, true)
	}
	fs, _, files := runReview(t, nil, base, head)
	check(t, fs, files)

	for _, name := range []string{"Users", "Groups"} {
		p := "api/" + strings.ToLower(name) + ".go"
		head[p] = strings.Replace(client(name, true), "\t\tBuild()\n", "\t\tRetry(3).\n\t\tBuild()\n", 1)
	}
	fs, _, files = runReview(t, nil, base, head)
	check(t, fs, files, want{"api/groups.go", "", RuleUntestedChange, "low"})
}

const muxSource = `package router

// Mux routes requests.
type Mux struct{ routes map[string]func() }

// NewMux makes a Mux.
func NewMux() *Mux { return &Mux{routes: map[string]func(){}} }

// Post routes a POST to h.
func (m *Mux) Post(p string, h func()) {
	if p == "" {
		p = "/"
	}
	m.routes["POST "+p] = h
}
`

const muxTest = `package router

import "testing"

func TestPost(t *testing.T) {
	m := NewMux()
	m.Post("/a", func() {})
	if len(m.routes) != 1 {
		t.Fatal("not routed")
	}
}
`

// groupSource is a new type of package router whose Post has the lines of
// body.
func groupSource(body string) string {
	return "package router\n\nimport \"strings\"\n\n// Group routes under a prefix.\ntype Group struct {\n\tprefix string\n\tmux    *Mux\n}\n\n" +
		"// Post routes a POST under the group's prefix.\nfunc (g *Group) Post(p string, h func()) {\n" + body + "\tg.mux.routes[\"POST \"+g.prefix+p] = h\n}\n"
}

// A test of Mux.Post does not exercise a new Group.Post: coverage is
// credited by the receiver's type where the test's syntax tells it (m :=
// NewMux()), not by the method's name. A test that calls Post on a Group
// does exercise it.
func TestGoMethodCreditedByReceiverType(t *testing.T) {
	t.Parallel()
	base := map[string]string{"router/mux.go": muxSource, "router/mux_test.go": muxTest}
	small := "\tif !strings.HasPrefix(p, \"/\") {\n\t\tp = \"/\" + p\n\t}\n"
	fs, _, files := runReview(t, nil, base, map[string]string{"router/group.go": groupSource(small)})
	check(t, fs, files, want{"router/group.go", "func (g *Group) Post", RuleUntestedExport, "low"})

	large := small + "\tp = strings.TrimSuffix(p, \"/\")\n\tif p == \"\" {\n\t\tp = \"/\"\n\t}\n\tif strings.Contains(p, \"//\") {\n\t\tp = strings.ReplaceAll(p, \"//\", \"/\")\n\t}\n\tp = strings.ToLower(p)\n"
	fs, _, files = runReview(t, nil, base, map[string]string{"router/group.go": groupSource(large)})
	check(t, fs, files, want{"router/group.go", "", RuleUntestedChange, "low"})

	// A receiver whose type the syntax does not tell (a table's field)
	// is credited by name, as before.
	table := muxTest + "\nfunc TestPosts(t *testing.T) {\n\tfor _, tc := range []struct{ r interface{ Post(string, func()) } }{} {\n\t\ttc.r.Post(\"/b\", nil)\n\t}\n}\n"
	fs, _, files = runReview(t, nil, map[string]string{"router/mux.go": muxSource, "router/mux_test.go": table}, map[string]string{"router/group.go": groupSource(large)})
	check(t, fs, files)

	tested := muxTest + "\nfunc TestGroupPost(t *testing.T) {\n\tg := &Group{prefix: \"/api\", mux: NewMux()}\n\tg.Post(\"a\", func() {})\n\tif g.mux.routes[\"POST /api/a\"] == nil {\n\t\tt.Fatal(\"not routed\")\n\t}\n}\n"
	base["router/mux_test.go"] = tested
	fs, _, files = runReview(t, nil, base, map[string]string{"router/group.go": groupSource(large)})
	check(t, fs, files)
}

const jsHelp = `import { stripVTControlCharacters } from "node:util";

export function stripColor(str) {
  const re = /\x1b\[[0-9;]*m/g;
  return str.replace(re, "");
}

export function width(str) {
  return stripColor(str).length;
}
`

const jsStripTest = `import { stripColor } from "../lib/help.js";
import { test, describe } from "node:test";
import assert from "node:assert/strict";

describe("internal stripColor()", () => {
  test("SGR only", () => {
    assert.equal(stripColor("\x1b[4m"), "");
  });

  test("SGR at start", () => {
    assert.equal(stripColor("\x1b[4mX"), "X");
  });
});
`

// A test file deleted with the function it tested (commander.js replaced
// its stripColor with node's stripVTControlCharacters) lost nothing; one
// deleted while its function stays is reported.
func TestJSTestsDeletedWithTheirFunctionAreClean(t *testing.T) {
	t.Parallel()
	base := map[string]string{"lib/help.js": jsHelp, "tests/help.strip.test.js": jsStripTest, "package.json": "{}\n"}
	without := strings.Replace(jsHelp, "export function stripColor(str) {\n  const re = /\\x1b\\[[0-9;]*m/g;\n  return str.replace(re, \"\");\n}\n\n", "", 1)
	without = strings.Replace(without, "stripColor(str).length", "stripVTControlCharacters(str).length", 1)
	fs, _, files := runReview(t, nil, base, map[string]string{"lib/help.js": without, "tests/help.strip.test.js": ""})
	check(t, fs, files)

	fs, _, files = runReview(t, nil, base, map[string]string{"tests/help.strip.test.js": ""})
	check(t, fs, files, want{"tests/help.strip.test.js", "", RuleTestDeleted, "medium"})
}

// The package's test files the change does not touch are read for what
// they call, and not kept for the rest of the review (in a large package
// they were most of the specialist's memory); the one it touches is.
func TestGoUnchangedTestFilesAreNotKept(t *testing.T) {
	t.Parallel()
	base := storeFiles("s.Get(")
	base["store/store.go"] += "\n// New returns an empty Store.\nfunc New() *Store { return &Store{m: map[string]int{}} }\n"
	base["store/other_test.go"] = "package store\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) { _ = New() }\n"
	head := maps.Clone(base)
	head["store/store.go"] += "\n// Put stores v at k.\nfunc (s *Store) Put(k string, v int) { s.m[k] = v }\n"
	head["store/store_test.go"] = strings.Replace(head["store/store_test.go"], "func TestGet(t *testing.T) {\n", "func TestGet(t *testing.T) {\n\tNew().Put(\"b\", 2)\n", 1)
	g := newGitRepo(t)
	b, h := g.apply(base), g.apply(head)
	c, err := change.NewLocal(g.dir).Change(context.Background(), change.Ref{Base: b, Head: h})
	if err != nil {
		t.Fatal(err)
	}
	r := &review{ctx: context.Background(), c: c}
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	p, err := r.pkg("store")
	if err != nil {
		t.Fatal(err)
	}
	if !p.covered["Store.Put"] || !p.covered["New"] {
		t.Errorf("covered %v: want Store.Put (from the changed test) and New (from the unchanged one)", p.covered)
	}
	if _, ok := r.parsed["head:store/other_test.go"]; ok {
		t.Error("the unchanged test file is kept parsed for the rest of the review")
	}
	if _, ok := r.parsed["head:store/store_test.go"]; !ok {
		t.Error("the changed test file is not kept parsed")
	}
}
