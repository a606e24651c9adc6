package polyglot

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// A pull request cannot switch off its own review: the in-file
// suppressions it adds ("# noqa: S602", "// eslint-disable-next-line",
// "# shellcheck disable=SC2086", "# hadolint ignore=DL4006") are blanked in
// the copy an analyzer is given, so it reports what they would hide. The
// suppressions that stand at the base are the team's decisions: they stay
// in the copy, and the analyzer obeys them.

// suppression is an in-file directive that silences an analyzer's reports.
type suppression struct {
	// line is its 1-based line; text the directive as written.
	line int
	text string
	// codes are the rules it names; none means every rule.
	codes []string
	scope scope
	// blank are the byte ranges of the line that make it a directive,
	// overwritten with spaces in the analyzer's copy (which keeps its
	// lines and columns).
	blank [][2]int
	// start is the offset of its line in the file.
	start int
	// key tells it apart from the base's suppressions: the line, and for
	// a directive on a line of its own the line it stands before.
	key string
}

// scope is what a suppression covers.
type scope int

const (
	onLine     scope = iota // the line it is on
	below                   // what follows it: the next line, command or instruction, or the rest of the file
	everywhere              // the whole file
)

var (
	// ruff obeys "# noqa" after any "#", in any case, and the file's
	// "# ruff: noqa", "# flake8: noqa" and "# ruff: disable[…]".
	reNoqa     = regexp.MustCompile(`(?i)#\s*(noqa)\b`)
	reRuffFile = regexp.MustCompile(`(?i)#\s*(ruff|flake8)\s*:\s*(noqa|disable)?`)
	// oxlint obeys eslint's and its own disable comments, also where the
	// directive opens a line of a block comment.
	reJSDisable = regexp.MustCompile(`(?i)\b(eslint|oxlint)-disable(-next-line|-line)?\b`)
	// ShellCheck's directives stand on lines of their own; disable= is
	// the one that silences (shell= and source= are kept: without them
	// a script may not parse).
	reShellDirective = regexp.MustCompile(`(?i)^\s*#\s*(shellcheck)\s`)
	reShellDisable   = regexp.MustCompile(`(?i)\bdisable=(\S+)`)
	reHadolint       = regexp.MustCompile(`(?i)^\s*#\s*(hadolint)\s+(global\s+)?ignore=(\S+)`)
	reRuffCodes      = regexp.MustCompile(`\b[A-Z]+[0-9]+\b`)
)

// directives returns the suppressions of t on one line (its text l).
func directives(t *Tool, l string) []suppression {
	var out []suppression
	add := func(s suppression, from int) {
		s.text = strings.TrimSpace(l[from:])
		if end := strings.Index(s.text, "*/"); end >= 0 {
			s.text = s.text[:end+2]
		}
		out = append(out, s)
	}
	switch t {
	case Ruff:
		if m := reRuffFile.FindStringSubmatchIndex(l); m != nil {
			s := suppression{scope: everywhere, blank: [][2]int{{m[2], m[3]}}}
			if m[4] >= 0 {
				s.blank = append(s.blank, [2]int{m[4], m[5]})
				if strings.EqualFold(l[m[4]:m[5]], "disable") {
					s.scope = below
				}
			}
			s.codes = reRuffCodes.FindAllString(comment(l[m[1]:]), -1)
			add(s, m[0])
			return out
		}
		for _, m := range reNoqa.FindAllStringSubmatchIndex(l, -1) {
			s := suppression{scope: onLine, blank: [][2]int{{m[2], m[3]}}}
			if rest := l[m[1]:]; strings.HasPrefix(rest, ":") {
				s.codes = reRuffCodes.FindAllString(comment(rest), -1)
			}
			add(s, m[0])
		}
	case Oxlint:
		for _, m := range reJSDisable.FindAllStringSubmatchIndex(l, -1) {
			s := suppression{scope: below, blank: [][2]int{{m[2], m[3]}}}
			if m[4] >= 0 && strings.EqualFold(l[m[4]:m[5]], "-line") {
				s.scope = onLine
			}
			rest, _, _ := strings.Cut(l[m[1]:], "*/")
			rest, _, _ = strings.Cut(rest, "--")
			for _, c := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
				s.codes = append(s.codes, c)
			}
			add(s, m[0])
		}
	case Shellcheck:
		m := reShellDirective.FindStringSubmatchIndex(l)
		if m == nil {
			return nil
		}
		keys, _, _ := strings.Cut(l[m[1]:], "#")
		ds := reShellDisable.FindAllStringSubmatchIndex(keys, -1)
		if ds == nil {
			return nil
		}
		s := suppression{scope: below}
		for _, d := range ds {
			s.blank = append(s.blank, [2]int{m[1] + d[0], m[1] + d[1]})
			for _, c := range strings.Split(keys[d[2]:d[3]], ",") {
				if c != "" && c[0] >= '0' && c[0] <= '9' {
					c = "SC" + c
				}
				s.codes = append(s.codes, c)
			}
		}
		if strings.TrimSpace(reShellDisable.ReplaceAllString(keys, "")) == "" {
			// A directive without keys does not parse: make it a comment.
			s.blank = append(s.blank, [2]int{m[2], m[3]})
		}
		add(s, strings.Index(l, "#"))
	case Hadolint:
		m := reHadolint.FindStringSubmatchIndex(l)
		if m == nil {
			return nil
		}
		s := suppression{scope: below, blank: [][2]int{{m[2], m[3]}}, codes: strings.Split(comment(l[m[6]:m[7]]), ",")}
		if m[4] >= 0 {
			s.scope = everywhere
		}
		add(s, strings.Index(l, "#"))
	}
	return out
}

// comment is s up to a following comment.
func comment(s string) string {
	s, _, _ = strings.Cut(s, "#")
	return s
}

// fileDirectives returns the suppressions of t in b, each with its key.
func fileDirectives(t *Tool, b []byte) []suppression {
	var out []suppression
	ls := strings.Split(string(b), "\n")
	start := 0
	for i, l := range ls {
		for _, s := range directives(t, l) {
			s.line, s.start = i+1, start
			s.key = strings.TrimSpace(l)
			// ShellCheck reads its directives on comment lines of their
			// own only.
			if (t == Shellcheck || alone(l, s.blank[0][0])) && i+1 < len(ls) {
				s.key += "\n" + strings.TrimSpace(ls[i+1])
			}
			out = append(out, s)
		}
		start += len(l) + 1
	}
	return out
}

// nextOnly reports whether s stands on a line of its own and covers what
// follows it alone (the next line, command or instruction), not a block
// or the rest of the file: pointed at a line the change rewrote, it is the
// change's suppression, though its own line is the base's.
func nextOnly(t *Tool, s suppression) bool {
	if s.scope != below || !strings.Contains(s.key, "\n") {
		return false
	}
	switch t {
	case Oxlint:
		return strings.Contains(strings.ToLower(s.text), "next-line")
	case Ruff:
		return false // "# ruff: disable[…]" holds until its enable
	}
	return true
}

// alone reports whether the directive at offset i of line l stands on a
// line of its own, before what it covers.
func alone(l string, i int) bool {
	return strings.Trim(l[:i], " \t#/*") == ""
}

// addedSuppressions returns the suppressions of t the change adds to f
// (head is its content at head): those on lines the change added or
// rewrote that the base does not have. A directive on a line of its own
// counts with the line it stands before, so one copied above other code
// is added, and one moved with its code is not. Where the base had fewer
// of the same than the changed lines hold, the first are the moved ones.
func addedSuppressions(ctx context.Context, c *change.Change, f *change.File, t *Tool, head []byte) []suppression {
	var changed []suppression
	// kept counts, by key, the base's suppressions the changed lines may
	// still claim: the base's, less those on unchanged lines.
	kept := map[string]int{}
	for _, s := range fileDirectives(t, head) {
		if f.Changed(s.line) || nextOnly(t, s) && f.Changed(s.line+1) {
			changed = append(changed, s)
		} else {
			kept[s.key]--
		}
	}
	if len(changed) == 0 {
		return nil
	}
	if f.Status != change.StatusAdded && f.OldPath != "" {
		if b, err := c.ReadFileAt(ctx, c.BaseSHA, f.OldPath); err == nil {
			// The base's bytes as the head's were read: transcoded
			// the same way (PEP 263), or not compared at all.
			if u, _, why := asUTF8(t, b); why == "" {
				b = u
			} else {
				b = nil
			}
			for _, s := range fileDirectives(t, b) {
				kept[s.key]++
			}
		}
	}
	var out []suppression
	for _, s := range changed {
		if kept[s.key] > 0 {
			kept[s.key]--
			continue
		}
		out = append(out, s)
	}
	return out
}

// neutralised is b with the added suppressions blanked: the copy an
// analyzer is given.
func neutralised(b []byte, ss []suppression) []byte {
	if len(ss) == 0 {
		return b
	}
	b = bytes.Clone(b)
	for _, s := range ss {
		for _, r := range s.blank {
			for i := s.start + r[0]; i < s.start+r[1]; i++ {
				b[i] = ' '
			}
		}
	}
	return b
}

// names reports whether s silences rule ("ruff:S602").
func (s suppression) names(rule string) bool {
	if len(s.codes) == 0 {
		return true
	}
	_, code, _ := strings.Cut(rule, ":")
	for _, c := range s.codes {
		// "no-eval" and "@typescript-eslint/no-explicit-any" name
		// oxlint's "eslint/no-eval" and "typescript/no-explicit-any".
		if strings.EqualFold(c, "all") || strings.EqualFold(lastPart(c), lastPart(code)) {
			return true
		}
	}
	return false
}

func lastPart(s string) string { return s[strings.LastIndex(s, "/")+1:] }

// hiding returns the added suppression that would have hidden d, if any.
func hiding(d diag, ss []suppression) (suppression, bool) {
	var best suppression
	found := false
	for _, s := range ss {
		if !s.names(d.rule) {
			continue
		}
		switch {
		case s.scope == onLine && s.line >= d.line && s.line <= max(d.endLine, d.line):
			return s, true
		case s.scope == below && s.line < d.line && (!found || best.scope != below || s.line > best.line):
			best, found = s, true
		case s.scope == everywhere && !found:
			best, found = s, true
		}
	}
	return best, found
}

// unfixed drops d's fix when it touches an added suppression: the
// analyzer saw the line blanked.
func unfixed(d diag, ss []suppression) diag {
	for _, s := range ss {
		for _, r := range s.blank {
			for _, e := range d.fix {
				if e.Start < s.start+r[1] && e.End > s.start+r[0] {
					d.fix, d.fixMessage = nil, ""
					return d
				}
			}
		}
	}
	return d
}

// tellAdded says in f's body which suppression the change added to hide
// it. The author meant to silence the report, so the analyzer's fix is
// not suggested: the question is whether the suppression is deserved.
func tellAdded(f *specialist.Finding, d diag, ss []suppression) {
	s, ok := hiding(d, ss)
	if !ok {
		return
	}
	f.SuggestedPatch = ""
	f.Body = strings.Replace(f.Body, "\n\nSuggested fix: ", "\n\nThe analyzer's fix: ", 1)
	f.Body += fmt.Sprintf("\n\nThe change adds `%s` (line %d) to silence this report. "+
		"Suppressions a pull request adds are not obeyed, so that it cannot switch off its own review: "+
		"confirm this one is deserved before merging (once merged it stands at the base, and is obeyed).", s.text, s.line)
}

// runs reports whether s names a rule that runs under rs (or every rule):
// one that names only rules quorum does not run hides nothing.
func (s suppression) runs(t *Tool, rs specialist.Rules) bool {
	if len(s.codes) == 0 {
		return true
	}
	for _, c := range s.codes {
		if strings.EqualFold(c, "all") {
			return true
		}
		if t != Oxlint {
			id := t.Name + ":" + strings.ToUpper(c)
			if r, ok := lookup(id); ok && on(rs, id, r) {
				return true
			}
			continue
		}
		for id, r := range rules {
			if strings.HasPrefix(id, "oxlint:") && lastPart(id) == lastPart(c) && on(rs, id, r) {
				return true
			}
		}
		for _, id := range rs.Enable {
			if r, ok := lookup(id); ok && strings.HasPrefix(id, "oxlint:") && lastPart(id) == lastPart(c) && on(rs, id, r) {
				return true
			}
		}
	}
	return false
}

// noteAdded tells the review which suppressions of rules that run the
// change added, and that they were not obeyed.
func noteAdded(ctx context.Context, files []fileRun, added map[string][]suppression, rs specialist.Rules) {
	var where []string
	for _, f := range files {
		for _, s := range added[f.path] {
			if !s.runs(f.tool, rs) {
				continue
			}
			where = append(where, fmt.Sprintf("%s:%d `%s`", f.path, s.line, s.text))
		}
	}
	if len(where) == 0 {
		return
	}
	more := ""
	if len(where) > 5 {
		more = fmt.Sprintf(" and %d more", len(where)-5)
		where = where[:5]
	}
	specialist.Note(ctx, "the suppressions this change adds were not obeyed (a pull request cannot switch off its own review): %s%s.",
		strings.Join(where, ", "), more)
}
