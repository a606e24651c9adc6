package polyglot

import "testing"

func TestSplitTakesTheFirstSentence(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string][2]string{
		"Set the SHELL option -o pipefail before RUN with a pipe in it. If you are using /bin/sh, set it.": {"Set the SHELL option -o pipefail before RUN with a pipe in it.", "If you are using /bin/sh, set it."},
		"Use 'cd ... || exit' or 'cd ... || return' in case cd fails.":                                     {"Use 'cd ... || exit' or 'cd ... || return' in case cd fails.", ""},
		"Double quote to prevent globbing and word splitting.":                                             {"Double quote to prevent globbing and word splitting.", ""},
		"first line\nsecond": {"first line", "second"},
	} {
		if h, r := split(msg); h != want[0] || r != want[1] {
			t.Errorf("split(%q) = %q, %q; want %q, %q", msg, h, r, want[0], want[1])
		}
	}
}
