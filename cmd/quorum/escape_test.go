package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/review"
)

// Control characters, bidirectional overrides and invalid UTF-8 become
// visible escapes; tab and newline are kept only where asked; other UTF-8
// is kept as it is.
func TestTerminalSafe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, keep, want string }{
		{"plain café 日本 \U0001F600 \ufffd", "", "plain café 日本 \U0001F600 \ufffd"},
		{"\x1b]52;c;aGk=\x07", "", `\x1b]52;c;aGk=\x07`},
		{"a\x1b[2Jb", "", `a\x1b[2Jb`},
		{"del\x7f nul\x00 cr\r", "", `del\x7f nul\x00 cr\r`},
		{"c1 \u009b2J", "", `c1 \u009b2J`},
		{"bidi \u202eevil\u202c \u2066x\u2069", "", `bidi \u202eevil\u202c \u2066x\u2069`},
		{"bad \xff\xc3 utf8", "", `bad \xff\xc3 utf8`},
		{"tab\tnew\nline", "", `tab\tnew\nline`},
		{"tab\tnew\nline", "\t", "tab\tnew\\nline"},
		{"tab\tnew\nline\x1b", "\t\n", "tab\tnew\nline\\x1b"},
	} {
		if got := terminalSafe(tc.in, tc.keep); got != tc.want {
			t.Errorf("terminalSafe(%q, %q) = %q, want %q", tc.in, tc.keep, got, tc.want)
		}
	}
}

// Every field of a finding the text output prints, and the summary, shows
// a terminal escape from the repository as text; the output's own colour
// codes are still written.
func TestWriteTextEscapes(t *testing.T) {
	t.Parallel()
	const osc52, clear = "\x1b]52;c;aGk=\x07", "\x1b[2J"
	patch := "-\tx := \"" + osc52 + "\"\n+\tx := \"\"\n"
	r := review.Full{
		Findings: []review.Finding{{
			Specialist: "logic", Severity: "high", Path: "dir/a" + clear + "\tb.go", Line: 2,
			Headline: "identifier é" + clear + " shadows\nthe other", Rule: "rule" + osc52,
			Body:           "Body " + osc52 + " text\n\n\tindented \xff",
			SuggestedPatch: &patch,
			Excerpt: review.Excerpt{Lines: []review.Line{
				{Number: 1, Text: "package a"},
				{Number: 2, Text: "\tx := \"" + osc52 + "\"\r"},
			}},
		}},
	}
	r.Summary = "One finding in dir/a" + clear + "\tb.go.\n\nDone."
	r.Verdict = "request_changes"
	for _, color := range []bool{false, true} {
		var out bytes.Buffer
		if err := writeText(&out, r, color); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		heading := `dir/a\x1b[2J\tb.go`
		if color {
			heading = "\x1b[1m" + heading + "\x1b[0m"
		}
		wantContains(t, fmt.Sprintf("color %v: output", color), got,
			heading+"\n",
			"dir/a\\x1b[2J\\tb.go:2 ",
			" [logic] identifier é\\x1b[2J shadows\\nthe other (rule\\x1b]52;c;aGk=\\x07)\n",
			"    2 │ \tx := \"\\x1b]52;c;aGk=\\x07\"\n",
			"      Body \\x1b]52;c;aGk=\\x07 text\n\n      \tindented \\xff\n",
			"        -\tx := \"\\x1b]52;c;aGk=\\x07\"\n        +\tx := \"\"\n",
			"One finding in dir/a\\x1b[2J\tb.go.\n\nDone.\n\nVerdict: request changes\n")
		if raw := strings.ReplaceAll(strings.ReplaceAll(got, "\x1b[1m", ""), "\x1b[0m", ""); color {
			raw = strings.ReplaceAll(raw, severityColor["high"], "")
			if strings.ContainsRune(raw, 0x1b) {
				t.Errorf("color: an escape other than the output's own colours:\n%q", got)
			}
		} else if strings.ContainsAny(got, "\x1b\x07\r") {
			t.Errorf("raw control characters in the output:\n%q", got)
		}
	}
}

// The progress lines on stderr show a note's or an error's path escaped.
func TestProgressEscapes(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	progress := progressPrinter(&out)
	progress(pipeline.Progress{Specialist: "logic", Stage: pipeline.StageFinished, Notes: []string{"skipped a\x1b[2J.go:\tno parse"}})
	progress(pipeline.Progress{Specialist: "tests", Stage: pipeline.StageFailed, Err: errors.New("open b\x1b]52;c;aGk=\x07.go: denied\nmore")})
	analyzerPrinter(&out)("ruff", 1, 0, errors.New("c\x1b[2J.py: \xff"))
	exitCode(errors.New("read d\x1b[2J.go:\n\tdetail"), &out)
	wantContains(t, "stderr", out.String(),
		"quorum: logic       skipped a\\x1b[2J.go:\\tno parse\n",
		"quorum: tests       failed after 0s: open b\\x1b]52;c;aGk=\\x07.go: denied\n",
		"quorum: ruff        failed after 0s on 1 file: c\\x1b[2J.py: \\xff\n",
		"quorum: read d\\x1b[2J.go:\n\tdetail\n")
	if strings.ContainsAny(out.String(), "\x1b\x07") {
		t.Errorf("raw control characters on stderr:\n%q", out.String())
	}
}

// wantContains reports each of wants that got, the named output, lacks.
func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s does not contain %q:\n%s", what, want, got)
		}
	}
}
