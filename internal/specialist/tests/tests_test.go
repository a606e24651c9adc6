package tests

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/specialist"
)

// gitRepo is a real git repository (changetest.Repo) with the shorthand
// these tests use.
type gitRepo struct {
	*changetest.Repo
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	r := changetest.NewRepo(t)
	return &gitRepo{Repo: r, dir: r.Dir}
}

func (r *gitRepo) git(args ...string) string { return r.Git(args...) }

// apply writes files (an empty content deletes the file) and commits.
func (r *gitRepo) apply(files map[string]string) string { return r.Apply(files) }

// want is a finding expected at the line of head's file holding marker
// ("" for a finding on the file as a whole).
type want struct {
	path, marker, rule, severity string
}

// runReview commits base, then head, and runs the specialist on the change.
func runReview(t *testing.T, s *Specialist, base, head map[string]string) ([]specialist.Finding, *gitRepo, map[string]string) {
	t.Helper()
	r := newGitRepo(t)
	b := r.apply(base)
	h := r.apply(head)
	c, err := change.NewLocal(r.dir).Change(context.Background(), change.Ref{Base: b, Head: h})
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		s = New()
	}
	fs, err := s.Review(context.Background(), c)
	if err != nil {
		t.Fatalf("Review: %v", err)
	}
	final := map[string]string{}
	for p, v := range base {
		final[p] = v
	}
	for p, v := range head {
		final[p] = v
	}
	return fs, r, final
}

// check compares findings with wants: same path, line, rule and severity,
// no more, no fewer; each finding valid and worded.
func check(t *testing.T, fs []specialist.Finding, files map[string]string, wants ...want) {
	t.Helper()
	got := make([]string, 0, len(fs))
	for _, f := range fs {
		if err := f.Validate(); err != nil {
			t.Errorf("invalid finding %+v: %v", f, err)
		}
		if f.Category != specialist.CategoryTests || f.Body == "" || strings.Contains(f.Headline, "\n") {
			t.Errorf("finding badly formed: %+v", f)
		}
		got = append(got, fmt.Sprintf("%s:%d %s %s", f.Path, f.Line, f.Rule, f.Severity))
	}
	exp := make([]string, 0, len(wants))
	for _, w := range wants {
		line := 0
		if n, ok := strings.CutPrefix(w.marker, "@line "); ok {
			// A line that has no marker of its own (a blank one).
			line, _ = strconv.Atoi(n)
		} else if w.marker != "" {
			for i, l := range strings.Split(files[w.path], "\n") {
				if strings.Contains(l, w.marker) {
					line = i + 1
					break
				}
			}
			if line == 0 {
				t.Fatalf("marker %q not in %s", w.marker, w.path)
			}
		}
		exp = append(exp, fmt.Sprintf("%s:%d %s %s", w.path, line, w.rule, w.severity))
	}
	slices.Sort(got)
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		var detail strings.Builder
		for _, f := range fs {
			fmt.Fprintf(&detail, "\n  %s:%d %s %s: %s", f.Path, f.Line, f.Rule, f.Severity, f.Headline)
		}
		t.Errorf("findings:\n  %s\nwant:\n  %s\ndetail:%s", strings.Join(got, "\n  "), strings.Join(exp, "\n  "), detail.String())
	}
}

// Go fixtures.

const goCalc = `package calc

// Add adds.
func Add(a, b int) int { return a + b }
`

const goCalcMore = `package calc

// Add adds.
func Add(a, b int) int { return a + b }

// Clamp limits v to [lo, hi].
func Clamp(v, lo, hi int) int {
	if lo > hi {
		lo, hi = hi, lo
	}
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
`

const goCalcTest = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}
}

func TestAddZero(t *testing.T) {
	if got := Add(0, 0); got != 0 {
		t.Fatalf("Add(0, 0) = %d", got)
	}
}
`

func goBase() map[string]string {
	return map[string]string{"calc/calc.go": goCalc, "calc/calc_test.go": goCalcTest, "README.md": "# calc\n"}
}

func TestGoUntestedChange(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"calc/calc.go": goCalcMore})
	check(t, fs, files, want{"calc/calc.go", "", RuleUntestedChange, "low"})
}

func TestGoChangeWithItsTestIsClean(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, New(), goBase(), map[string]string{
		"calc/calc.go": goCalcMore,
		"calc/calc_test.go": goCalcTest + `
func TestClamp(t *testing.T) {
	if got := Clamp(5, 0, 3); got != 3 {
		t.Errorf("Clamp = %d", got)
	}
}
`,
		"README.md": "# calc\n\nNow with Clamp.\n",
	})
	check(t, fs, files)
}

func TestGoSkipAdded(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go": strings.Replace(goCalcTest, "func TestAdd(t *testing.T) {\n",
			"func TestAdd(t *testing.T) {\n\tt.Skip(\"flaky on CI\")\n", 1),
	})
	check(t, fs, files, want{"calc/calc_test.go", `t.Skip("flaky`, RuleSkipAdded, "medium"})
	if !strings.Contains(fs[0].Headline, "t.Skip") {
		t.Errorf("headline %q does not name the skip", fs[0].Headline)
	}
}

func TestGoSkipLookAlikesAreClean(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go": strings.Replace(goCalcTest, "func TestAdd(t *testing.T) {\n",
			"func TestAdd(t *testing.T) {\n"+
				"\t// t.Skip(\"not any more\") was here; we no longer skip.\n"+
				"\tt.Log(\"never call t.Skip() or t.SkipNow() here\")\n"+
				"\tmsg := `t.Skipf(\"%s\")`\n"+
				"\t_ = msg\n"+
				"\tif testing.Short() {\n"+
				"\t\tt.Skip(\"slow\")\n"+
				"\t}\n"+
				"\t/* t.Skip() */\n", 1),
	})
	check(t, fs, files)
}

func TestGoConditionalSkipIsLow(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go": strings.Replace(goCalcTest, "func TestAdd(t *testing.T) {\n",
			"func TestAdd(t *testing.T) {\n\tif os.Getenv(\"CI\") == \"\" {\n\t\tt.Skipf(\"needs %s\", \"CI\")\n\t}\n", 1),
	})
	check(t, fs, files, want{"calc/calc_test.go", "t.Skipf(", RuleSkipAdded, "low"})
}

func TestGoTestRemoved(t *testing.T) {
	t.Parallel()
	head := strings.Replace(goCalcTest, `func TestAddZero(t *testing.T) {
	if got := Add(0, 0); got != 0 {
		t.Fatalf("Add(0, 0) = %d", got)
	}
}
`, "", 1)
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"calc/calc_test.go": head})
	// On the line where the removed test stood, the deletion named.
	check(t, fs, files, want{"calc/calc_test.go", "@line 10", RuleTestDeleted, "medium"})
	if !strings.Contains(fs[0].Cause, "func TestAddZero") {
		t.Errorf("cause %q does not name the deleted line", fs[0].Cause)
	}
	if !strings.Contains(fs[0].Headline, "TestAddZero") {
		t.Errorf("headline %q does not name the test", fs[0].Headline)
	}
}

func TestGoTestFileDeleted(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"calc/calc_test.go": ""})
	check(t, fs, files, want{"calc/calc_test.go", "", RuleTestDeleted, "medium"})
}

// A test deleted with the function it tested, or with its whole package,
// is a clean-up.
func TestGoTestRemovedWithItsCodeIsClean(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"calc/calc.go":      goCalcMore,
		"calc/calc_test.go": goCalcTest + "\nfunc TestClamp(t *testing.T) {\n\tif Clamp(5, 0, 3) != 3 {\n\t\tt.Error(\"clamp\")\n\t}\n}\n",
		"old/old.go":        "package old\n\nfunc Old() {}\n",
		"old/old_test.go":   "package old\n\nimport \"testing\"\n\nfunc TestOld(t *testing.T) { Old() }\n",
	}
	fs, _, files := runReview(t, nil, base, map[string]string{
		"calc/calc.go":      goCalc,
		"calc/calc_test.go": goCalcTest,
		"old/old.go":        "",
		"old/old_test.go":   "",
	})
	check(t, fs, files)
}

// A test file renamed, or a test moved to another file, is not deleted.
func TestGoTestRenamedOrMovedIsClean(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go": "",
		"calc/add_test.go":  goCalcTest,
	})
	check(t, fs, files)

	moved := strings.Replace(goCalcTest, "func TestAddZero", "func testAddZeroGone", 1)
	moved = strings.Replace(moved, "func testAddZeroGone(t *testing.T) {\n\tif got := Add(0, 0); got != 0 {\n\t\tt.Fatalf(\"Add(0, 0) = %d\", got)\n\t}\n}\n", "", 1)
	fs, _, files = runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go": moved,
		"calc/zero_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAddZero(t *testing.T) {\n\tif got := Add(0, 0); got != 0 {\n\t\tt.Fatalf(\"Add(0, 0) = %d\", got)\n\t}\n}\n",
	})
	check(t, fs, files)
}

// A test moved to another package under a new name, its body adapted a
// little to its new place, is not removed; a different test added in the
// same change does not excuse a removal.
func TestGoTestMovedAndRenamedIsClean(t *testing.T) {
	t.Parallel()
	removed := strings.Replace(goCalcTest, "func TestAddZero(t *testing.T) {\n\tif got := Add(0, 0); got != 0 {\n\t\tt.Fatalf(\"Add(0, 0) = %d\", got)\n\t}\n}\n", "", 1)
	fs, _, files := runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go":    removed,
		"calc/sum/sum.go":      "package sum\n\nimport \"example.com/calc\"\n\n// Add adds.\nfunc Add(a, b int) int { return calc.Add(a, b) }\n",
		"calc/sum/sum_test.go": "package sum\n\nimport \"testing\"\n\nfunc TestZero(t *testing.T) {\n\tif got := Add(0, 0); got != 0 {\n\t\tt.Fatalf(\"Add(0, 0) = %d\", got)\n\t}\n}\n",
	})
	check(t, fs, files)

	fs, _, files = runReview(t, nil, goBase(), map[string]string{
		"calc/calc_test.go":    removed,
		"calc/sum/sum.go":      "package sum\n\nimport \"example.com/calc\"\n\n// Add adds.\nfunc Add(a, b int) int { return calc.Add(a, b) }\n",
		"calc/sum/sum_test.go": "package sum\n\nimport \"testing\"\n\nfunc TestAddNegatives(t *testing.T) {\n\tif got := Add(-2, -3); got != -5 {\n\t\tt.Fatalf(\"Add(-2, -3) = %d\", got)\n\t}\n}\n",
	})
	check(t, fs, files, want{"calc/calc_test.go", "@line 10", RuleTestDeleted, "medium"})
}

func TestGoAssertionRemoved(t *testing.T) {
	t.Parallel()
	head := strings.Replace(goCalcTest, `	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}`, `	got := Add(1, 2)
	_ = got // checked by hand`, 1)
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"calc/calc_test.go": head})
	check(t, fs, files, want{"calc/calc_test.go", "got := Add(1, 2)", RuleAssertionRemoved, "medium"})
}

// An assertion rewritten (into a t.Fatalf, or a call of a helper that
// checks) is not removed.
func TestGoAssertionRewrittenIsClean(t *testing.T) {
	t.Parallel()
	head := strings.Replace(goCalcTest, `		t.Errorf("Add(1, 2) = %d, want 3", got)`, `		t.Fatalf("Add(1, 2) = %d, want 3", got)`, 1)
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"calc/calc_test.go": head})
	check(t, fs, files)

	head = strings.Replace(goCalcTest, `	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}`, `	equal(t, Add(1, 2), 3)`, 1)
	fs, _, files = runReview(t, nil, goBase(), map[string]string{"calc/calc_test.go": head})
	check(t, fs, files)
}

// In a package the change creates, every test is in the change: an
// exported function that none of them names is reported; one a test
// names is not.
func TestGoUntestedExportInNewPackage(t *testing.T) {
	t.Parallel()
	src := `package shape

// Area is the area of a w×h rectangle.
func Area(w, h int) int { return w * h }

// Perimeter is the perimeter of a w×h rectangle.
func Perimeter(w, h int) int { return 2 * (w + h) }

type Box struct{ W, H int }

// Volume is unexported-receiver-free and exported: untested too.
func (b Box) Volume(d int) int { return b.W * b.H * d }

// String is a fmt.Stringer: exercised through fmt.
func (b Box) String() string { return "box" }

func helper() {}
`
	test := "package shape\n\nimport \"testing\"\n\nfunc TestArea(t *testing.T) {\n\tif Area(2, 3) != 6 {\n\t\tt.Error(\"area\")\n\t}\n}\n"
	fs, _, files := runReview(t, nil, goBase(), map[string]string{"shape/shape.go": src, "shape/shape_test.go": test})
	check(t, fs, files,
		want{"shape/shape.go", "func Perimeter", RuleUntestedExport, "low"},
		want{"shape/shape.go", "func (b Box) Volume", RuleUntestedExport, "low"})
}

// In a package that existed, the package's other tests are needed to say
// an export is untested: with a lister the check runs, without one it
// says nothing rather than guess.
func TestGoUntestedExportInExistingPackage(t *testing.T) {
	t.Parallel()
	head := map[string]string{
		"calc/calc.go":      goCalc + "\n// Neg negates.\nfunc Neg(a int) int { return -a }\n",
		"calc/calc_test.go": goCalcTest + "\nfunc TestAddNeg(t *testing.T) {\n\tif Add(-1, 1) != 0 {\n\t\tt.Error(\"add\")\n\t}\n}\n",
	}
	r := newGitRepo(t)
	b := r.apply(goBase())
	h := r.apply(head)
	c, err := change.NewLocal(r.dir).Change(context.Background(), change.Ref{Base: b, Head: h})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"calc/calc.go": head["calc/calc.go"]}

	fs, err := New().Review(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	check(t, fs, files, want{"calc/calc.go", "func Neg", RuleUntestedExport, "low"})

	// A source that cannot list directories: the package's other tests
	// are unknown, so nothing is claimed.
	unlisted, err := change.New(context.Background(), change.Ref{}, b, h, c.Files, readOnly{change.NewLocal(r.dir)})
	if err != nil {
		t.Fatal(err)
	}
	fs, err = New().Review(context.Background(), unlisted)
	if err != nil {
		t.Fatal(err)
	}
	check(t, fs, files)
}

// readOnly is a change.Tree that can read files but not list directories.
type readOnly struct{ l *change.Local }

func (r readOnly) ReadFileAt(ctx context.Context, rev, path string) ([]byte, error) {
	return r.l.ReadFileAt(ctx, rev, path)
}

// An export that a test of the package names, in a file the change does
// not touch, is tested.
func TestGoExportReferencedByExistingTestIsClean(t *testing.T) {
	t.Parallel()
	base := goBase()
	base["calc/neg_test.go"] = "package calc\n\nimport \"testing\"\n\nfunc TestNeg(t *testing.T) {\n\tif neg := Neg; neg(1) != -1 {\n\t\tt.Error(\"neg\")\n\t}\n}\n"
	base["calc/neg.go"] = "package calc\n\nfunc neg(a int) int { return -a }\n\n// Neg negates.\nvar Neg = neg\n"
	r := newGitRepo(t)
	b := r.apply(base)
	h := r.apply(map[string]string{
		"calc/neg.go":       "package calc\n\n// Neg negates.\nfunc Neg(a int) int { return -a }\n",
		"calc/calc_test.go": goCalcTest + "\nfunc TestAddMore(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Error(\"add\")\n\t}\n}\n",
	})
	c, err := change.NewLocal(r.dir).Change(context.Background(), change.Ref{Base: b, Head: h})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := New().Review(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	check(t, fs, nil)
}

// Documentation, configuration, small changes, deletions and renames do
// not want a test.
func TestNotLogicIsClean(t *testing.T) {
	t.Parallel()
	base := goBase()
	base["app/settings.yaml"] = "a: 1\n"
	base["app/old.go"] = goCalcMore
	base["app/moved.py"] = "def f(x):\n    if x:\n        return 1\n    return 2\n"
	fs, _, files := runReview(t, nil, base, map[string]string{
		"README.md":         "# calc\n\n" + strings.Repeat("More words about it.\n", 30),
		"docs/guide.md":     strings.Repeat("Guide.\n", 30),
		"app/settings.yaml": strings.Repeat("key: value\n", 30),
		"calc/calc.go":      strings.Replace(goCalc, "return a + b", "return b + a", 1),
		"app/old.go":        "",
		"app/moved.py":      "",
		"lib/moved.py":      base["app/moved.py"],
		"cmd/tool/main.go":  "package main\n\nfunc main() {\n" + strings.Repeat("\tprintln(1)\n", 20) + "}\n",
		"calc/types.go":     "package calc\n\n// Op is an operation.\ntype Op struct {\n" + strings.Repeat("\tA int\n", 0) + "\tA, B, C, D, E, F, G, H, I, J int\n\tName string\n\tKind string\n\tNote string\n\tMore string\n\tLess string\n\tSome string\n\tAll string\n}\n",
	})
	check(t, fs, files)
}

// Python fixtures.

const pyBase = `def parse(s):
    return s.split(",")
`

const pyMore = `def parse(s):
    return s.split(",")


def parse_pairs(s):
    out = {}
    for part in parse(s):
        if "=" not in part:
            raise ValueError(part)
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out
`

const pyTest = `import pytest

from app.parse import parse


def test_parse():
    assert parse("a,b") == ["a", "b"]


def test_parse_empty():
    assert parse("") == [""]
`

func pyRepo() map[string]string {
	return map[string]string{"app/parse.py": pyBase, "tests/test_parse.py": pyTest, "setup.py": "from setuptools import setup\nsetup()\n"}
}

func TestPythonUntestedChange(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, pyRepo(), map[string]string{"app/parse.py": pyMore})
	check(t, fs, files, want{"app/parse.py", "", RuleUntestedChange, "low"})
}

// skipif skips where its condition holds: added to a test that ran, it is
// a low note; on a new test, or rewritten (pallets/click replaced
// platform.system() == "Windows" by WIN in its skipifs), it is nothing.
func TestPythonSkipIfIsConditional(t *testing.T) {
	t.Parallel()
	skipWin := "@pytest.mark.skipif(sys.platform == \"win32\", reason=\"no sed\")\n"
	head := strings.Replace(pyTest, "def test_parse():\n", skipWin+"def test_parse():\n", 1)
	fs, _, files := runReview(t, nil, pyRepo(), map[string]string{"tests/test_parse.py": head})
	check(t, fs, files, want{"tests/test_parse.py", "@pytest.mark.skipif", RuleSkipAdded, "low"})

	fs, _, files = runReview(t, nil, pyRepo(), map[string]string{"tests/test_parse.py": pyTest + "\n\n" + skipWin + "def test_parse_sed():\n    assert parse(\"s\") == [\"s\"]\n"})
	check(t, fs, files)
	// A new test with a long parametrize list between the skip and it.
	params := "@pytest.mark.parametrize(\n    \"s\",\n    [\n" + strings.Repeat("        \"x\",\n", 12) + "    ],\n)\n"
	fs, _, files = runReview(t, nil, pyRepo(), map[string]string{"tests/test_parse.py": pyTest + "\n\n" + skipWin + params + "def test_parse_many(s):\n    assert parse(s) == [s]\n"})
	check(t, fs, files)

	// A skip uncommented is a skip added, though the hunk loses a line
	// that says the same in a comment.
	commented := strings.Replace(pyTest, "def test_parse():\n", "def test_parse():\n    # pytest.skip(\"flaky\")\n", 1)
	uncommented := strings.Replace(pyTest, "def test_parse():\n", "def test_parse():\n    pytest.skip(\"flaky\")\n", 1)
	fs, _, files = runReview(t, nil, map[string]string{"app/parse.py": pyBase, "tests/test_parse.py": commented}, map[string]string{"tests/test_parse.py": uncommented})
	check(t, fs, files, want{"tests/test_parse.py", "pytest.skip(", RuleSkipAdded, "medium"})

	rewritten := strings.Replace(head, "sys.platform == \"win32\"", "WIN", 1)
	fs, _, files = runReview(t, nil, map[string]string{"app/parse.py": pyBase, "tests/test_parse.py": head}, map[string]string{"tests/test_parse.py": rewritten})
	check(t, fs, files)
}

func TestPythonChangeWithItsTestIsClean(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, pyRepo(), map[string]string{
		"app/parse.py":        pyMore,
		"tests/test_parse.py": pyTest + "\n\ndef test_parse_pairs():\n    assert parse_pairs(\"a=1\") == {\"a\": \"1\"}\n",
	})
	check(t, fs, files)
}

func TestPythonSkipAddedTestDeletedAssertionRemoved(t *testing.T) {
	t.Parallel()
	head := strings.Replace(pyTest, "def test_parse():\n", "@pytest.mark.skip(reason=\"later\")\ndef test_parse():\n", 1)
	head = strings.Replace(head, "\n\ndef test_parse_empty():\n    assert parse(\"\") == [\"\"]\n", "\n", 1)
	fs, _, files := runReview(t, nil, pyRepo(), map[string]string{"tests/test_parse.py": head})
	check(t, fs, files,
		want{"tests/test_parse.py", "@pytest.mark.skip", RuleSkipAdded, "medium"},
		want{"tests/test_parse.py", "@line 6", RuleTestDeleted, "medium"})

	head = strings.Replace(pyTest, `    assert parse("a,b") == ["a", "b"]`, `    result = parse("a,b")
    print(result)`, 1)
	head = strings.Replace(head, "def test_parse_empty():\n", "def test_parse_empty():\n    if sys.platform == \"win32\":\n        pytest.skip(\"posix only\")\n", 1)
	fs, _, files = runReview(t, nil, pyRepo(), map[string]string{"tests/test_parse.py": head})
	check(t, fs, files,
		want{"tests/test_parse.py", "result = parse(", RuleAssertionRemoved, "medium"},
		want{"tests/test_parse.py", "pytest.skip(", RuleSkipAdded, "low"})
}

// A hunk that only deletes an assertion has no new line to carry the
// finding: it is on the file.
func TestPythonAssertionDeletedAlone(t *testing.T) {
	t.Parallel()
	base := pyRepo()
	base["tests/test_parse.py"] = strings.Replace(pyTest, `    assert parse("a,b") == ["a", "b"]`, `    assert parse("a,b") == ["a", "b"]
    assert parse("a") == ["a"]`, 1)
	fs, _, files := runReview(t, nil, base, map[string]string{"tests/test_parse.py": pyTest})
	check(t, fs, files, want{"tests/test_parse.py", "", RuleAssertionRemoved, "medium"})
}

// Fixtures hold sample code that is data, not tests.
func TestFixturesAreClean(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, jsRepo(), map[string]string{
		"test/fixtures/focused.test.js":    "it.only(\"runs alone\", () => {});\n",
		"internal/x/testdata/skip_test.go": "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { t.Skip() }\n",
	})
	check(t, fs, files)
}

func TestPythonSkipLookAlikesAreClean(t *testing.T) {
	t.Parallel()
	head := strings.Replace(pyTest, "def test_parse():\n", `def test_parse():
    # @pytest.mark.skip is not wanted here
    note = "call pytest.skip() only when needed"
    doc = """
    @pytest.mark.skip
    pytest.skip("x")
    """
    assert note and doc
`, 1)
	fs, _, files := runReview(t, nil, pyRepo(), map[string]string{"tests/test_parse.py": head})
	check(t, fs, files)
}

// JavaScript fixtures.

const jsSum = `export function sum(a, b) {
  return a + b;
}
`

const jsSumMore = `export function sum(a, b) {
  return a + b;
}

export function mean(xs) {
  if (xs.length === 0) {
    throw new Error("empty");
  }
  let total = 0;
  for (const x of xs) {
    total = sum(total, x);
  }
  const m = total / xs.length;
  return m;
}
`

const jsTest = `import { sum } from "./sum";

describe("sum", () => {
  it("adds", () => {
    expect(sum(1, 2)).toBe(3);
  });

  it("adds negatives", () => {
    expect(sum(-1, -2)).toBe(-3);
  });
});
`

func jsRepo() map[string]string {
	return map[string]string{"src/sum.ts": jsSum, "src/sum.test.ts": jsTest, "package.json": "{}\n"}
}

func TestJSUntestedChange(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, jsRepo(), map[string]string{"src/sum.ts": jsSumMore})
	check(t, fs, files, want{"src/sum.ts", "", RuleUntestedChange, "low"})
}

func TestJSChangeWithItsTestIsClean(t *testing.T) {
	t.Parallel()
	fs, _, files := runReview(t, nil, jsRepo(), map[string]string{
		"src/sum.ts":      jsSumMore,
		"src/sum.test.ts": jsTest + "\ndescribe(\"mean\", () => {\n  it(\"averages\", () => {\n    expect(mean([1, 3])).toBe(2);\n  });\n});\n",
	})
	check(t, fs, files)
}

func TestJSSkipFocusDeletedAssertion(t *testing.T) {
	t.Parallel()
	head := strings.Replace(jsTest, `  it("adds", () => {`, `  it.only("adds", () => {`, 1)
	head = strings.Replace(head, `describe("sum", () => {`, `describe("sum", () => {
  xit("subtracts", () => {});
  it.skip("multiplies", () => {});`, 1)
	head = strings.Replace(head, `  it("adds negatives", () => {`, `  it.skip("adds negatives", () => {`, 1)
	fs, _, files := runReview(t, nil, jsRepo(), map[string]string{"src/sum.test.ts": head})
	// A focus is always wrong; a test that ran before and is now skipped
	// is a loss; a new test added skipped never ran: low.
	check(t, fs, files,
		want{"src/sum.test.ts", "it.only(", RuleSkipAdded, "high"},
		want{"src/sum.test.ts", "xit(", RuleSkipAdded, "low"},
		want{"src/sum.test.ts", `it.skip("multiplies"`, RuleSkipAdded, "low"},
		want{"src/sum.test.ts", `it.skip("adds negatives"`, RuleSkipAdded, "medium"})

	head = strings.Replace(jsTest, `
  it("adds negatives", () => {
    expect(sum(-1, -2)).toBe(-3);
  });
`, "", 1)
	head = strings.Replace(head, `    expect(sum(1, 2)).toBe(3);`, `    sum(1, 2);`, 1)
	fs, _, files = runReview(t, nil, jsRepo(), map[string]string{"src/sum.test.ts": head})
	check(t, fs, files,
		want{"src/sum.test.ts", "", RuleTestDeleted, "medium"},
		want{"src/sum.test.ts", "    sum(1, 2);", RuleAssertionRemoved, "medium"})
	for _, f := range fs {
		if f.Rule == RuleTestDeleted && !strings.Contains(f.Headline, "adds negatives") {
			t.Errorf("headline %q does not name the test", f.Headline)
		}
	}
}

func TestJSSkipLookAlikesAreClean(t *testing.T) {
	t.Parallel()
	head := strings.Replace(jsTest, `  it("adds", () => {`, `  // it.skip("adds") was flaky; fixed now.
  /* xit("old") */
  it("adds without it.only(", () => {
    const note = `+"`describe.skip and test.only are banned`"+`;
    expect(note).toBeTruthy();`, 1)
	head = strings.Replace(head, `    expect(sum(1, 2)).toBe(3);
  });

  it("adds negatives"`, `    expect(sum(1, 2)).toBe(3);
  });

  it("adds negatives"`, 1)
	fs, _, files := runReview(t, nil, jsRepo(), map[string]string{"src/sum.test.ts": head})
	// The test "adds" is renamed in place: not a deletion either.
	check(t, fs, files)
}

func TestOtherEcosystemsSkips(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"src/test/java/app/CalcTest.java": "package app;\n\nclass CalcTest {\n    @Test\n    void adds() {\n        assertEquals(3, Calc.add(1, 2));\n    }\n}\n",
		"src/lib.rs":                      "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n",
		"spec/calc_spec.rb":               "describe Calc do\n  it 'adds' do\n    expect(Calc.add(1, 2)).to eq(3)\n  end\nend\n",
	}
	fs, _, files := runReview(t, nil, base, map[string]string{
		"src/test/java/app/CalcTest.java": strings.Replace(base["src/test/java/app/CalcTest.java"], "    @Test\n", "    @Test\n    @Disabled(\"broken\")\n", 1),
		"src/lib.rs":                      strings.Replace(base["src/lib.rs"], "    #[test]\n", "    #[test]\n    #[ignore]\n", 1),
		"spec/calc_spec.rb":               strings.Replace(base["spec/calc_spec.rb"], "  it 'adds' do", "  fit 'adds' do", 1),
	})
	check(t, fs, files,
		want{"src/test/java/app/CalcTest.java", "@Disabled", RuleSkipAdded, "medium"},
		want{"src/lib.rs", "#[ignore]", RuleSkipAdded, "medium"},
		want{"spec/calc_spec.rb", "fit 'adds'", RuleSkipAdded, "high"})
}

func TestRustUnitTestInSameFileCovers(t *testing.T) {
	t.Parallel()
	base := map[string]string{"src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n"}
	logic := "pub fn clamp(v: i32, lo: i32, hi: i32) -> i32 {\n    if v < lo {\n        return lo;\n    }\n    if v > hi {\n        return hi;\n    }\n    let r = v;\n    let s = r;\n    s\n}\n\n"
	fs, _, files := runReview(t, nil, base, map[string]string{"src/lib.rs": logic + base["src/lib.rs"]})
	check(t, fs, files, want{"src/lib.rs", "", RuleUntestedChange, "low"})

	withTest := logic + strings.Replace(base["src/lib.rs"], "    #[test]\n    fn adds", "    #[test]\n    fn clamps() {\n        assert_eq!(super::clamp(5, 0, 3), 3);\n    }\n\n    #[test]\n    fn adds", 1)
	fs, _, files = runReview(t, nil, base, map[string]string{"src/lib.rs": withTest})
	check(t, fs, files)
}

func TestMask(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		syn  syntax
		want []string
	}{
		{"a(\"t.Skip()\") // t.Skip()", syntaxC, []string{`a("        ")` + strings.Repeat(" ", 12)}},
		{"x /* t.Skip(\n t.Skip() */ y", syntaxC, []string{"x           ", strings.Repeat(" ", 13) + "y"}},
		{"s := `a\nt.Skip()` + b", syntaxC, []string{"s := ` ", "        ` + b"}},
		{"a = 'it.skip' # it.skip", syntaxPython, []string{"a = '       '          "}},
		{"\"\"\"\npytest.skip()\n\"\"\" + x", syntaxPython, []string{`"""`, "             ", `""" + x`}},
		{"fn f<'a>(x: &'a str) -> char { 'x' }", syntaxRust, []string{"fn f<'a>(x: &'a str) -> char { ' ' }"}},
		{"=begin\nskip\n=end\nskip # skip", syntaxRuby, []string{"      ", "    ", "    ", "skip       "}},
		{`"a\"b" c`, syntaxC, []string{`"    " c`}},
	} {
		if got := mask(tc.src, tc.syn); !slices.Equal(got, tc.want) {
			t.Errorf("mask(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestSubject(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"calc/calc_test.go": "calc", "tests/test_parse.py": "parse", "src/sum.test.ts": "sum",
		"CalcTest.java": "calc", "calc_spec.rb": "calc", "TestClamp": "clamp", "test_parse_pairs": "parsepairs",
		"TestClamp_bounds": "clamp", "parse_pairs": "parsepairs",
	} {
		if got := subject(in); got != want {
			t.Errorf("subject(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReviewHonoursCancel(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	b := r.apply(goBase())
	h := r.apply(map[string]string{"calc/calc.go": goCalcMore})
	c, err := change.NewLocal(r.dir).Change(context.Background(), change.Ref{Base: b, Head: h})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Review(ctx, c); err == nil {
		t.Error("Review on a cancelled context succeeded")
	}
}

// A change that adds no export, or no logic in a function when its tests
// are untouched, does not read the package's other files and tests: what
// they exercise is asked only of a new export or of new logic in a
// function (in nats-server's server package, 12 MB of Go parsed for
// nothing).
func TestGoPackageReadOnlyForNewExports(t *testing.T) {
	t.Parallel()
	base := goBase()
	base["calc/other.go"] = "package calc\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n"
	base["calc/other_test.go"] = "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(2, 1) != 1 {\n\t\tt.Error(\"sub\")\n\t}\n}\n"
	r := newGitRepo(t)
	b := r.apply(base)
	edit := func(body string) map[string]string {
		return map[string]string{
			"calc/calc.go":      strings.Replace(goCalc, "return a + b", body, 1),
			"calc/calc_test.go": goCalcTest + "\nfunc TestAddMore(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Error(\"add\")\n\t}\n}\n",
		}
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		read  bool // the package's other files are read
	}{
		{"no new export", edit("s := a + b\n\treturn s"), false},
		{"a new export", func() map[string]string {
			f := edit("return a + b")
			f["calc/calc.go"] += "\n// Double doubles.\nfunc Double(a int) int { return 2 * a }\n"
			return f
		}(), true},
		// Its tests untouched, the change is asked whether its new
		// logic is tested: only logic in a function body needs to know.
		{"a new type, tests untouched", map[string]string{
			"calc/calc.go": goCalc + "\n// Pair is two numbers.\ntype Pair struct {\n\tA, B int\n}\n",
		}, false},
		{"new logic, tests untouched", map[string]string{
			"calc/calc.go": strings.Replace(goCalc, "return a + b", "s := a + b\n\tif s < 0 {\n\t\ts = -s\n\t}\n\treturn s", 1),
		}, true},
	} {
		r.git("checkout", "-q", b)
		h := r.apply(tc.files)
		local := change.NewLocal(r.dir)
		c, err := local.Change(context.Background(), change.Ref{Base: b, Head: h})
		if err != nil {
			t.Fatal(err)
		}
		counted := &countingTree{Local: local, reads: map[string]int{}}
		c, err = change.New(context.Background(), change.Ref{}, b, h, c.Files, counted)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New().Review(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		counted.mu.Lock()
		got := counted.reads["calc/other.go"] > 0 || counted.reads["calc/other_test.go"] > 0
		counted.mu.Unlock()
		if got != tc.read {
			t.Errorf("%s: the package's other files read: %v, want %v (reads %v)", tc.name, got, tc.read, counted.reads)
		}
	}
}

// countingTree is the repository, counting the reads of each path.
type countingTree struct {
	*change.Local
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingTree) ReadFileAt(ctx context.Context, rev, path string) ([]byte, error) {
	c.mu.Lock()
	c.reads[path]++
	c.mu.Unlock()
	return c.Local.ReadFileAt(ctx, rev, path)
}
