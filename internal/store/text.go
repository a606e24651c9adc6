package store

import (
	"strings"
	"unicode/utf8"
)

// CleanText makes s storable as text on both backends: invalid UTF-8 and
// NUL bytes (which PostgreSQL's text and jsonb refuse, SQLSTATE 22021 and
// 22P05) each become U+FFFD. Text that is already clean is returned as is,
// without copying.
//
// It is the database's one boundary for text: every string argument of a
// query (Querier and Tx, on both backends), job arguments and the error
// texts River records for failed attempts go through it, so no input can
// make a write fail on PostgreSQL that succeeds on SQLite, or jam River's
// completer with a job whose error it cannot store. Callers that must
// refuse such text (an API field, a login) check it before.
func CleanText(s string) string {
	if Clean(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// Clean reports whether s is valid UTF-8 without NUL bytes.
func Clean(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// cleanArgs returns args with every string made clean by CleanText; args
// are returned unchanged (not copied) when all are clean already.
func cleanArgs(args []any) []any {
	var out []any
	for i, a := range args {
		s, ok := a.(string)
		if !ok || Clean(s) {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = CleanText(s)
	}
	if out == nil {
		return args
	}
	return out
}
