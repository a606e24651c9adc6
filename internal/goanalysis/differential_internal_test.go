package goanalysis

import "testing"

func TestFuncLines(t *testing.T) {
	t.Parallel()
	lines := funcLines([]byte("package p\n\nfunc (s *S) Run() error {\n\treturn   nil\n}\n\nvar x = 1\n"))
	for _, want := range []string{"(*S).Run\x00return nil", "\x00var x = 1", "(*S).Run\x00}"} {
		if !lines[want] {
			t.Errorf("funcLines lacks %q: %v", want, lines)
		}
	}
	if funcLines([]byte("package p\n\nfunc {")) != nil {
		t.Error("a file that does not parse gave lines")
	}
}
