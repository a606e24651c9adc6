package tests

import (
	"regexp"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
)

// A JavaScript expectation, `expect(subject).matcher(…)`, read from one
// line: what it checks and how. An expectation the change deletes is not
// removed while the same subject is still checked, on a line the hunk
// adds or keeps, by the same matcher or a stricter one:
// `expect(results).toHaveLength(1)` replaced by
// `expect(results).toEqual([{ id }])` checks more, not less.

// expectation is one expect(…) of a line.
type expectation struct {
	subject string // the expression expected, white space removed
	matcher string
	not     bool
}

// reExpectCall finds the start of an expectation.
var reExpectCall = regexp.MustCompile(`\bexpect\s*\(`)

// reMatcher reads the modifiers and the matcher after the subject.
var reMatcher = regexp.MustCompile(`^\s*((?:\.\s*(?:not|resolves|rejects)\s*)*)\.\s*(to\w*)\s*\(`)

// deepMatchers compare the whole value: every part of it, its length and
// its members included.
var deepMatchers = map[string]bool{
	"toEqual": true, "toStrictEqual": true, "toBe": true,
	"toMatchSnapshot": true, "toMatchInlineSnapshot": true,
}

// parseExpectation reads the expectation on a line of code: its subject
// from the original line, the brackets matched on the masked one (a
// string may hold a bracket).
func parseExpectation(raw, masked string) (expectation, bool) {
	loc := reExpectCall.FindStringIndex(masked)
	if loc == nil || len(raw) != len(masked) {
		return expectation{}, false
	}
	depth, end := 1, -1
	for i := loc[1]; i < len(masked) && end < 0; i++ {
		switch masked[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				end = i
			}
		}
	}
	if end < 0 {
		return expectation{}, false
	}
	m := reMatcher.FindStringSubmatch(masked[end+1:])
	if m == nil {
		return expectation{}, false
	}
	subject := strings.Join(strings.Fields(raw[loc[1]:end]), "")
	if subject == "" {
		return expectation{}, false
	}
	return expectation{subject: subject, matcher: m[2], not: strings.Contains(m[1], "not")}, true
}

// covers reports whether e checks at least what d checked: the same
// subject with the same matcher (its argument changed), or the subject or
// a value it is part of (results for results[0].id, results.length)
// compared whole.
func (e expectation) covers(d expectation) bool {
	if e.subject == d.subject && e.matcher == d.matcher && e.not == d.not {
		return true
	}
	if e.not || !deepMatchers[e.matcher] {
		return false
	}
	return d.subject == e.subject || strings.HasPrefix(d.subject, e.subject+".") || strings.HasPrefix(d.subject, e.subject+"[")
}

// keptExpectations returns, for a hunk of a file's test code, the deleted
// lines (by index) whose expectation the hunk's added or kept lines still
// make, and the added lines (by index) that make one in their stead: the
// first stands for no removal, the second for no addition.
func (x *file) keptExpectations(h change.Hunk) (kept, replacing map[int]bool) {
	kept, replacing = map[int]bool{}, map[int]bool{}
	if x.eco.name != "javascript" {
		return kept, replacing
	}
	type line struct {
		i int
		e expectation
	}
	var deleted, head []line
	for i, l := range h.Lines {
		if !x.inTest(l) {
			continue
		}
		raw, masked := x.line(l)
		e, ok := parseExpectation(raw, masked)
		if !ok {
			continue
		}
		if l.Kind == change.KindDeleted {
			deleted = append(deleted, line{i, e})
		} else {
			head = append(head, line{i, e})
		}
	}
	for _, d := range deleted {
		for _, a := range head {
			if a.e.covers(d.e) {
				kept[d.i] = true
				if h.Lines[a.i].Kind == change.KindAdded {
					replacing[a.i] = true
				}
				break
			}
		}
	}
	return kept, replacing
}
