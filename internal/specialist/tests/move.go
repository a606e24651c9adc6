package tests

import (
	"regexp"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
)

// Moved and mechanical lines: a line the change adds that it also removes
// somewhere (in any file: code moved within a file, to another file or to
// another package) is not new behavior, nor is a line that only renames
// or re-argues a call it replaces (a call site updated for a changed
// signature).

// reQualifier matches the qualifier of a selector, `pkg.` or `recv.`: a
// function moved to another package loses or gains it.
var reQualifier = regexp.MustCompile(`\b[A-Za-z_]\w*\.`)

// looseLine is a normalized line without qualifiers, the form in which a
// line moved across packages still matches itself.
func looseLine(s string) string {
	return reQualifier.ReplaceAllString(normLine(s), "")
}

var (
	reIdent = regexp.MustCompile(`[A-Za-z_]\w*`)
	// reArgs matches an innermost bracketed argument list.
	reArgs = regexp.MustCompile(`\([^()]*\)`)
)

// keywords are the words of the languages whose role in a line's shape
// is not a name's: they stay in its skeleton.
var keywords = map[string]bool{
	"if": true, "else": true, "for": true, "range": true, "return": true, "func": true, "go": true, "defer": true,
	"switch": true, "case": true, "default": true, "select": true, "var": true, "const": true, "type": true,
	"struct": true, "interface": true, "map": true, "chan": true, "break": true, "continue": true, "goto": true,
	"fallthrough": true, "while": true, "def": true, "class": true, "new": true, "throw": true, "try": true,
	"catch": true, "await": true, "async": true, "yield": true, "let": true, "fn": true, "match": true,
	"raise": true, "elif": true, "in": true, "not": true, "and": true, "or": true, "unless": true,
}

// skeleton is a masked line's shape: names become x, and what a call is
// given is dropped, so `a.Old(x, y)` and `a.New(x, y, ctx)` have the same
// skeleton.
func skeleton(masked string) string {
	s := reIdent.ReplaceAllStringFunc(masked, func(w string) string {
		if keywords[w] {
			return w
		}
		return "x"
	})
	for {
		t := reArgs.ReplaceAllString(s, "<>")
		if t == s {
			break
		}
		s = t
	}
	return strings.Join(strings.Fields(s), "")
}

// identSet is the set of names a line uses.
func identSet(masked string) map[string]bool {
	out := map[string]bool{}
	for _, w := range reIdent.FindAllString(masked, -1) {
		if !keywords[w] {
			out[w] = true
		}
	}
	return out
}

// movedIndex holds the change's removed lines, per ecosystem, in the
// forms that tell a moved or mechanically edited line.
type movedIndex struct {
	exact map[*ecosystem]map[string]bool
	loose map[*ecosystem]map[string]bool
}

func (r *review) indexRemoved() {
	r.moved = movedIndex{exact: map[*ecosystem]map[string]bool{}, loose: map[*ecosystem]map[string]bool{}}
	for _, x := range r.files {
		for _, l := range x.removedLines() {
			raw, _ := x.line(l)
			if t := normLine(raw); t != "" {
				setAdd(r.moved.exact, x.eco, t)
				setAdd(r.moved.loose, x.eco, looseLine(raw))
			}
		}
	}
}

// removedLines are a file's deleted lines: those of its hunks, or all of
// a deleted file's lines at base when the diff does not carry them.
func (x *file) removedLines() []change.Line {
	var out []change.Line
	for _, h := range x.f.Hunks {
		for _, l := range h.Lines {
			if l.Kind == change.KindDeleted {
				out = append(out, l)
			}
		}
	}
	if len(out) == 0 && x.f.Status == change.StatusDeleted {
		for i, t := range x.base {
			out = append(out, change.Line{Kind: change.KindDeleted, Text: t, OldNumber: i + 1})
		}
	}
	return out
}

// isMoved reports whether an added line comes back from a line the
// change removes: the same text anywhere in the change, perhaps with its
// qualifiers changed.
func (r *review) isMoved(x *file, raw string) bool {
	t := normLine(raw)
	return r.moved.exact[x.eco][t] || r.moved.loose[x.eco][looseLine(raw)]
}

// mechanical returns, for a hunk, which of its added lines (by index)
// only edit a line the hunk removes: the same shape, a name or the
// arguments of a call changed, and at least one name kept.
func (x *file) mechanical(h change.Hunk) map[int]bool {
	type removed struct {
		skel  string
		names map[string]bool
	}
	var rem []removed
	for _, l := range h.Lines {
		if l.Kind == change.KindDeleted {
			_, masked := x.line(l)
			rem = append(rem, removed{skeleton(masked), identSet(masked)})
		}
	}
	out := map[int]bool{}
	if len(rem) == 0 {
		return out
	}
	for i, l := range h.Lines {
		if l.Kind != change.KindAdded {
			continue
		}
		_, masked := x.line(l)
		skel, names := skeleton(masked), identSet(masked)
		for _, d := range rem {
			if d.skel != skel {
				continue
			}
			shared := len(names) == 0
			for n := range names {
				if d.names[n] {
					shared = true
					break
				}
			}
			if shared {
				out[i] = true
				break
			}
		}
	}
	return out
}
