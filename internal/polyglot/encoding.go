package polyglot

import (
	"bytes"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/ianaindex"
)

// pythonCoding is PEP 263's encoding declaration, on one of a file's first
// two lines: "# -*- coding: latin-1 -*-", "# vim: set fileencoding=cp1252".
var pythonCoding = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`)

// pythonCodecs are the names Python gives the single-byte encodings old
// source declares most, which IANA's registry spells otherwise.
var pythonCodecs = map[string]encoding.Encoding{
	"latin-1": charmap.ISO8859_1, "latin1": charmap.ISO8859_1, "iso-8859-1": charmap.ISO8859_1, "iso8859-1": charmap.ISO8859_1,
	"l1": charmap.ISO8859_1, "iso-latin-1": charmap.ISO8859_1, "8859": charmap.ISO8859_1, "cp819": charmap.ISO8859_1,
	"latin-9": charmap.ISO8859_15, "latin9": charmap.ISO8859_15, "iso-8859-15": charmap.ISO8859_15, "iso8859-15": charmap.ISO8859_15,
	"latin-2": charmap.ISO8859_2, "latin2": charmap.ISO8859_2, "iso-8859-2": charmap.ISO8859_2, "iso8859-2": charmap.ISO8859_2,
	"cp1250": charmap.Windows1250, "windows-1250": charmap.Windows1250,
	"cp1251": charmap.Windows1251, "windows-1251": charmap.Windows1251,
	"cp1252": charmap.Windows1252, "windows-1252": charmap.Windows1252,
	"koi8-r": charmap.KOI8R, "koi8-u": charmap.KOI8U,
}

// asUTF8 returns a file's contents as its analyzer reads them, UTF-8. A
// file that is not valid UTF-8 is transcoded when its language declares
// its encoding (Python's PEP 263) and quorum knows it, line for line, so
// that the analyzer's line numbers are the file's; transcoded says so (the
// analyzer's columns and fixes are then not the file's bytes). Otherwise
// why says the file cannot be analysed. ShellCheck and hadolint read any
// bytes, and take the file as it is.
func asUTF8(t *Tool, b []byte) (out []byte, transcoded bool, why string) {
	if utf8.Valid(b) || t == Shellcheck || t == Hadolint {
		return b, false, ""
	}
	if t != Ruff {
		return nil, false, "it is not valid UTF-8, the only encoding " + t.Name + " reads"
	}
	name := ""
	for i, l := range bytes.SplitN(b, []byte("\n"), 3) {
		if i == 2 {
			break
		}
		if m := pythonCoding.FindSubmatch(l); m != nil {
			name = strings.ToLower(strings.ReplaceAll(string(m[1]), "_", "-"))
			break
		}
	}
	if name == "" {
		return nil, false, "it is not valid UTF-8 and declares no other encoding (PEP 263)"
	}
	enc := pythonCodecs[name]
	if enc == nil {
		enc, _ = ianaindex.IANA.Encoding(name)
	}
	if enc == nil {
		return nil, false, "it is not valid UTF-8, and quorum does not know the encoding it declares (" + name + ")"
	}
	u, err := enc.NewDecoder().Bytes(b)
	if err != nil || !utf8.Valid(u) || bytes.Count(u, []byte("\n")) != bytes.Count(b, []byte("\n")) || bytes.Count(u, []byte("\r")) != bytes.Count(b, []byte("\r")) {
		return nil, false, "it is not valid " + name + ", the encoding it declares"
	}
	return u, true, ""
}
