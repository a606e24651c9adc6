package specialist

import (
	"strings"
	"unicode"
)

// SameProblem reports whether two findings are one problem found twice:
// the same file, overlapping lines (or both on the file as a whole), and the
// same rule or near-identical headlines. A model words a problem its own
// way ("compares a with itself" for staticcheck's SA4000), so a built-in
// and an LLM finding are also one problem when they have the same category
// and start on the same line or the next (a model may count one off).
// Synthesis merges such findings into one; the LLM engine drops its own
// repeat of a built-in engine's finding before that.
func SameProblem(a, b Finding) bool {
	if a.Path != b.Path {
		return false
	}
	if (a.Line == 0) != (b.Line == 0) {
		return false
	}
	if a.Engine != b.Engine && a.Category == b.Category && a.Line > 0 && max(a.Line-b.Line, b.Line-a.Line) <= 1 {
		return true
	}
	if a.Line > 0 && (max(a.EndLine, a.Line) < b.Line || max(b.EndLine, b.Line) < a.Line) {
		return false
	}
	return a.Rule == b.Rule || nearlySame(a.Headline, b.Headline)
}

// nearlySame compares headlines by their words, case and punctuation aside:
// equal, or sharing at least 80% of their distinct words (Jaccard).
func nearlySame(a, b string) bool {
	wa, wb := words(a), words(b)
	if len(wa) == 0 || len(wb) == 0 {
		return false
	}
	common := 0
	for w := range wa {
		if wb[w] {
			common++
		}
	}
	union := len(wa) + len(wb) - common
	return common*5 >= union*4
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out[w] = true
	}
	return out
}
