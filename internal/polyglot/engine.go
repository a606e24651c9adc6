package polyglot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/lang"
	"github.com/quorum-review/quorum/internal/memo"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/udiff"
)

// DefaultTimeout bounds one run of one analyzer.
const DefaultTimeout = 60 * time.Second

// maxFile is the largest file an analyzer is given; a larger changed file
// is noted as not analysed.
const maxFile = 2 << 20

// Config configures an Engine.
type Config struct {
	// Dir is where `quorum analyzers install` put the analyzers;
	// DefaultDir when empty. PATH is searched after it.
	Dir string
	// Timeout bounds each run of an analyzer (DefaultTimeout when 0).
	Timeout time.Duration
	// Ran, when set, is told of each analyzer's work on a change (its runs
	// on the head and on the base, together): how many files, how long,
	// and the error that stopped it.
	Ran func(tool string, files int, took time.Duration, err error)
}

// Engine runs the analyzers on changes. The specialists of a review share
// one Engine: each change is analysed once, whoever asks first, and each
// specialist takes the findings of its rules. It is safe for concurrent
// use.
type Engine struct {
	dir     string
	timeout time.Duration
	ran     func(string, int, time.Duration, error)
	found   map[*Tool]Found
	order   []Found
	runs    memo.Memo[*outcome]
}

// New locates the analyzers (see Locate) and returns an engine that runs
// the ones found.
func New(ctx context.Context, cfg Config) *Engine {
	if cfg.Dir == "" {
		cfg.Dir = DefaultDir()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	e := &Engine{dir: cfg.Dir, timeout: cfg.Timeout, ran: cfg.Ran, found: map[*Tool]Found{}, runs: memo.Memo[*outcome]{Keep: 2}}
	e.order = Locate(ctx, cfg.Dir)
	for _, f := range e.order {
		e.found[f.Tool] = f
	}
	return e
}

// Found says which analyzers the engine runs, and why not the others.
func (e *Engine) Found() []Found { return slices.Clone(e.order) }

// outcome is what the analyzers made of one change.
type outcome struct {
	// files are the changed files of the analyzers' languages.
	files []fileRun
	// diags are their reports at head on every known rule.
	diags []diag
	// head holds the changed files' contents at head, lines their lines,
	// and patch them as patches are written of them.
	head  map[string][]byte
	lines map[string]*lineIndex
	patch map[string]*udiff.File
	// twins counts the reports at base, by twinKey: a report on the
	// same rule and the same line text is not new.
	twins map[string]int
	// added are the suppressions the change added, by path: blanked in
	// the analyzers' copies (suppress.go).
	added map[string][]suppression
}

type fileRun struct {
	path string
	tool *Tool
	// why it was not analysed; empty when it was.
	why string
}

// worthSaying reports whether the rule of report d would keep it in the
// file x. A base's report its rule drops is no twin of the head's it
// keeps: hadolint says "do not use apt" of an apt install with -y and
// without, and the line it is said on (RUN apt update && \) is the same.
func worthSaying(d diag, x *lineIndex) bool {
	r, ok := lookup(d.rule)
	return !ok || r.keep == nil || r.keep(siteOf(x, d))
}

func twinKey(rule, path, text string) string {
	return rule + "\x00" + path + "\x00" + strings.TrimSpace(text)
}

// Findings returns the findings of specialist name's rules that the change
// introduced: on lines it added or modified, and not reported of the same
// line at base. It tells the pipeline which changed files each analyzer
// analysed and why the others were not. A change without files of these
// languages has none.
func (e *Engine) Findings(ctx context.Context, c *change.Change, name string) ([]specialist.Finding, error) {
	rs := specialist.RulesOf(ctx)
	extra := oxlintExtras(rs)
	key := c.BaseSHA + ".." + c.HeadSHA + "\x00" + strings.Join(extra, ",")
	o, err := e.runs.Do(ctx, key, func() (*outcome, error) { return e.run(ctx, c, extra) })
	if err != nil {
		return nil, err
	}
	if name == specialist.Security {
		noteAdded(ctx, o.files, o.added, rs)
	}
	noteRefused(ctx, name, rs)
	if name == specialist.Logic {
		noteTestData(ctx, o.files)
		e.noteTypeAware(ctx, o.files)
	}
	for _, f := range o.files {
		if f.why == "" {
			specialist.Analysed(ctx, f.tool.Name, f.path)
		} else {
			specialist.NotAnalysed(ctx, f.why, f.path)
		}
	}
	files := map[string]*change.File{}
	for _, f := range c.Files {
		files[f.Path()] = f
	}
	twins := map[string]int{}
	for k, n := range o.twins {
		twins[k] = n
	}
	added := map[string][]int{}
	// The base's reports are the head's on the lines the change left as
	// they were first: a line the change adds that repeats one the base
	// had (eval(json) put back above its fallback) is new.
	for _, d := range o.diags {
		if f := files[d.path]; f != nil && !changed(f, added, d) && worthSaying(d, o.lines[d.path]) {
			if k := twinKey(d.rule, d.path, o.lines[d.path].line(d.line)); twins[k] > 0 {
				twins[k]--
			}
		}
	}
	var fs []specialist.Finding
	said := map[string]bool{}
	first, again := map[string]int{}, map[int][]int{}
	for _, d := range o.diags {
		r, ok := lookup(d.rule)
		if !ok || r.Specialist != name || !on(rs, d.rule, r) || !changed(files[d.path], added, d) {
			continue
		}
		if testData(d.path) {
			// A formatter's or a parser's input, wrong on purpose.
			continue
		}
		if r.Category == specialist.CategorySecurity && (strings.HasPrefix(d.rule, "ruff:") || strings.HasPrefix(d.rule, "oxlint:")) && testCode(d.path) {
			// A test's request without a timeout, its subprocess with a
			// shell, its HTML: test code does not ship. (A test's rm -rf
			// runs on a developer's machine: shell is kept.)
			continue
		}
		text := o.lines[d.path].line(d.line)
		if r.keep != nil && !r.keep(siteOf(o.lines[d.path], d)) {
			continue
		}
		if testCode(d.path) && specialist.SeverityRank(r.Severity) < specialist.SeverityRank(medium) {
			// A bug in a test fails the test, in CI: it does not reach
			// users, and does not by itself block a merge.
			r.Severity = medium
		}
		if k := twinKey(d.rule, d.path, text); twins[k] > 0 {
			twins[k]--
			continue
		}
		// One comment per line and kind: shellcheck reports each unquoted
		// word of a line, and $* as both SC2048 and SC2086.
		k := fmt.Sprintf("%s\x00%s\x00%d", sameKind(d.rule), d.path, d.line)
		if said[k] {
			continue
		}
		said[k] = true
		// And one comment per hunk for the same report: an unquoted
		// $dest used three times in a hunk is one mistake. A repeat in
		// another hunk of the diff is read there, apart from the first,
		// and is fixed there: it gets its own comment (modman's rm -rf
		// $dest, 15 lines below its [ -L $dest ]). A report fixed in one
		// place for all its lines is one comment per file: an undefined
		// name used eleven times is defined once.
		where := 0
		if !fixedOnce(d.rule) {
			where = hunkStart(files[d.path], d.line)
		}
		same := fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%d", d.rule, d.path, d.message, d.subject, where)
		if i, ok := first[same]; ok {
			again[i] = append(again[i], d.line)
			continue
		}
		first[same] = len(fs)
		f := e.finding(unfixed(d, o.added[d.path]), r, o.patch[d.path])
		tellAdded(&f, d, o.added[d.path])
		fs = append(fs, f)
	}
	for i, lines := range again {
		fs[i].Body += "\n\nThe same on " + joinLines(lines) + "."
	}
	return specialist.OnChangedLines(c, fs), nil
}

// fixedOnce reports whether a rule's reports are fixed in one place for
// all the lines they are on: an undefined name is defined or imported
// once (geekcomputers e0257c59's EMPLOYEE_CREATE_ACCOUNT_PAGE, used in two
// hunks 32 lines apart).
func fixedOnce(rule string) bool {
	switch rule {
	case "ruff:F821", "ruff:F822":
		return true
	}
	return false
}

// hunkStart is where the hunk of f that holds line starts, 0 where none
// does.
func hunkStart(f *change.File, line int) int {
	if h := f.HunkFor(line); h != nil {
		return h.NewStart
	}
	return 0
}

// maxJoinedLines is how many line numbers a finding's body names; a
// report repeated on thousands of lines names the first and counts the
// rest.
const maxJoinedLines = 20

// joinLines names line numbers: "line 12", "lines 12, 40 and 52",
// "lines 1, 2, … 20 and 980 more".
func joinLines(lines []int) string {
	var parts []string
	for _, l := range lines[:min(len(lines), maxJoinedLines)] {
		parts = append(parts, strconv.Itoa(l))
	}
	if len(lines) > maxJoinedLines {
		parts = append(parts, fmt.Sprintf("%d more", len(lines)-maxJoinedLines))
	}
	if len(parts) == 1 {
		return "line " + parts[0]
	}
	return "lines " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// sameKind returns the kind of a rule for deduplication on one line: the
// rule, or one kind for shellcheck's unquoted expansions, and one for
// oxlint's two reports of a comparison with a new object (`x === []` is
// both a constant binary expression and an object literal comparison).
func sameKind(rule string) string {
	switch rule {
	case "shellcheck:SC2086", "shellcheck:SC2046", "shellcheck:SC2048", "shellcheck:SC2068", "shellcheck:SC2070":
		return "shellcheck:unquoted"
	case "oxlint:eslint/no-constant-binary-expression", "oxlint:oxc/bad-object-literal-comparison":
		return "oxlint:new-object-comparison"
	}
	return rule
}

// changed reports whether a report lies on lines the change added or
// modified. added caches each file's added lines, so that a report
// spanning the whole file costs no more than one on a line.
func changed(f *change.File, added map[string][]int, d diag) bool {
	if f == nil {
		return false
	}
	a, ok := added[f.Path()]
	if !ok {
		a = f.AddedLines()
		added[f.Path()] = a
	}
	return change.AnyIn(a, d.line, max(d.endLine, d.line))
}

// finding turns a report into a finding; its fix becomes a patch of the
// file, when the file's bytes are what the analyzer read (patch is nil
// for a file transcoded for it).
func (e *Engine) finding(d diag, r Rule, patch *udiff.File) specialist.Finding {
	tool, code, _ := strings.Cut(d.rule, ":")
	headline, rest := split(d.message)
	var body []string
	if rest != "" {
		body = append(body, rest)
	}
	if d.help != "" {
		body = append(body, d.help)
	}
	what := code
	if d.name != "" && d.name != code {
		what += " " + d.name
	}
	src := fmt.Sprintf("Found by %s %s (rule %s)", tool, e.found[toolNamed(tool)].Version, what)
	if d.url != "" {
		src += "; see " + d.url
	}
	body = append(body, src+".")
	f := specialist.Finding{
		Rule:     d.rule,
		Category: r.Category,
		Severity: r.Severity,
		Path:     d.path,
		Line:     d.line,
		EndLine:  max(d.endLine, d.line),
		Headline: headline,
		Engine:   specialist.EngineBuiltin,
	}
	if len(d.fix) > 0 && patch != nil {
		if p, err := patch.Unified(d.path, d.fix); err == nil && p != "" {
			f.SuggestedPatch = p
			if d.fixMessage != "" {
				body = append(body, "Suggested fix: "+strings.TrimSuffix(d.fixMessage, ".")+".")
			}
		}
	}
	f.Body = strings.Join(body, "\n\n")
	return f
}

// split cuts an analyzer's message into a headline, its first line or
// sentence, and the rest.
func split(message string) (headline, rest string) {
	headline, rest, _ = strings.Cut(strings.TrimSpace(message), "\n")
	if m := sentenceEnd.FindStringIndex(headline); m != nil {
		rest = strings.TrimSpace(headline[m[0]+3:] + "\n" + rest)
		headline = headline[:m[0]+2]
	}
	return headline, strings.TrimSpace(rest)
}

// sentenceEnd is the end of a sentence that another follows: a full stop
// after a word, not an ellipsis, then a capital.
var sentenceEnd = regexp.MustCompile(`[^.\s]\. [A-Z]`)

func toolNamed(name string) *Tool {
	for _, t := range Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// instruction is the text a rule's keep decides by: the report's lines,
// and for a Dockerfile the rest of the instruction (its continued lines).
// A report longer than maxInstructionLines is given by its first lines
// and its last.
func instruction(x *lineIndex, d diag) string {
	end := max(d.endLine, d.line)
	var parts []string
	start := d.line
	if strings.HasPrefix(d.rule, "ruff:") && start > 1 {
		// The call a Python expression is an argument of often opens on
		// the line before: cur.execute(\n "…" % x).
		start--
	}
	for n := start; n <= end+maxInstructionLines; n++ {
		if n-start == maxInstructionLines && n < end {
			n = end
		}
		t := x.line(n)
		parts = append(parts, t)
		if n >= end && !(strings.HasPrefix(d.rule, "hadolint:") && strings.HasSuffix(strings.TrimSpace(t), "\\")) {
			break
		}
	}
	return strings.Join(parts, "\n")
}

// instructionEnd is the last line of the Dockerfile instruction that
// starts on line start: the line after each one that ends with a
// backslash, at most maxInstructionLines on.
func instructionEnd(x *lineIndex, start, end int) int {
	for n := start; n < start+maxInstructionLines && strings.HasSuffix(strings.TrimSpace(x.line(n)), "\\"); n++ {
		end = max(end, n+1)
	}
	return end
}

// oxlintExtras are the oxlint rules a repository turned on that are off
// by default: oxlint runs only the rules asked for, so they are part of
// what is asked.
func oxlintExtras(rs specialist.Rules) []string {
	var out []string
	for _, id := range rs.Enable {
		if code, ok := strings.CutPrefix(id, "oxlint:"); ok {
			if r, known := lookup(id); known && !r.On && refused(id) == "" {
				out = append(out, code)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// run copies the change's files of each analyzer's languages out of git,
// runs each analyzer once on them (in parallel), and, where a report falls
// on a changed line of a file that existed at base, runs it on the base's
// copies too, for the differential step.
func (e *Engine) run(ctx context.Context, c *change.Change, extra []string) (*outcome, error) {
	o := &outcome{head: map[string][]byte{}, lines: map[string]*lineIndex{}, patch: map[string]*udiff.File{}, twins: map[string]int{}, added: map[string][]suppression{}}
	byTool := map[*Tool][]*change.File{}
	for _, f := range c.Files {
		if f.Status == change.StatusDeleted || f.NewPath == "" {
			continue
		}
		p := f.NewPath
		var content []byte
		var readErr error
		read := func() []byte {
			if content == nil && readErr == nil {
				content, readErr = c.ReadFile(ctx, p)
			}
			return content
		}
		t := toolOf(lang.Detect(p, read))
		if t == nil {
			continue
		}
		fr := fileRun{path: p, tool: t}
		switch b := read(); {
		case unsafeName(p) != "":
			fr.why = fmt.Sprintf("%s was not run on it: %s", t.Name, unsafeName(p))
		case readErr != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			fr.why = fmt.Sprintf("it could not be read from git: %v", readErr)
		case len(b) > maxFile:
			fr.why = fmt.Sprintf("it is larger than %d MiB", maxFile>>20)
		case bytes.IndexByte(b, 0) >= 0:
			fr.why = "it holds NUL bytes"
		case t == Shellcheck && zsh(p):
			fr.why = "shellcheck does not check zsh scripts"
		case !e.found[t].Usable():
			fr.why = e.found[t].Why()
		default:
			u, transcoded, why := asUTF8(t, b)
			if why != "" {
				fr.why = why
				break
			}
			if !transcoded {
				// The analyzer's fixes of a transcoded copy are not the
				// file's bytes: no patch of it.
				o.patch[p] = udiff.NewFile(u)
			}
			o.head[p], o.lines[p] = u, indexLines(u)
			o.added[p] = addedSuppressions(ctx, c, f, t, u)
			byTool[t] = append(byTool[t], f)
		}
		o.files = append(o.files, fr)
	}
	if len(byTool) == 0 {
		return o, nil
	}
	work, err := os.MkdirTemp("", "quorum-analyzers-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	type toolRun struct {
		tool   *Tool
		files  []*change.File
		rep    report
		failed map[string]string
		err    error
		took   time.Duration
	}
	var runs []*toolRun
	for _, t := range Tools {
		if len(byTool[t]) > 0 {
			runs = append(runs, &toolRun{tool: t, files: byTool[t]})
		}
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() {
			contents := map[string][]byte{}
			for _, f := range r.files {
				contents[f.NewPath] = neutralised(o.head[f.NewPath], o.added[f.NewPath])
			}
			start := time.Now()
			r.rep, r.failed, r.err = e.analyseIsolated(ctx, r.tool, filepath.Join(work, r.tool.Name, "head"), contents, extra)
			r.took = time.Since(start)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	failed := map[string]string{}
	for _, r := range runs {
		maps.Copy(failed, r.failed)
		for _, u := range r.rep.unparsed {
			failed[u.path] = u.why
		}
	}
	for i, f := range o.files {
		if f.why == "" && failed[f.path] != "" {
			o.files[i].why = failed[f.path]
		}
	}

	// The differential step: the base's reports of the files whose head
	// reports fall on changed lines.
	files := map[string]*change.File{}
	for _, f := range c.Files {
		files[f.Path()] = f
	}
	type baseRun struct {
		run     *toolRun
		base    map[string][]byte
		newPath map[string]string
		rep     report
	}
	var bases []*baseRun
	added := map[string][]int{}
	for _, r := range runs {
		br := &baseRun{run: r, base: map[string][]byte{}, newPath: map[string]string{}}
		for _, d := range r.rep.diags {
			if failed[d.path] != "" {
				continue
			}
			if r.tool == Hadolint {
				// hadolint names an instruction's first line; a change to
				// one of its continued lines (apt-get install -y made
				// apt-get install) is a change to it.
				d.endLine = instructionEnd(o.lines[d.path], d.line, max(d.endLine, d.line))
			}
			o.diags = append(o.diags, d)
			f := files[d.path]
			if f == nil || f.Status == change.StatusAdded || f.OldPath == "" || !changed(f, added, d) {
				continue
			}
			if _, done := br.newPath[f.OldPath]; done || unsafeName(f.OldPath) != "" {
				continue
			}
			b, err := c.ReadFileAt(ctx, c.BaseSHA, f.OldPath)
			if err != nil || len(b) > maxFile || bytes.IndexByte(b, 0) >= 0 {
				continue
			}
			b, _, why := asUTF8(r.tool, b)
			if why != "" {
				continue
			}
			br.base[f.OldPath], br.newPath[f.OldPath] = b, f.NewPath
		}
		if len(br.base) > 0 {
			bases = append(bases, br)
		}
	}
	// The base runs, in parallel as the head's were.
	for _, br := range bases {
		wg.Go(func() {
			start := time.Now()
			br.rep, _, _ = e.analyseIsolated(ctx, br.run.tool, filepath.Join(work, br.run.tool.Name, "base"), br.base, extra)
			br.run.took += time.Since(start)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// Without a file's base (the run failed on it) every report on a
	// changed line counts as new; that is what the head says.
	for _, br := range bases {
		base := map[string]*lineIndex{}
		for _, d := range br.rep.diags {
			if base[d.path] == nil {
				base[d.path] = indexLines(br.base[d.path])
			}
			if !worthSaying(d, base[d.path]) {
				continue
			}
			o.twins[twinKey(d.rule, br.newPath[d.path], base[d.path].line(d.line))]++
		}
	}
	if e.ran != nil {
		for _, r := range runs {
			e.ran(r.tool.Name, len(r.files), r.took, r.err)
		}
	}
	return o, nil
}

// extendedLines is the most lines of shell shellcheck is given with its
// data-flow analysis on (it spares variables that hold only numbers from
// SC2086, at a cost that grows faster than the script).
const extendedLines = 4000

// lines counts the lines of contents.
func lines(contents map[string][]byte) int {
	n := 0
	for _, b := range contents {
		n += bytes.Count(b, []byte{'\n'})
	}
	return n
}

// unsafeName says why a file name is not given to an analyzer, or "".
func unsafeName(p string) string {
	if !utf8.ValidString(p) {
		return "its name is not valid UTF-8"
	}
	if strings.ContainsFunc(p, unicode.IsControl) {
		return "its name holds a control character"
	}
	if path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
		return "its name leaves the repository"
	}
	if len(p) > maxName || slices.ContainsFunc(strings.Split(p, "/"), func(part string) bool { return len(part) > 255 }) {
		return "its name is too long to copy it"
	}
	return ""
}

// maxName is the longest path a file is copied to under the analyzers'
// directory: well under PATH_MAX (4096) with the directory in front.
const maxName = 1024

// analyse writes contents (by repository path) under dir and runs t on
// them.
func (e *Engine) analyse(ctx context.Context, t *Tool, dir string, contents map[string][]byte, extra []string) (report, error) {
	src := filepath.Join(dir, "src")
	var args []string
	paths := make([]string, 0, len(contents))
	for p := range contents {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		full := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return report{}, err
		}
		if err := os.WriteFile(full, contents[p], 0o600); err != nil {
			return report{}, err
		}
		// "./" keeps a name that starts with "-" a file name.
		args = append(args, "./"+p)
	}
	// The analyzer's own configuration, outside the copied tree: no file
	// of the repository is ever read as configuration.
	conf := filepath.Join(dir, "quorum-config")
	var env []string
	switch t {
	case Ruff:
		args = append([]string{"check", "--isolated", "--no-cache", "--exit-zero", "--output-format", "json",
			"--select", "S,F,B,PLE,ASYNC,PERF", "--"}, args...)
	case Oxlint:
		conf += ".json"
		if err := os.WriteFile(conf, []byte("{}\n"), 0o600); err != nil {
			return report{}, err
		}
		flags := []string{"-c", conf, "--disable-nested-config", "--no-ignore", "-f", "json", "-A", "all"}
		plugins := map[string]bool{}
		for id, r := range rules {
			if code, ok := strings.CutPrefix(id, "oxlint:"); ok && r.On {
				flags = append(flags, "-W", code)
				plugins[strings.Split(code, "/")[0]] = true
			}
		}
		for _, code := range extra {
			flags = append(flags, "-W", code)
			plugins[strings.Split(code, "/")[0]] = true
		}
		for p := range plugins {
			switch p {
			case "eslint", "typescript", "unicorn", "oxc":
			default:
				flags = append(flags, "--"+p+"-plugin")
			}
		}
		if ts := e.found[t].TypeAware; ts != "" {
			// The type-aware rules, by typescript-go's checker over the
			// copied files alone: no tsconfig.json, no package of the
			// repository (an import of one is of unknown type, and the
			// rules say nothing of it).
			flags = append(flags, "--type-aware")
			env = append(env, "OXLINT_TSGOLINT_PATH="+ts)
		}
		args = append(flags, args...)
	case Shellcheck:
		flags := []string{"--norc", "--format=json1"}
		if lines(contents) > extendedLines {
			// Its data-flow analysis takes shellcheck about a minute on
			// acme.sh's 8,700 lines and under ten seconds without it.
			flags = append(flags, "--extended-analysis=false")
		}
		args = append(append(flags, "--"), args...)
	case Hadolint:
		conf += ".yaml"
		if err := os.WriteFile(conf, []byte("{}\n"), 0o600); err != nil {
			return report{}, err
		}
		args = append([]string{"--config", conf, "--no-fail", "--no-color", "--format", "json"}, args...)
	}
	tctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	res, err := sandboxed(tctx, sandboxRun{exe: e.found[t].Path, args: args, dir: src, analyzersDir: e.dir, env: env})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return report{}, fmt.Errorf("%w within %s", errDidNotFinish, e.timeout)
		}
		return report{}, err
	}
	indexed := map[string]*lineIndex{}
	read := func(p string) *lineIndex {
		if indexed[p] == nil && contents[p] != nil {
			indexed[p] = indexLines(contents[p])
		}
		return indexed[p]
	}
	var rep report
	switch t {
	case Ruff:
		rep, err = parseRuff(res.stdout, src, read)
	case Oxlint:
		rep, err = parseOxlint(res.stdout, src, read)
	case Shellcheck:
		rep, err = parseShellcheck(res.stdout, src, read)
	case Hadolint:
		rep, err = parseHadolint(res.stdout, src)
	}
	if err != nil {
		// The output is not the report: say what the analyzer said.
		if why := firstLine(res.stderr); why != "" {
			return report{}, fmt.Errorf("exit status %d: %s", res.exit, why)
		}
		return report{}, err
	}
	return rep, nil
}
