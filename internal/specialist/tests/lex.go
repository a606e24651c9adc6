package tests

import "strings"

// syntax is how a language writes comments and strings, as far as masking
// them out needs.
type syntax int

const (
	syntaxC      syntax = iota // // and /* */; "…", '…', `…` (Go raw strings, JS templates)
	syntaxPython               // #; '…', "…", '''…''', """…"""
	syntaxRuby                 // #, =begin…=end; '…', "…"
	syntaxRust                 // // and /* */; "…"; ' is a char or a lifetime
)

// mask returns src's lines with the contents of comments and string
// literals replaced by spaces, so patterns match only code: a test that
// mentions "t.Skip" in a message or a comment is not a skip. Columns are
// kept, and the quotes of a string stay, so `it("name", …)` still looks
// like a call and the name can be read from the original line at the same
// columns.
func mask(src string, syn syntax) []string {
	lines := strings.Split(src, "\n")
	out := make([]string, len(lines))
	// State carried across lines: inside a block comment, or inside a
	// string that may span lines, closed by delim.
	inBlock := false
	delim := ""
	for i, line := range lines {
		b := []byte(line)
		j := 0
		if syn == syntaxRuby {
			if inBlock {
				if strings.HasPrefix(line, "=end") {
					inBlock = false
				}
				out[i] = strings.Repeat(" ", len(line))
				continue
			}
			if strings.HasPrefix(line, "=begin") {
				inBlock = true
				out[i] = strings.Repeat(" ", len(line))
				continue
			}
		}
		for j < len(b) {
			switch {
			case inBlock:
				if strings.HasPrefix(line[j:], "*/") {
					b[j], b[j+1] = ' ', ' '
					j += 2
					inBlock = false
					continue
				}
				b[j] = ' '
				j++
			case delim != "":
				if b[j] == '\\' && delim != "`" && j+1 < len(b) {
					b[j], b[j+1] = ' ', ' '
					j += 2
					continue
				}
				if strings.HasPrefix(line[j:], delim) {
					j += len(delim)
					delim = ""
					continue
				}
				b[j] = ' '
				j++
			default:
				c := b[j]
				rest := line[j:]
				switch {
				case (syn == syntaxC || syn == syntaxRust) && strings.HasPrefix(rest, "//"):
					blank(b, j, len(b))
					j = len(b)
				case (syn == syntaxC || syn == syntaxRust) && strings.HasPrefix(rest, "/*"):
					b[j], b[j+1] = ' ', ' '
					j += 2
					inBlock = true
				case (syn == syntaxPython || syn == syntaxRuby) && c == '#':
					blank(b, j, len(b))
					j = len(b)
				case syn == syntaxPython && (strings.HasPrefix(rest, `"""`) || strings.HasPrefix(rest, `'''`)):
					delim = rest[:3]
					j += 3
				case syn == syntaxC && strings.HasPrefix(rest, `"""`): // Java, Kotlin text blocks
					delim = `"""`
					j += 3
				case c == '"':
					delim = `"`
					j++
				case c == '`' && syn == syntaxC:
					delim = "`"
					j++
				case c == '\'' && syn == syntaxRust:
					// A char literal closes within a few bytes ('a', '\n',
					// '\u{1F600}'); otherwise it is a lifetime.
					if k := strings.IndexByte(line[j+1:], '\''); k >= 0 && k <= 10 && (k == 1 || line[j+1] == '\\') {
						blank(b, j+1, j+1+k)
						j += k + 2
					} else {
						j++
					}
				case c == '\'':
					delim = "'"
					j++
				default:
					j++
				}
			}
		}
		// Single-quoted and double-quoted strings end with the line in the
		// languages that do not continue them with a backslash; keep going
		// only for the delimiters that may span lines.
		if delim == `"` || delim == "'" {
			if syn != syntaxRust && !(syn == syntaxPython && strings.HasSuffix(line, `\`)) {
				delim = ""
			}
		}
		out[i] = string(b)
	}
	return out
}

func blank(b []byte, from, to int) {
	for k := from; k < to && k < len(b); k++ {
		b[k] = ' '
	}
}
