package polyglot

import (
	"context"
	"path"
	"regexp"
	"strings"

	"github.com/quorum-review/quorum/internal/specialist"
)

// site is what a rule's keep decides a report by: the analyzer's message,
// the report's lines (for a Dockerfile the whole instruction), the code
// before it in its function, and the few lines after it.
type site struct {
	// path is the file's path in the repository.
	path    string
	message string
	line    string
	// scope is the lines before the report: in Python back to the def
	// that encloses it, elsewhere a bounded number of lines.
	scope string
	// after is the few lines that follow the report.
	after string
	// subject is the text the report points at, where the analyzer's
	// message does not name it (shellcheck's $(…) or $var).
	subject string
}

// scopeLines bounds how far back a report's scope reaches, and afterLines
// how far forward: the work done per report does not grow with the file.
const (
	scopeLines = 60
	afterLines = 4
)

// siteOf returns the site of report d in the file x.
func siteOf(x *lineIndex, d diag) site {
	s := site{path: d.path, message: d.message, line: instruction(x, d), subject: d.subject}
	python := strings.HasPrefix(d.rule, "ruff:")
	indent := indentOf(x.line(d.line))
	var scope []string
	for n := d.line - 1; n >= 1 && n >= d.line-scopeLines; n-- {
		l := x.line(n)
		scope = append(scope, l)
		if python && reDef.MatchString(l) && indentOf(l) < indent {
			break
		}
	}
	for i, j := 0, len(scope)-1; i < j; i, j = i+1, j-1 {
		scope[i], scope[j] = scope[j], scope[i]
	}
	s.scope = strings.Join(scope, "\n")
	end := max(d.endLine, d.line)
	var after []string
	for n := end + 1; n <= end+afterLines; n++ {
		after = append(after, x.line(n))
	}
	s.after = strings.Join(after, "\n")
	return s
}

var reDef = regexp.MustCompile(`^\s*(async\s+)?def\s`)

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// enclosingDef is the def line that opens a Python scope, or "".
func enclosingDef(scope string) string {
	first, _, _ := strings.Cut(scope, "\n")
	if reDef.MatchString(first) {
		return first
	}
	return ""
}

// reUntrusted matches a Python expression that reads what another party
// controls: the request of a web framework, a socket, a URL fetched, the
// command line, the environment, a cookie or a header, standard input.
var reUntrusted = regexp.MustCompile(`\brequest\.|\brequest\b\s*[\[,)]|\breq\.|\.recv(from|_into)?\(|\.makefile\(|\burlopen\(|\brequests\.\w+\(|\burllib3?\b|\bhttpx\.\w+\(|\bsys\.argv\b|\bsys\.stdin\b|\bos\.environ\b|\bgetenv\(|\bcookies?\b|\.headers\b|\bb64decode\(|\bwebsocket\b|\binput\(|\.get_data\(|\.form\b|\.args\b|\.files\b|\.body\b|\bflask\b|\bdjango\b`)

// reLoadsArg finds the first argument of a deserializer's call.
var reLoadsArg = regexp.MustCompile(`\b(?:loads?|Unpickler|load_object)\(\s*([A-Za-z_][\w.]*)`)

// fromUntrusted keeps a deserializer's report (pickle, marshal, dill,
// shelve) where what it loads comes from another party: read on its line
// from a request, a socket or the command line, or assigned from one in
// the lines of its function before it. A pickle of a file the program
// wrote itself (a cache) is not kept.
func fromUntrusted(s site) bool {
	if reUntrusted.MatchString(s.line) {
		return true
	}
	m := reLoadsArg.FindStringSubmatch(s.line)
	if m == nil {
		return false
	}
	name := strings.Split(m[1], ".")[0]
	assigned := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(name) + `\s*(:[^=]*)?=[^=]|\bas\s+` + regexp.QuoteMeta(name) + `\b|\bfor\s+` + regexp.QuoteMeta(name) + `\s+in\b`)
	for _, l := range strings.Split(s.scope, "\n") {
		if assigned.MatchString(l) && reUntrusted.MatchString(l) {
			return true
		}
	}
	// A parameter of a web handler (def post(self, request, data)).
	def := enclosingDef(s.scope)
	return def != "" && reUntrusted.MatchString(def) && strings.Contains(def, name)
}

// reSecret matches the name of a secret a weak hash must not protect: a
// password or passphrase, a secret, a credential.
var reSecret = regexp.MustCompile(`(?i)passw|\bpwd\b|_pwd\b|\bpwd_|passphrase|secret|credential`)

// hashesASecret keeps a weak hash's report (MD5, SHA-1) where what it
// hashes is a password or a secret: named so on its line or in its
// function's name. A checksum, a cache key or an API's signature
// (most uses, measured in docs/languages.md) is not kept.
func hashesASecret(s site) bool {
	return reSecret.MatchString(s.line) || reSecret.MatchString(enclosingDef(s.scope))
}

// reHTMLValue is what dangerouslySetInnerHTML is given.
var reHTMLValue = regexp.MustCompile(`__html\s*:\s*(.*)`)

// reSafeHTML matches a value that is a literal, sanitized, or the JSON of
// a <script> tag's data.
var reSafeHTML = regexp.MustCompile(`(?i)^(['"][^'"]*['"]|` + "`[^`$]*`" + `)\s*[,}]|sanitiz|purif|escape|\bxss\b|JSON\.stringify`)

// injectsHTML keeps React's dangerouslySetInnerHTML where the HTML is not
// a literal and not sanitized: a value that reaches the DOM as markup.
func injectsHTML(s site) bool {
	m := reHTMLValue.FindStringSubmatch(s.line + "\n" + s.after)
	if m == nil {
		// The object is built elsewhere: {{...props.html}} or a variable.
		return !reSafeHTML.MatchString(s.line)
	}
	return !reSafeHTML.MatchString(strings.TrimSpace(m[1]))
}

// reTestCode matches the paths of tests and their fixtures, in any
// language: test directories, test_x.py, x_test.py, conftest.py,
// x.test.ts, x.spec.js, __tests__.
var reTestCode = regexp.MustCompile(`(^|/)(tests?|testing|__tests__|spec|__mocks__)/|(^|/)test_[^/]*\.py$|_tests?\.py$|(^|/)conftest\.py$|\.(test|spec)\.[cm]?[jt]sx?$`)

// testCode reports whether p is test code: it runs in the repository's CI,
// not where the program ships.
func testCode(p string) bool { return reTestCode.MatchString(p) }

// testDataDirs are the directories, under a test directory, that hold a
// parser's or formatter's input: black's tests/data/cases, ruff's
// resources/test/fixtures, prettier's tests/format.
var testDataDirs = map[string]bool{
	"data": true, "cases": true, "resources": true, "samples": true, "snapshots": true, "__snapshots__": true,
	"corpus": true, "inputs": true, "input": true, "expected": true, "golden": true, "format": true,
}

// reTestDir matches a test directory's name: tests, test, yapftests.
var reTestDir = regexp.MustCompile(`^(tests?|testing|__tests__|spec|\w+tests)$`)

// testData reports whether p is a test's input data rather than code: a
// file under testdata/ (Go's convention, taken up elsewhere), or under a
// test directory and a data directory (tests/data/cases,
// resources/test/fixtures). Such a file is what a formatter or
// a parser is tested on (it may be wrong on purpose); it is not reviewed
// as code. A test's fixtures (conftest.py, tests/fixtures/app.py) are
// code, and are.
func testData(p string) bool {
	tests, data := false, false
	for _, d := range strings.Split(path.Dir(p), "/") {
		switch {
		case d == "testdata" || d == "test_data" || d == "test-data" || d == "__fixtures__":
			return true
		case reTestDir.MatchString(d):
			tests = true
		case testDataDirs[d]:
			data = true
		}
	}
	return tests && data
}

// noteTestData tells the review which analysed files are a test's input
// data, whose reports are not findings.
func noteTestData(ctx context.Context, files []fileRun) {
	var data []string
	for _, f := range files {
		if f.why == "" && testData(f.path) {
			data = append(data, f.path)
		}
	}
	if len(data) > 0 {
		specialist.Note(ctx, "Not reviewed as code, as a test's input data (a parser's or a formatter's cases): %s.", strings.Join(data, ", "))
	}
}

// noteTypeAware tells the review that oxlint's type-aware rules did not
// run on its files, when oxlint-tsgolint is missing.
func (e *Engine) noteTypeAware(ctx context.Context, files []fileRun) {
	if e.found[Oxlint].TypeAware != "" {
		return
	}
	for _, f := range files {
		if f.why == "" && f.tool == Oxlint {
			specialist.Note(ctx, "oxlint's type-aware rules (floating promises, async callbacks where a void one is expected) did not run: oxlint-tsgolint %s is not installed beside oxlint (quorum analyzers install).", TsgolintVersion)
			return
		}
	}
}

// reTypeScript matches a TypeScript file's name.
var reTypeScript = regexp.MustCompile(`\.[cm]?tsx?$`)

// typed keeps a type-aware report in TypeScript, where the types it
// reasons from are declared. In JavaScript they are inferred, and wrongly
// often enough (await of an async method's result called not a promise)
// that a report is a guess; and a promise left floating in JavaScript is
// mostly an event handler's call nobody waits for by design
// (docs/languages.md).
func typed(s site) bool { return reTypeScript.MatchString(s.path) }

// floats keeps no-floating-promises in TypeScript (typed), inside a
// function: a script's top-level main() that rejects ends Node.js with the
// error (an unhandled rejection), so nothing is lost.
func floats(s site) bool { return typed(s) && indentOf(s.line) > 0 }

// reArrayCallback matches an array method whose callback's returned
// promise is dropped or taken for a truth value.
var reArrayCallback = regexp.MustCompile(`\.(forEach|filter|some|every|find|findIndex|findLast|findLastIndex)\(\s*async\b`)

// promiseLost keeps no-misused-promises where a promise is taken for a
// truth value (if (p)), or an async callback is given to an array method
// that drops what it returns (forEach: its errors are lost, and nothing
// waits for it) or reads it as a boolean (filter, some: always true).
// An async event handler (addEventListener('click', async …)) is not
// kept: nobody waits for an event's handler, whatever it returns.
func promiseLost(s site) bool {
	return !strings.Contains(s.message, "void return") || reArrayCallback.MatchString(s.line)
}

// reLoopHead matches a loop's head, where an assignment as the condition
// is the idiom (while (m = re.exec(s))).
var reLoopHead = regexp.MustCompile(`^\s*(\}\s*)?(while|for|do)\b`)

// reAssignedValue finds what an assignment (not ==, <=, =>) assigns, up to
// the end of its operand.
var reAssignedValue = regexp.MustCompile(`[\w$\])]\s*=([^=>][^&|?;]*)`)

// assignsAValue keeps no-cond-assign (if (x = y)) where what is assigned is
// a value — a literal, a name, a member: the comparison that was meant
// (if (scale = 1.0)). Not where it is a call's result (if (m =
// stream.match(re))) or in a loop's head: the idiom that assigns and tests
// at once (measured on CodeMirror's modes, docs/languages.md).
func assignsAValue(s site) bool {
	if reLoopHead.MatchString(s.line) {
		return false
	}
	m := reAssignedValue.FindStringSubmatch(s.line)
	return m == nil || !strings.Contains(m[1], "(")
}
