package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// terminalSafe returns text from a repository (a path, a headline, a line
// of code) as a terminal would show it literally: control characters that
// could move the cursor, clear the screen, set the clipboard (OSC 52) or
// reorder what is shown (bidirectional overrides) become Go escapes (\x1b,
// \r, \u009b, \u202e), and so does each byte of invalid UTF-8 (\xff). The
// characters in keep (tab, newline) are left as they are: they are the
// text's layout where it has one. Other UTF-8 is kept.
func terminalSafe(s, keep string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || unsafeRune(r, keep) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafeRune(r, keep):
			b.WriteString(s[i : i+size])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// oneLine is terminalSafe for a field printed on one line: a tab or
// newline in it is escaped too.
func oneLine(s string) string { return terminalSafe(s, "") }

// unsafeRune reports whether r, unless in keep, is escaped: C0 and C1
// controls, DEL, and the bidirectional marks, embeddings, overrides and
// isolates.
func unsafeRune(r rune, keep string) bool {
	switch {
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return !strings.ContainsRune(keep, r)
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
