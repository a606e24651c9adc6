// Package tests is the built-in engine of the tests specialist: from the
// diff and the files at base and head, in any language, it finds new
// behavior with no test, tests deleted, skips and focused tests added,
// assertions removed, and, for Go, new exported functions that no test
// refers to.
//
// It runs nothing and needs no toolchain: it reads the diff and files at
// base and head, masks comments and string literals out of the code before
// matching (so a test that merely mentions "skip" is not a skip), follows
// each ecosystem's naming conventions for where tests live, and reads Go
// with go/parser. Precision comes first: every finding should be one a
// careful reviewer would post. Coverage advice is one low finding per
// change, and only for new behavior: lines moved or renamed (anywhere in
// the change), call sites updated for a new signature and, in Go, lines
// that only hand up a new error or rearrange calls the change removes, and
// functions the package's tests already reach (a method through a value
// of its own type, where syntax tells the type) are not counted. A Go
// assertion is "removed" only while the call it checked is still made and
// its result still assigned and no check of the same subject remains. A skip counts in a test that ran before; a
// test removed with the code it tested, moved, or merged into another is
// not lost. Where the conventions leave room for doubt, it says nothing.
package tests

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// Rules of the findings.
const (
	RuleUntestedChange   = "quorum:untested-change"
	RuleTestDeleted      = "quorum:test-deleted"
	RuleSkipAdded        = "quorum:test-skip-added"
	RuleAssertionRemoved = "quorum:assertion-removed"
	RuleUntestedExport   = "quorum:untested-export"
	RuleCommentedOut     = "quorum:test-commented-out"
)

// Thresholds of the untested-change check: fewer added lines of logic are
// a tiny change; more make a larger one.
const (
	minLogicLines    = 8
	mediumLogicLines = 40
)

// Specialist is the built-in tests specialist. The untested-export check
// reads a package's tests through the change's directory listing; when the
// change's source cannot list, it checks only packages the change creates.
type Specialist struct{}

var _ specialist.Specialist = (*Specialist)(nil)

// New returns the built-in tests specialist.
func New() *Specialist { return &Specialist{} }

// Name is "tests".
func (s *Specialist) Name() string { return specialist.Tests }

// Review returns the specialist's findings on c.
func (s *Specialist) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	r := &review{ctx: ctx, c: c}
	if err := r.load(); err != nil {
		return nil, err
	}
	r.index()
	r.indexRemoved()
	for _, x := range r.files {
		r.skips(x)
		r.deletedTests(x)
		r.removedAssertions(x)
		r.commentedOut(x)
	}
	untested, err := r.untestedChanges()
	if err != nil {
		return nil, err
	}
	if err := r.untestedExports(untested); err != nil {
		return nil, err
	}
	out := specialist.OnChangedLines(c, r.findings)
	slices.SortStableFunc(out, func(a, b specialist.Finding) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Rule, b.Rule))
	})
	return out, nil
}

// fixtureDirs hold data for tests, often code that is never run as
// written: sample code under test, snapshots, golden files.
var fixtureDirs = []string{"testdata", "fixtures", "fixture", "__fixtures__", "__snapshots__", "golden"}

// review is one run of the specialist over a change.
type review struct {
	ctx   context.Context
	c     *change.Change
	files []*file

	// addedTests are the names of tests the change adds, per ecosystem;
	// removedCode the functions it removes from source, by subject.
	addedTests  map[*ecosystem]map[string]bool
	removedCode map[*ecosystem]map[string]bool
	// testedDirs are the directories with a test the change adds to or
	// edits; testedAny the ecosystems with such a test anywhere.
	testedDirs map[string]bool
	testedAny  map[*ecosystem]bool
	// addedTestLines are the substantial lines of test code the change
	// adds, trimmed, per ecosystem: where removed tests' lines come back,
	// the tests were moved or renamed.
	addedTestLines map[*ecosystem]map[string]bool
	// moved indexes the change's removed lines.
	moved movedIndex
	// parsed caches Go files parsed at base and at head.
	parsed map[string]*goSource
	// pkgs holds, per Go package directory, what is known of the
	// package at head (goPackage).
	pkgs map[string]*goPackage
	// goneDecls holds the names the change's Go source no longer declares;
	// goneCalls the calls it no longer makes where it made them (callSig).
	goneDecls map[string]bool
	goneCalls map[string]bool
	// untestedDirs caches untestedPackage.
	untestedDirs map[string]bool
	// keeps caches keptTests by ecosystem and top-level directory.
	keeps map[keepKey]bool

	findings []specialist.Finding
}

// file is a changed file of an ecosystem, with its lines at base and head
// as they are and masked.
type file struct {
	f              *change.File
	eco            *ecosystem
	path           string
	test           bool
	head, headMask []string
	base, baseMask []string
	// headTestFrom and baseTestFrom are, for Rust, the line of the first
	// #[cfg(test)]: the lines after it are unit tests. 0 for none.
	headTestFrom, baseTestFrom int
}

func (r *review) load() error {
	for _, f := range r.c.Files {
		eco := ecosystemOf(f.Path())
		if eco == nil || f.Binary || hasDir(f.Path(), fixtureDirs...) {
			continue
		}
		x := &file{f: f, eco: eco, path: f.Path(), test: eco.isTest(f.Path())}
		var hasAdded, hasDeleted bool
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				hasAdded = hasAdded || l.Kind == change.KindAdded
				hasDeleted = hasDeleted || l.Kind == change.KindDeleted
			}
		}
		var err error
		if hasAdded && f.NewPath != "" {
			if x.head, x.headMask, err = r.read(r.c.HeadSHA, f.NewPath, eco); err != nil {
				return err
			}
		}
		if (hasDeleted || f.Status == change.StatusDeleted) && f.OldPath != "" {
			if x.base, x.baseMask, err = r.read(r.c.BaseSHA, f.OldPath, eco); err != nil {
				return err
			}
		}
		if eco.name == "rust" {
			x.headTestFrom, x.baseTestFrom = cfgTestLine(x.headMask), cfgTestLine(x.baseMask)
		}
		r.files = append(r.files, x)
	}
	return nil
}

// read returns a file's lines at rev and their masked form. A file that
// cannot be read (too large, say) gives no lines: lines are then masked
// one by one, without what comes before them.
func (r *review) read(rev, p string, eco *ecosystem) (raw, masked []string, err error) {
	data, err := r.c.ReadFileAt(r.ctx, rev, p)
	if err != nil {
		if ctxErr := r.ctx.Err(); ctxErr != nil {
			return nil, nil, ctxErr
		}
		return nil, nil, nil
	}
	src := string(data)
	return strings.Split(src, "\n"), mask(src, eco.syntax), nil
}

var reCfgTest = regexp.MustCompile(`#\[cfg\(test\)\]`)

func cfgTestLine(masked []string) int {
	for i, l := range masked {
		if reCfgTest.MatchString(l) {
			return i + 1
		}
	}
	return 0
}

// line returns a diff line's text and its masked form, from the file's
// side it belongs to.
func (x *file) line(l change.Line) (raw, masked string) {
	lines, maskd, n := x.head, x.headMask, l.NewNumber
	if l.Kind == change.KindDeleted {
		lines, maskd, n = x.base, x.baseMask, l.OldNumber
	}
	if n >= 1 && n <= len(maskd) && n <= len(lines) && strings.TrimSuffix(lines[n-1], "\r") == strings.TrimSuffix(l.Text, "\r") {
		return l.Text, maskd[n-1]
	}
	return l.Text, mask(l.Text, x.eco.syntax)[0]
}

// inTest reports whether a diff line is test code: in a test file, or in a
// Rust file's #[cfg(test)] part.
func (x *file) inTest(l change.Line) bool {
	if x.test {
		return true
	}
	if l.Kind == change.KindDeleted {
		return x.baseTestFrom > 0 && l.OldNumber > x.baseTestFrom
	}
	return x.headTestFrom > 0 && l.NewNumber > x.headTestFrom
}

// index gathers what the checks compare across files: tests added,
// source functions removed, where tests changed.
func (r *review) index() {
	r.addedTests = map[*ecosystem]map[string]bool{}
	r.removedCode = map[*ecosystem]map[string]bool{}
	r.testedDirs = map[string]bool{}
	r.testedAny = map[*ecosystem]bool{}
	r.addedTestLines = map[*ecosystem]map[string]bool{}
	addedCode := map[*ecosystem]map[string]bool{}
	for _, x := range r.files {
		for _, name := range x.testNames(x.f.Hunks, change.KindAdded) {
			setAdd(r.addedTests, x.eco, name)
		}
		for _, h := range x.f.Hunks {
			for _, l := range h.Lines {
				if l.Kind == change.KindContext {
					continue
				}
				raw, masked := x.line(l)
				if x.inTest(l) {
					if l.Kind == change.KindAdded && isLogic(masked) {
						r.testedDirs[path.Dir(x.path)] = true
						r.testedAny[x.eco] = true
					}
					if l.Kind == change.KindAdded {
						if t, ok := substantial(raw); ok {
							setAdd(r.addedTestLines, x.eco, t)
						}
					}
					continue
				}
				name, ok := declName(x.eco.sourceDecl, raw, masked)
				if !ok || name == "" {
					continue
				}
				if l.Kind == change.KindAdded {
					setAdd(addedCode, x.eco, subject(name))
				} else {
					setAdd(r.removedCode, x.eco, subject(name))
				}
			}
		}
	}
	for eco, names := range addedCode {
		for n := range names {
			delete(r.removedCode[eco], n)
		}
	}
}

func setAdd(m map[*ecosystem]map[string]bool, eco *ecosystem, v string) {
	if m[eco] == nil {
		m[eco] = map[string]bool{}
	}
	m[eco][v] = true
}

// declName matches re against the masked line and reads the name from the
// original at the same place: masking blanks the name of a JS test, which
// is a string.
func declName(re *regexp.Regexp, raw, masked string) (string, bool) {
	m := re.FindStringIndex(masked)
	if m == nil {
		return "", false
	}
	if len(raw) != len(masked) {
		return matchName(re, masked)
	}
	return matchName(re, raw[m[0]:])
}

// testNames returns the names of the tests declared on the hunks' lines
// of kind (added or deleted), in test code.
func (x *file) testNames(hunks []change.Hunk, kind change.Kind) []string {
	var names []string
	for _, h := range hunks {
		for i, l := range h.Lines {
			if l.Kind != kind || !x.inTest(l) {
				continue
			}
			raw, masked := x.line(l)
			if x.eco.testDecl != nil {
				if name, ok := declName(x.eco.testDecl, raw, masked); ok && name != "" && name != "TestMain" {
					names = append(names, name)
				}
			}
			if x.eco.testAttr != nil && x.eco.testAttr.MatchString(masked) {
				// The declaration follows the annotation, on a line of
				// the same side of the diff.
				for j := i + 1; j < len(h.Lines) && j <= i+6; j++ {
					n := h.Lines[j]
					if n.Kind != kind && n.Kind != change.KindContext {
						continue
					}
					nraw, nmasked := x.line(n)
					if name, ok := declName(x.eco.declName, nraw, nmasked); ok && name != "" {
						names = append(names, name)
						break
					}
				}
			}
		}
	}
	return names
}

// deletedFileTests returns the names of the tests in a deleted file: its
// lines at base, read as one deleted hunk.
func (x *file) deletedFileTests() []string {
	h := change.Hunk{Lines: make([]change.Line, len(x.base))}
	for i, text := range x.base {
		h.Lines[i] = change.Line{Kind: change.KindDeleted, Text: text, OldNumber: i + 1}
	}
	return x.testNames([]change.Hunk{h}, change.KindDeleted)
}

func (r *review) add(f specialist.Finding) {
	f.Category = specialist.CategoryTests
	f.Engine = specialist.EngineBuiltin
	if f.EndLine < f.Line {
		f.EndLine = f.Line
	}
	r.findings = append(r.findings, f)
}

// reTestHandle matches a Go call given the test's handle: a helper that
// checks or runs part of the test (testGetWithDash(t), check(t, …)).
var reTestHandle = regexp.MustCompile(`\w\(\s*(t|b|tb|f)\s*[,)]`)

// commentedOut finds test code the change comments out: a call given the
// test's handle (a helper that checks or runs part of the test) deleted
// and added back as a comment in the same hunk. The test stays and
// passes, and that part of it is gone. (Go's handle; an assertion
// commented out is found by removedAssertions in every language.)
func (r *review) commentedOut(x *file) {
	if x.eco.name != "go" {
		return
	}
	for _, h := range x.f.Hunks {
		deleted := map[string]bool{}
		for _, l := range h.Lines {
			if l.Kind == change.KindDeleted && x.inTest(l) {
				if _, masked := x.line(l); strings.TrimSpace(masked) != "" {
					deleted[strings.Join(strings.Fields(l.Text), " ")] = true
				}
			}
		}
		if len(deleted) == 0 {
			continue
		}
		for _, l := range h.Lines {
			code, ok := strings.CutPrefix(strings.TrimSpace(l.Text), "//")
			if l.Kind != change.KindAdded || !ok || !x.inTest(l) {
				continue
			}
			code = strings.Join(strings.Fields(code), " ")
			if !deleted[code] {
				continue
			}
			// An assertion commented out is an assertion removed,
			// reported as such.
			masked := mask(code, x.eco.syntax)[0]
			if x.eco.assert.MatchString(masked) || !reTestHandle.MatchString(masked) {
				continue
			}
			r.add(specialist.Finding{
				Rule: RuleCommentedOut, Severity: sevAssert, Path: x.path, Line: l.NewNumber,
				Headline: fmt.Sprintf("Test code commented out: `%s` no longer runs", code),
				Body: "The change turns this line of the test into a comment: the test still passes, and what the line " +
					"checked is no longer checked. If it fails, fix the code or the check; if it must stay off for " +
					"now, say why and link an issue, or skip the test visibly.",
				Cause: fmt.Sprintf("the change commented out line %d of the base", baseNumber(h, code)),
			})
		}
	}
}

// baseNumber is the base line number of the deleted line of h whose
// normalised text is code.
func baseNumber(h change.Hunk, code string) int {
	for _, l := range h.Lines {
		if l.Kind == change.KindDeleted && strings.Join(strings.Fields(l.Text), " ") == code {
			return l.OldNumber
		}
	}
	return 0
}

// reHelperName is the name of a skip helper in its call.
var reHelperName = regexp.MustCompile(`[\w.]*[Ss]kip\w*`)

// reShort matches the guard of a test skipped in -short mode, Go's
// sanctioned way of keeping slow tests out of quick runs.
var reShort = regexp.MustCompile(`\btesting\.Short\(\)`)

// reCondition matches a line that opens a condition the next line runs
// under, or a Ruby skip with a trailing condition.
var reCondition = regexp.MustCompile(`^\s*(\}\s*else\s+)?(if|elif|else|unless|when)\b|\b(if|unless)\b`)

// skips finds skips and focused tests added to test code.
func (r *review) skips(x *file) {
	for _, h := range x.f.Hunks {
		for i, l := range h.Lines {
			if l.Kind != change.KindAdded || !(x.inTest(l) || x.eco.name == "rust") {
				continue
			}
			_, masked := x.line(l)
			for _, rule := range x.eco.skips {
				m := rule.re.FindStringIndex(masked)
				if m == nil {
					continue
				}
				what := strings.TrimSpace(strings.TrimRight(masked[m[0]:m[1]], "(["))
				if strings.HasPrefix(what, "#[") {
					what += "]"
				}
				if rule.helper {
					what = reHelperName.FindString(what)
				}
				if rule.focus {
					r.add(specialist.Finding{
						Rule: RuleSkipAdded, Severity: sevFocus, Path: x.path, Line: l.NewNumber,
						Headline: fmt.Sprintf("Focused test (%s) left in: every other test stops running", what),
						Body: fmt.Sprintf("`%s` makes the runner run only the focused tests and silently skip the rest, "+
							"so the suite passes while checking almost nothing. Remove the focus before merging.", what),
					})
					break
				}
				prev := previousCode(x, h, i)
				if rule.imperative && (reShort.MatchString(masked) || reShort.MatchString(prev)) {
					break // skipped in -short mode only; the full run still has it
				}
				if replacesSkip(x, h, i, rule) {
					break // a skip rewritten (its condition, its reason), not added
				}
				conditional := rule.helper || rule.conditional || rule.imperative && (reCondition.MatchString(masked[:m[0]]) || reCondition.MatchString(prev) ||
					reCondition.MatchString(masked[m[1]:]))
				f := specialist.Finding{
					Rule: RuleSkipAdded, Severity: sevSkip, Path: x.path, Line: l.NewNumber,
					Headline: fmt.Sprintf("Test skip added (%s): the test no longer runs", what),
					Body: "What this test checked is no longer checked, and nothing will fail to remind anyone. " +
						"If the test is broken, fix it or the code under test; if it must stay skipped for now, " +
						"give the reason in the skip and link an issue for turning it back on.",
				}
				if conditional {
					f.Severity = specialist.SeverityLow
					f.Headline = fmt.Sprintf("Conditional test skip added (%s)", what)
					f.Body = "The test is skipped when this condition holds. Make sure it holds only where the test " +
						"truly cannot run (a missing tool or service), and that CI still runs the test."
				}
				raw, _ := x.line(l)
				if r.isMoved(x, raw) {
					break // the skip came with its test, moved from elsewhere
				}
				if name, existed := r.testExisted(x, h, i, rule.imperative); !existed {
					// A new test never ran: skipping it on some platforms
					// is how it is written, not a loss.
					if conditional {
						break
					}
					f.Severity = specialist.SeverityLow
					f.Headline = fmt.Sprintf("New test %s is skipped (%s): it never runs", quoteName(name), what)
					f.Body = "The change adds this test skipped, so it checks nothing yet. Make it run, or give the " +
						"reason in the skip and link an issue for turning it on."
				}
				r.add(f)
				break
			}
		}
	}
}

// replacesSkip reports whether the i-th line of the hunk, which adds a
// skip, rewrites one: the block of lines the change replaced with the
// block it stands in (the deleted lines just before its run of added
// lines) held a skip of the same kind, in code (a condition spelled
// differently, a reason reworded). A skip uncommented, or removed from
// another test elsewhere in the hunk, is not a rewrite.
func replacesSkip(x *file, h change.Hunk, i int, rule skipRule) bool {
	j := i
	for j > 0 && h.Lines[j-1].Kind == change.KindAdded {
		j--
	}
	for j > 0 && h.Lines[j-1].Kind == change.KindDeleted {
		j--
		if _, masked := x.line(h.Lines[j]); rule.re.MatchString(masked) {
			return true
		}
	}
	return false
}

// testExisted returns the name of the test the i-th line of the hunk
// skips, and whether the file had that test at base. A test it cannot
// name is taken to have existed.
func (r *review) testExisted(x *file, h change.Hunk, i int, imperative bool) (string, bool) {
	l := h.Lines[i]
	name := ""
	if x.eco.name == "go" {
		if g := r.goHead(x); g != nil {
			if fn := g.funcAt(l.NewNumber); fn != nil {
				name = fn.key
			}
		}
	} else {
		// A skip called at run time is inside its test; an annotation or
		// a prefix marks the test it stands on or before.
		step, from := 1, l.NewNumber
		if imperative {
			step = -1
		}
		// (A test's other decorators may stand between: a parametrize
		// list runs to tens of lines.)
		for n, k := from, 0; n >= 1 && n <= len(x.headMask) && n <= len(x.head) && (imperative || k <= 40); n, k = n+step, k+1 {
			raw, masked := x.head[n-1], x.headMask[n-1]
			re := x.eco.testDecl
			if re == nil {
				re = x.eco.declName
			}
			if got, ok := declName(re, raw, masked); ok && got != "" {
				name = got
				break
			}
			if !imperative && k > 0 && x.eco.sourceDecl != nil && x.eco.sourceDecl.MatchString(masked) {
				break // a declaration that is not a test: the skip is not on one
			}
		}
	}
	if name == "" {
		return "", true
	}
	base := r.baseLines(x)
	if base == nil {
		return name, false
	}
	if x.eco.name == "go" {
		return name, r.goBase(x).funcByKey(name) != nil
	}
	re := x.eco.testDecl
	if re == nil {
		re = x.eco.declName
	}
	for k, raw := range base {
		if k < len(x.baseMask) {
			if got, ok := declName(re, raw, x.baseMask[k]); ok && got == name {
				return name, true
			}
		}
	}
	return name, false
}

// previousCode returns the masked text of the nearest non-blank line
// before the i-th of the hunk on the head side.
func previousCode(x *file, h change.Hunk, i int) string {
	for j := i - 1; j >= 0; j-- {
		l := h.Lines[j]
		if l.Kind == change.KindDeleted {
			continue
		}
		_, masked := x.line(l)
		if strings.TrimSpace(masked) != "" {
			return masked
		}
	}
	return ""
}

// deletedTests finds tests removed without coming back elsewhere in the
// change, when the code they tested stays.
func (r *review) deletedTests(x *file) {
	if x.f.Status == change.StatusDeleted {
		if !x.test {
			return
		}
		names := r.gone(x, x.deletedFileTests())
		if len(names) == 0 || r.sourceDeletedWith(x) || r.cameBack(x, x.base) {
			return
		}
		r.add(specialist.Finding{
			Rule: RuleTestDeleted, Severity: sevDeleted, Path: x.path,
			Headline: fmt.Sprintf("Test file deleted with %s", countTests(names)),
			Body: fmt.Sprintf("The change deletes %s and its tests (%s), and they do not reappear elsewhere, "+
				"while the code they tested stays. Keep the tests, move them, or say in the description why "+
				"that behavior no longer needs checking.", x.path, list(names)),
		})
		return
	}
	if x.f.Status == change.StatusAdded {
		return
	}
	// A hunk that declares as many tests as it removes renames them; one
	// whose removed lines the change adds back elsewhere moves them.
	var removed []string
	for _, h := range x.f.Hunks {
		gone := x.testNames([]change.Hunk{h}, change.KindDeleted)
		if len(gone) > len(x.testNames([]change.Hunk{h}, change.KindAdded)) && !r.cameBack(x, x.deletedTestLines(h)) {
			removed = append(removed, gone...)
		}
	}
	names := r.gone(x, removed)
	if len(names) == 0 {
		return
	}
	headline := fmt.Sprintf("Test %s removed", quoteName(names[0]))
	if len(names) > 1 {
		headline = fmt.Sprintf("%d tests removed: %s", len(names), list(names))
	}
	// On the line where the first removed test stood.
	line, cause := 0, ""
	for _, h := range x.f.Hunks {
		for _, l := range h.Lines {
			if line == 0 && l.Kind == change.KindDeleted && strings.Contains(l.Text, names[0]+"(") {
				line, cause = deletionSite(x, l.OldNumber)
			}
		}
	}
	r.add(specialist.Finding{
		Rule: RuleTestDeleted, Severity: sevDeleted, Path: x.path, Line: line, EndLine: line, Cause: cause,
		Headline: headline,
		Body: "The change deletes these tests and does not add them back elsewhere, while the code they " +
			"tested stays. Keep them, or replace them with tests of the new behavior; if they were " +
			"obsolete, say why in the description.",
	})
}

// movedShare is the share of a removed block of test code's substantial
// lines that must come back among the change's added test lines for the
// block to count as moved (or renamed and lightly edited) rather than
// removed.
const movedShare = 0.6

// cameBack reports whether the removed test lines mostly reappear as added
// test lines of the same ecosystem somewhere in the change: the tests were
// moved, perhaps renamed and adapted to their new place.
func (r *review) cameBack(x *file, removed []string) bool {
	total, back := 0, 0
	for _, raw := range removed {
		t, ok := substantial(raw)
		if !ok {
			continue
		}
		total++
		if r.addedTestLines[x.eco][t] {
			back++
		}
	}
	return total >= 3 && float64(back) >= movedShare*float64(total)
}

// deletedTestLines are the hunk's removed lines of test code.
func (x *file) deletedTestLines(h change.Hunk) []string {
	var out []string
	for _, l := range h.Lines {
		if l.Kind == change.KindDeleted && x.inTest(l) {
			raw, _ := x.line(l)
			out = append(out, raw)
		}
	}
	return out
}

// substantial trims a line and says whether it says enough to tell where
// it came from: not a brace, a blank or a short keyword line.
func substantial(raw string) (string, bool) {
	t := strings.TrimSpace(raw)
	return t, len(t) >= 12
}

// quoteName quotes a test's name that is a sentence ("adds negatives"),
// not an identifier.
func quoteName(n string) string {
	if strings.ContainsAny(n, " \t") {
		return `"` + n + `"`
	}
	return n
}

// gone returns the names of removed tests that the change does not add
// back (moved or renamed within the change, or merged into a test whose
// name begins theirs) and whose subject it does not remove as well: a
// test deleted with its function, with a type or method it uses, or (in
// Go) in a package that loses source files, is a clean-up.
func (r *review) gone(x *file, removed []string) []string {
	var out []string
	for _, n := range removed {
		if r.addedTests[x.eco][n] || r.removedCode[x.eco][subject(n)] || slices.Contains(out, n) ||
			r.replacedBy(x, n) || r.testsRemovedCode(x, n) || (x.eco.name == "go" && r.sourceDeletedWith(x)) ||
			r.callsRemovedCode(x, n) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// reCalled matches a call in a masked line, the name called in group 1.
var reCalled = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(`)

// callsRemovedCode reports whether the test n, removed from x (outside
// Go, which testsRemovedCode reads), calls a function the change removes
// from the source: the test went with the code it tested (commander.js
// deleted its stripColor for node's stripVTControlCharacters, and the
// tests of stripColor with it). The test runs from its declaration to the
// next one.
func (r *review) callsRemovedCode(x *file, n string) bool {
	if x.eco.name == "go" || len(r.removedCode[x.eco]) == 0 {
		return false
	}
	in := false
	for i, raw := range x.base {
		if i >= len(x.baseMask) {
			break
		}
		masked := x.baseMask[i]
		if name, ok := x.declared(raw, masked); ok {
			if in {
				return false // the next test
			}
			in = name == n
		}
		if !in {
			continue
		}
		for _, m := range reCalled.FindAllStringSubmatch(masked, -1) {
			if !keywords[m[1]] && r.removedCode[x.eco][subject(m[1])] {
				return true
			}
		}
	}
	return false
}

// declared returns the name of the test a line declares, if it declares
// one (an annotated test's name is on a later line, and is not read).
func (x *file) declared(raw, masked string) (string, bool) {
	if x.eco.testDecl == nil {
		return "", false
	}
	return declName(x.eco.testDecl, raw, masked)
}

// replacedBy reports whether a test the change adds replaces the removed
// test n: its name begins n's, as TestGroup does TestGroupGet (several
// tests merged into one, often a table).
func (r *review) replacedBy(x *file, n string) bool {
	for a := range r.addedTests[x.eco] {
		if len(a) >= 6 && len(a) < len(n) && strings.HasPrefix(n, a) {
			return true
		}
	}
	return false
}

// sourceDeletedWith reports whether the change deletes the source a
// deleted test file tested: a file of the same subject, or for Go any
// source of the same package.
func (r *review) sourceDeletedWith(x *file) bool {
	for _, y := range r.files {
		if y.f.Status != change.StatusDeleted || y.test || y.eco != x.eco {
			continue
		}
		if subject(y.path) == subject(x.path) || (x.eco.name == "go" && path.Dir(y.path) == path.Dir(x.path)) {
			return true
		}
	}
	return false
}

func countTests(names []string) string {
	if len(names) == 1 {
		return "1 test"
	}
	return fmt.Sprintf("%d tests", len(names))
}

// list names at most five things.
func list(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

// removedAssertions finds hunks of test code that lose assertions without
// gaining comparable ones.
func (r *review) removedAssertions(x *file) {
	if x.f.Status == change.StatusDeleted || x.f.Status == change.StatusAdded || x.eco.assert == nil {
		return
	}
	if x.eco.name == "go" && x.test {
		r.goRemovedAssertions(x)
		return
	}
	type hunkCount struct {
		h              change.Hunk
		removed, added int
		firstRemoved   int
		first          string
	}
	var counts []hunkCount
	total := 0
	for _, h := range x.f.Hunks {
		hc := hunkCount{h: h, firstRemoved: -1}
		inRemovedTest := x.removedTestLines(h)
		kept, replacing := x.keptExpectations(h)
		for i, l := range h.Lines {
			if l.Kind == change.KindContext || !x.inTest(l) || inRemovedTest[i] || kept[i] || replacing[i] {
				continue
			}
			raw, masked := x.line(l)
			if l.Kind == change.KindAdded {
				if x.eco.assert.MatchString(masked) || reComparable.MatchString(masked) {
					hc.added++
				}
				continue
			}
			if !x.eco.assert.MatchString(masked) {
				continue
			}
			hc.removed++
			if hc.firstRemoved < 0 {
				hc.firstRemoved, hc.first = i, strings.TrimSpace(raw)
			}
		}
		total += hc.removed - hc.added
		counts = append(counts, hc)
	}
	if total <= 0 {
		return // assertions moved within the file, or rewritten
	}
	fileLevel := 0
	for _, hc := range counts {
		net := hc.removed - hc.added
		if net <= 0 {
			continue
		}
		line := nearestAdded(hc.h, hc.firstRemoved)
		if line == 0 {
			fileLevel += net
			continue
		}
		r.add(specialist.Finding{
			Rule: RuleAssertionRemoved, Severity: sevAssert, Path: x.path, Line: line,
			Headline: assertHeadline(net, hc.first),
			Body:     assertBody(net),
		})
	}
	if fileLevel > 0 {
		r.add(specialist.Finding{
			Rule: RuleAssertionRemoved, Severity: sevAssert, Path: x.path,
			Headline: assertHeadline(fileLevel, ""),
			Body:     assertBody(fileLevel),
		})
	}
}

func assertHeadline(n int, first string) string {
	if n == 1 && first != "" {
		if len(first) > 80 {
			first = first[:77] + "..."
		}
		return "Assertion removed: " + first
	}
	if n == 1 {
		return "An assertion was removed from this test file"
	}
	return fmt.Sprintf("%d assertions removed with nothing comparable added", n)
}

func assertBody(n int) string {
	what := "an assertion"
	if n > 1 {
		what = fmt.Sprintf("%d assertions", n)
	}
	return fmt.Sprintf("The change deletes %s from a test and adds nothing comparable in its place, so the test "+
		"now accepts behavior it used to reject. If the assertion was wrong, replace it with the right one; "+
		"if the behavior it checked changed on purpose, assert the new behavior.", what)
}

// reComparable matches an added line that checks something in a way the
// ecosystem's assertion pattern does not know: a helper named for checking
// (checkSum, assertValid, mustParse, expectError), or a Go helper handed
// the test's t.
var reComparable = regexp.MustCompile(`(?i)\b\w*(assert|expect|check|verify|must|require|should|ensure)\w*\s*\(|\(\s*(t|tb|b)\s*[,)]`)

// removedTestLines marks the lines of a hunk that belong to a removed
// test: in a run of deleted lines, those from the test's declaration on.
// Their assertions go with the test, which the test-deleted check
// reports; the lines before the declaration end the test above it.
func (x *file) removedTestLines(h change.Hunk) map[int]bool {
	marks := map[int]bool{}
	for i := 0; i < len(h.Lines); {
		if h.Lines[i].Kind != change.KindDeleted {
			i++
			continue
		}
		j, decl := i, -1
		for ; j < len(h.Lines) && h.Lines[j].Kind == change.KindDeleted; j++ {
			if decl >= 0 {
				continue
			}
			raw, masked := x.line(h.Lines[j])
			if x.eco.testDecl != nil {
				if _, ok := declName(x.eco.testDecl, raw, masked); ok {
					decl = j
				}
			}
			if x.eco.testAttr != nil && x.eco.testAttr.MatchString(masked) {
				decl = j
			}
		}
		for k := max(decl, 0); decl >= 0 && k < j; k++ {
			marks[k] = true
		}
		i = j
	}
	return marks
}

// nearestAdded returns the new-file number of the added line nearest to
// the i-th line of the hunk, or 0 when the hunk adds none.
func nearestAdded(h change.Hunk, i int) int {
	best, dist := 0, -1
	for j, l := range h.Lines {
		if l.Kind != change.KindAdded {
			continue
		}
		d := max(j-i, i-j)
		if dist < 0 || d < dist {
			best, dist = l.NewNumber, d
		}
	}
	return best
}

// minFileLines is the fewest lines of new logic a file must add to be
// named in the untested-change finding.
const minFileLines = 3

// newLogic is the new behavior a source file adds: its lines of it and,
// for Go, the functions they are in.
type newLogic struct {
	x     *file
	n     int
	funcs []string
}

// untestedChanges finds source files that add new behavior (not code
// moved, renamed or a call site updated) with no test change where the
// ecosystem keeps their tests, and in Go code no existing test of the
// package exercising the changed function. It reports them in one
// finding for the whole change, on the first such file, and returns
// their paths.
func (r *review) untestedChanges() (map[string]bool, error) {
	var found []newLogic
	total := 0
	out := map[string]bool{}
	keeps, err := r.keepsTests()
	if err != nil {
		return nil, err
	}
	for _, x := range r.files {
		if x.f.Status == change.StatusDeleted || !isSource(x.eco, x.path) {
			continue
		}
		// A repository with no test in a language does not keep them
		// (listmonk's Go: none in 94 files): telling each change so is
		// noise its team would mute.
		if keeps != nil && !r.keptTests(keeps, x.eco, x.path) {
			out[x.path] = true // nor is any of its exports untested
			continue
		}
		// A Go package that had no test before the change is one its
		// team does not test (handlers, commands): a new package still
		// gets the advice.
		if x.eco.name == "go" {
			untested, err := r.untestedPackage(path.Dir(x.path))
			if err != nil {
				return nil, err
			}
			if untested {
				out[x.path] = true
				continue
			}
		}
		covered := r.testedAny[x.eco]
		if x.eco.name == "go" {
			covered = r.testedDirs[path.Dir(x.path)]
		}
		if covered {
			continue
		}
		nl, err := r.newLogic(x)
		if err != nil {
			return nil, err
		}
		if nl.n >= minFileLines {
			found = append(found, nl)
			total += nl.n
		}
	}
	if total < minLogicLines {
		return out, nil
	}
	var names, parts []string
	for _, nl := range found {
		out[nl.x.path] = true
		names = append(names, nl.x.path)
		part := fmt.Sprintf("%s (%d lines", nl.x.path, nl.n)
		if len(nl.funcs) > 0 {
			part += " in " + list(nl.funcs)
		}
		parts = append(parts, part+")")
	}
	headline := fmt.Sprintf("New behavior in %s has no test", path.Base(names[0]))
	if len(names) > 1 {
		headline = fmt.Sprintf("New behavior in %d files has no test: %s", len(names), list(names))
	}
	first := found[0].x
	r.add(specialist.Finding{
		Rule: RuleUntestedChange, Severity: sevUntested, Path: first.path,
		Headline: headline,
		Body: fmt.Sprintf("The change adds %d lines of new logic, and no test of their package changes with it "+
			"(code moved or renamed, call sites updated and functions the package's tests already call are not counted): %s. "+
			"Add or update a test that exercises the new behavior (for %s: %s), or say in the description why none is needed.",
			total, strings.Join(parts, "; "), first.path, suggestTest(first.eco, first.path)),
	})
	return out, nil
}

// untestedPackage reports whether the Go package in dir existed at base
// with no test file; false when the change's source cannot list.
func (r *review) untestedPackage(dir string) (bool, error) {
	if r.untestedDirs == nil {
		r.untestedDirs = map[string]bool{}
	}
	if v, ok := r.untestedDirs[dir]; ok {
		return v, nil
	}
	files, err := r.c.ListFiles(r.ctx, r.c.BaseSHA, dir)
	if errors.Is(err, change.ErrNoListing) || errors.Is(err, fs.ErrNotExist) {
		return false, nil // a new package
	}
	if err != nil {
		return false, fmt.Errorf("list %s at base: %w", dir, err)
	}
	src, tests := false, false
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, "_test.go"):
			tests = true
		case strings.HasSuffix(f, ".go"):
			src = true
		}
	}
	r.untestedDirs[dir] = src && !tests
	return src && !tests, nil
}

// testAreas are, per ecosystem, the top-level directories of the
// repository whose code has tests ("" for the whole repository), each
// with the paths of its test files ("" for one that need not be read).
type testAreas map[*ecosystem]map[string][]string

// maxTestReads is how many test files of an area are read to find a test
// in one.
const maxTestReads = 8

// keptTests reports whether the code at p is where its ecosystem's tests
// are kept: a file named as a test that declares none (geekcomputers'
// dir_test.py, a script; Search_Engine/test_data.py, a list of strings)
// keeps nothing.
func (r *review) keptTests(a testAreas, eco *ecosystem, p string) bool {
	k := keepKey{eco, topDir(p)}
	if v, ok := r.keeps[k]; ok {
		return v
	}
	if r.keeps == nil {
		r.keeps = map[keepKey]bool{}
	}
	v := r.readsTests(a, eco, p)
	r.keeps[k] = v
	return v
}

type keepKey struct {
	eco *ecosystem
	top string
}

// readsTests is keptTests without the cache.
func (r *review) readsTests(a testAreas, eco *ecosystem, p string) bool {
	paths := append(slices.Clone(a[eco][""]), a[eco][topDir(p)]...)
	if len(paths) == 0 {
		return false
	}
	if eco.testDecl == nil {
		return true
	}
	for i, tp := range paths {
		if tp == "" || i >= maxTestReads {
			return true
		}
		data, err := r.c.ReadFile(r.ctx, tp)
		if err != nil {
			return true // unread, it may well hold tests
		}
		for line := range strings.Lines(string(data)) {
			if eco.testDecl.MatchString(line) {
				return true
			}
		}
	}
	return false
}

// testDirNames are the directories a test suite is kept in; what is
// above one is the project the suite tests.
var testDirNames = []string{"test", "tests", "testing", "__tests__", "spec", "specs"}

// keepsTests returns, per ecosystem, the areas of the repository at head
// that keep tests of it; nil when the change's source cannot list its
// tree. A test covers the top-level directory of the project it tests:
// tests/ at the root covers the whole repository; BrowserHistory/tests/
// of a collection of small projects (geekcomputers/Python: 800 scripts,
// a dozen of them tested) covers only BrowserHistory/. Go is judged per
// package instead (untestedPackage), so one test covers it all.
func (r *review) keepsTests() (testAreas, error) {
	paths, err := r.c.ListTree(r.ctx, r.c.HeadSHA)
	if errors.Is(err, change.ErrNoListing) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the head's tree: %w", err)
	}
	keeps := testAreas{}
	for _, eco := range ecosystems {
		keeps[eco] = map[string][]string{}
		if eco.name == "rust" {
			// Rust keeps unit tests in the source files themselves.
			keeps[eco][""] = []string{""}
		}
	}
	for _, p := range paths {
		for _, eco := range ecosystems {
			if !eco.isTest(p) || hasDir(p, fixtureDirs...) {
				continue
			}
			if eco.name == "go" {
				keeps[eco][""] = []string{""}
				continue
			}
			area := testedProject(p)
			// One more than is read: past the ones read without a test,
			// more test files are taken to hold some.
			if len(keeps[eco][area]) <= maxTestReads {
				keeps[eco][area] = append(keeps[eco][area], p)
			}
		}
	}
	return keeps, nil
}

// testedProject returns the top-level directory of the project the test
// at p tests: what is above its test directory, or its own directory; ""
// (the whole repository) for a test directory at the root, "." (the files
// at the root) for a test file there.
func testedProject(p string) string {
	parts := strings.Split(path.Dir(p), "/")
	for i, d := range parts {
		if slices.Contains(testDirNames, d) {
			if i == 0 {
				return ""
			}
			return parts[0]
		}
	}
	return parts[0]
}

// topDir returns the first directory of p, or "." for a file at the root.
func topDir(p string) string {
	d, _, ok := strings.Cut(p, "/")
	if !ok {
		return "."
	}
	return d
}

func dirName(p string) string {
	if d := path.Dir(p); d != "." {
		return d + "/"
	}
	return "the repository's root"
}

// suggestTest names where the ecosystem would keep the test of p.
func suggestTest(eco *ecosystem, p string) string {
	dir, base := path.Dir(p), path.Base(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	join := func(elem ...string) string { return path.Join(append([]string{dir}, elem...)...) }
	switch eco.name {
	case "go":
		return join(stem + "_test.go")
	case "python":
		return "test_" + stem + ".py, under tests/ or beside it"
	case "javascript":
		return join(stem + ".test" + path.Ext(base))
	case "jvm":
		return strings.Replace(join(stem+"Test"+path.Ext(base)), "src/main/", "src/test/", 1)
	case "ruby":
		return "spec/.../" + stem + "_spec.rb or test/.../" + stem + "_test.rb"
	case "rust":
		return "a #[cfg(test)] module in " + base + " or a file under tests/"
	case "csharp":
		return stem + "Tests.cs in the test project"
	}
	return "a test"
}

// newLogic counts the lines of new logic the change adds to a source
// file: code, not comments, imports or brackets; not lines the change
// moves from elsewhere or that only edit a call they replace; for Go only
// inside function bodies (a new type or constant is not logic to test),
// not lines that only hand up a new error or rearrange calls the change
// removes (plumbing), and not in functions the package's tests already
// exercise.
func (r *review) newLogic(x *file) (newLogic, error) {
	nl := newLogic{x: x}
	var inBody func(int) bool
	var head *goSource
	var plumbing map[int]bool
	if x.eco.name == "go" {
		inBody = goBodies(x.path, strings.Join(x.head, "\n"))
		head = r.goHead(x)
		plumbing = r.plumbing(head)
	}
	for _, h := range x.f.Hunks {
		mech := x.mechanical(h)
		for i, l := range h.Lines {
			if l.Kind != change.KindAdded || x.inTest(l) || mech[i] {
				continue
			}
			raw, masked := x.line(l)
			if !isLogic(masked) || r.isMoved(x, raw) || plumbing[l.NewNumber] {
				continue
			}
			if inBody != nil && !inBody(l.NewNumber) {
				continue
			}
			if head != nil {
				if fn := head.funcAt(l.NewNumber); fn != nil {
					// Asked only of a line of new logic in a
					// function: the whole package is parsed for it.
					tested, err := r.exercised(x, fn)
					if err != nil {
						return nl, err
					}
					if tested {
						continue
					}
					if !slices.Contains(nl.funcs, fn.key) {
						nl.funcs = append(nl.funcs, fn.key)
					}
				}
			}
			nl.n++
		}
	}
	return nl, nil
}

// exists reports whether p exists at rev, file or directory.
func (r *review) exists(rev, p string) (bool, error) {
	_, err := r.c.ReadFileAt(r.ctx, rev, p)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case r.ctx.Err() != nil:
		return false, r.ctx.Err()
	}
	// Anything else (a directory, a file too large) is there.
	return true, nil
}
