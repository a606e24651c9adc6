package polyglot

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/quorum-review/quorum/internal/udiff"
)

// diag is one report of an analyzer, on a file of the change.
type diag struct {
	// rule is the rule's id, "ruff:S608".
	rule string
	// name is the rule's name where the analyzer gives one
	// ("hardcoded-sql-expression").
	name          string
	path          string
	line, endLine int
	message       string
	help          string
	url           string
	// fix are the edits of a fix the analyzer calls safe, as byte
	// offsets into the file; fixMessage says what it does.
	fix        []udiff.Edit
	fixMessage string
	// subject is the text a report of one line points at, where the
	// analyzer's message does not name it (shellcheck's "Double quote to
	// prevent globbing" of $dest, oxlint's floating promise of a call):
	// two reports of one message are one mistake only when they point at
	// the same text.
	subject string
}

// unparsed is a file an analyzer could not parse: it is not analysed, and
// its reports are dropped.
type unparsed struct {
	path, why string
}

// report is an analyzer's output on some files.
type report struct {
	diags    []diag
	unparsed []unparsed
}

// source gives a file's lines by its path relative to the run's
// directory, for turning columns into offsets.
type source func(path string) *lineIndex

// rel makes an analyzer's file name relative to the run's directory, with
// forward slashes; false for a file outside it.
func rel(dir, name string) (string, bool) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	r, err := filepath.Rel(dir, name)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// parseRuff reads `ruff check --output-format json`.
func parseRuff(out []byte, dir string, src source) (report, error) {
	var items []struct {
		Code     *string `json:"code"`
		Name     string  `json:"name"`
		Message  string  `json:"message"`
		Filename string  `json:"filename"`
		URL      *string `json:"url"`
		Location struct {
			Row, Column int
		} `json:"location"`
		EndLocation struct {
			Row, Column int
		} `json:"end_location"`
		Fix *struct {
			Applicability string `json:"applicability"`
			Message       *string
			Edits         []struct {
				Content     string
				Location    struct{ Row, Column int }
				EndLocation struct{ Row, Column int } `json:"end_location"`
			}
		} `json:"fix"`
	}
	if err := json.Unmarshal(out, &items); err != nil {
		return report{}, fmt.Errorf("ruff's report is not JSON: %w", err)
	}
	var r report
	for _, it := range items {
		p, ok := rel(dir, it.Filename)
		if !ok {
			continue
		}
		if it.Code == nil || !reRuffCode.MatchString(*it.Code) {
			// A syntax error: ruff checks what it can parse, which is
			// not the file.
			r.unparsed = append(r.unparsed, unparsed{p, fmt.Sprintf("ruff could not parse it (line %d: %s)", it.Location.Row, it.Message)})
			continue
		}
		d := diag{rule: "ruff:" + *it.Code, name: it.Name, path: p, line: it.Location.Row, endLine: max(it.EndLocation.Row, it.Location.Row), message: it.Message}
		if it.URL != nil {
			d.url = *it.URL
		}
		if it.Fix != nil && it.Fix.Applicability == "safe" {
			x := src(p)
			ok := x != nil
			for _, e := range it.Fix.Edits {
				s, ok1 := x.offset(e.Location.Row, e.Location.Column)
				t, ok2 := x.offset(e.EndLocation.Row, e.EndLocation.Column)
				if !ok1 || !ok2 || t < s {
					ok = false
					break
				}
				d.fix = append(d.fix, udiff.Edit{Start: s, End: t, Text: e.Content})
			}
			if !ok {
				d.fix = nil
			} else if it.Fix.Message != nil {
				d.fixMessage = *it.Fix.Message
			}
		}
		r.diags = append(r.diags, d)
	}
	return r, nil
}

// parseOxlint reads `oxlint -f json`.
func parseOxlint(out []byte, dir string, src source) (report, error) {
	var doc struct {
		Diagnostics []struct {
			Message  string
			Code     string
			URL      string
			Help     string
			Filename string
			Labels   []struct {
				Span struct{ Offset, Length, Line, Column int }
			}
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return report{}, fmt.Errorf("oxlint's report is not JSON: %w", err)
	}
	var r report
	for _, it := range doc.Diagnostics {
		if it.Filename == "" {
			// A file oxlint could not read is named in the message alone
			// ("Failed to open file /…/a.js with error \"…\""). Any other
			// report of no file cannot be put on one: the run failed.
			m := reOxlintOpen.FindStringSubmatch(it.Message)
			p, ok := "", false
			if m != nil {
				p, ok = rel(dir, m[1])
			}
			if !ok || p == "." {
				return report{}, fmt.Errorf("oxlint reported a failure of no file: %s", it.Message)
			}
			r.unparsed = append(r.unparsed, unparsed{p, "oxlint could not read it: " + m[2]})
			continue
		}
		p, ok := rel(dir, it.Filename)
		if !ok {
			continue
		}
		// "eslint(no-debugger)"; a parse error has no code.
		plugin, name, ok := strings.Cut(strings.TrimSuffix(it.Code, ")"), "(")
		if !ok || len(it.Labels) == 0 {
			if it.Code == "" {
				line := 0
				if len(it.Labels) > 0 {
					line = it.Labels[0].Span.Line
				}
				r.unparsed = append(r.unparsed, unparsed{p, fmt.Sprintf("oxlint could not parse it (line %d: %s)", line, it.Message)})
			}
			continue
		}
		plugin = strings.TrimPrefix(plugin, "eslint-plugin-")
		line := it.Labels[0].Span.Line
		end := line
		for _, l := range it.Labels[1:] {
			end = max(end, l.Span.Line)
		}
		r.diags = append(r.diags, diag{rule: "oxlint:" + plugin + "/" + name, path: p, line: line, endLine: end, message: it.Message, help: it.Help, url: it.URL,
			subject: spanText(src(p), line, it.Labels[0].Span.Offset, it.Labels[0].Span.Length)})
	}
	return r, nil
}

// maxSubject bounds the text a report's subject keeps: a span may be a
// whole function.
const maxSubject = 400

// spanText is the text of oxlint's span (byte offset and length) that
// starts on line: what a report points at, where its message says no more
// than "Promises must be awaited". Two floating promises of one function
// are two calls, two mistakes. "" where the span is not on line of x.
func spanText(x *lineIndex, line, offset, length int) string {
	if x == nil || line < 1 || line > len(x.starts) || offset < x.starts[line-1] || length <= 0 || offset+length > len(x.b) {
		return ""
	}
	if line < len(x.starts) && offset >= x.starts[line] {
		return ""
	}
	return string(x.b[offset : offset+min(length, maxSubject)])
}

// reOxlintOpen is oxlint's report of a file it could not read.
var reOxlintOpen = regexp.MustCompile(`^Failed to open file (.+) with error "(.*)"$`)

// parseShellcheck reads `shellcheck -f json1`.
func parseShellcheck(out []byte, dir string, src source) (report, error) {
	var doc struct {
		Comments []shellcheckComment
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return report{}, fmt.Errorf("shellcheck's report is not JSON: %w", err)
	}
	var r report
	seen := map[string]bool{}
	for _, it := range doc.Comments {
		p, ok := rel(dir, it.File)
		if !ok {
			continue
		}
		if it.Code == 1071 {
			// "ShellCheck only supports sh/bash/dash/ksh scripts."
			r.unparsed = append(r.unparsed, unparsed{p, "shellcheck checks only sh, bash, dash and ksh scripts"})
			continue
		}
		if it.Code < 2000 && it.Level == "error" {
			if !seen[p] {
				seen[p] = true
				r.unparsed = append(r.unparsed, unparsed{p, fmt.Sprintf("shellcheck could not parse it (line %d: %s)", it.Line, it.Message)})
			}
			continue
		}
		d := diag{rule: fmt.Sprintf("shellcheck:SC%04d", it.Code), path: p, line: it.Line, endLine: max(it.EndLine, it.Line), message: it.Message,
			url: fmt.Sprintf("https://www.shellcheck.net/wiki/SC%04d", it.Code)}
		if it.Fix != nil && len(it.Fix.Replacements) > 0 {
			d.fix = shellcheckEdits(src(p), it.Fix.Replacements)
		}
		if x := src(p); x != nil && it.EndLine == it.Line {
			from, ok1 := x.offset(it.Line, it.Column)
			to, ok2 := x.offset(it.Line, it.EndColumn)
			if ok1 && ok2 && from < to {
				d.subject = string(x.b[from:to])
			}
		}
		r.diags = append(r.diags, d)
	}
	// A file that did not parse has no other report worth posting.
	if len(r.unparsed) > 0 {
		bad := map[string]bool{}
		for _, u := range r.unparsed {
			bad[u.path] = true
		}
		kept := r.diags[:0]
		for _, d := range r.diags {
			if !bad[d.path] {
				kept = append(kept, d)
			}
		}
		r.diags = kept
	}
	return r, nil
}

type shellcheckComment struct {
	File              string
	Line, EndLine     int
	Column, EndColumn int
	Level             string
	Code              int
	Message           string
	Fix               *struct {
		Replacements []shellcheckReplacement
	}
}

type shellcheckReplacement struct {
	Line, EndLine     int
	Column, EndColumn int
	Replacement       string
	Precedence        int
}

// shellcheckEdits turns shellcheck's replacements into edits; nil when one
// falls outside the file. json1 counts columns from 1, a tab as one.
func shellcheckEdits(x *lineIndex, rs []shellcheckReplacement) []udiff.Edit {
	if x == nil {
		return nil
	}
	var es []udiff.Edit
	for _, r := range rs {
		s, ok1 := x.offset(r.Line, r.Column)
		t, ok2 := x.offset(r.EndLine, r.EndColumn)
		if !ok1 || !ok2 || t < s {
			return nil
		}
		es = append(es, udiff.Edit{Start: s, End: t, Text: r.Replacement})
	}
	return es
}

// parseHadolint reads `hadolint -f json`; the shellcheck reports it makes
// of RUN instructions keep shellcheck's codes.
func parseHadolint(out []byte, dir string) (report, error) {
	var items []struct {
		Code    string
		File    string
		Line    int
		Level   string
		Message string
	}
	if err := json.Unmarshal(out, &items); err != nil {
		return report{}, fmt.Errorf("hadolint's report is not JSON: %w", err)
	}
	var r report
	for _, it := range items {
		p, ok := rel(dir, it.File)
		if !ok {
			continue
		}
		if it.Code == "DL1000" {
			r.unparsed = append(r.unparsed, unparsed{p, fmt.Sprintf("hadolint could not parse it (line %d: %s)", it.Line, it.Message)})
			continue
		}
		d := diag{rule: "hadolint:" + it.Code, path: p, line: it.Line, endLine: it.Line, message: it.Message}
		if strings.HasPrefix(it.Code, "DL") {
			d.url = "https://github.com/hadolint/hadolint/wiki/" + it.Code
		} else {
			d.url = "https://www.shellcheck.net/wiki/" + it.Code
		}
		r.diags = append(r.diags, d)
	}
	return r, nil
}
