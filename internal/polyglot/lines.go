package polyglot

import (
	"bytes"
	"unicode/utf8"
)

// maxInstructionLines bounds the text a rule's keep decides by: a report
// may span a whole file (a string of 300,000 lines), and the work done per
// report must not grow with it.
const maxInstructionLines = 200

// lineIndex is a file's bytes with where each of its lines starts, made
// once per file so that every report's lines and columns are found
// without reading the file from its start.
type lineIndex struct {
	b      []byte
	starts []int // offset of each line; starts[0] is line 1's, and after a final newline an empty line starts at the end
	ascii  bool  // a column is then a byte
}

// indexLines indexes b's lines.
func indexLines(b []byte) *lineIndex {
	x := &lineIndex{b: b, starts: []int{0}, ascii: true}
	for i, c := range b {
		if c == '\n' {
			x.starts = append(x.starts, i+1)
		}
		if c >= utf8.RuneSelf {
			x.ascii = false
		}
	}
	return x
}

// line is line n (1-based) without its newline, or "" past the end.
func (x *lineIndex) line(n int) string {
	if x == nil || n < 1 || n > len(x.starts) {
		return ""
	}
	l := x.b[x.starts[n-1]:]
	if i := bytes.IndexByte(l, '\n'); i >= 0 {
		l = l[:i]
	}
	return string(l)
}

// offset turns a 1-based line and a 1-based column counted in characters
// (runes) into a byte offset; false when it is outside the file. The
// column just past a line's last character is its newline's offset.
func (x *lineIndex) offset(line, col int) (int, bool) {
	if x == nil || line < 1 || col < 1 || line > len(x.starts) {
		return 0, false
	}
	start := x.starts[line-1]
	end := len(x.b)
	if i := bytes.IndexByte(x.b[start:], '\n'); i >= 0 {
		end = start + i
	}
	if x.ascii {
		if start+col-1 > end {
			return 0, false
		}
		return start + col - 1, true
	}
	off := start
	for c := 1; c < col; c++ {
		if off >= end {
			return 0, false
		}
		_, size := utf8.DecodeRune(x.b[off:end])
		off += size
	}
	return off, true
}
