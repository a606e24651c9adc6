package polyglot

import (
	"strings"
	"testing"
)

// oxlint names a file it could not read in its message alone: the report
// is put on that file, and a failure of no file fails the run rather than
// being put on a path ".".
func TestParseOxlintFailureOfAFile(t *testing.T) {
	t.Parallel()
	out := `{"diagnostics": [{"message": "Failed to open file /w/src/web/a.js with error \"stream did not contain valid UTF-8\"", "severity": "error", "labels": []}]}`
	r, err := parseOxlint([]byte(out), "/w/src", func(string) *lineIndex { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(r.unparsed) != 1 || r.unparsed[0].path != "web/a.js" || r.unparsed[0].why != "oxlint could not read it: stream did not contain valid UTF-8" {
		t.Errorf("unparsed = %+v", r.unparsed)
	}
	_, err = parseOxlint([]byte(`{"diagnostics": [{"message": "out of memory", "severity": "error", "labels": []}]}`), "/w/src", func(string) *lineIndex { return nil })
	if err == nil || !strings.Contains(err.Error(), "of no file: out of memory") {
		t.Errorf("err = %v, want a failure of the run", err)
	}
}
