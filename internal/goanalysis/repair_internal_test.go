package goanalysis

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/packages"
)

// A //line directive moves where a body's type error is reported: here
// onto Innocent. A package with one is not repaired, so that Bad, which
// holds the error, is never handed whole to the analyzers that need
// complete types while Innocent is left out in its place.
func TestRepairRefusesLineDirectives(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src := "package p\n\nfunc Innocent() int {\n\tx := 1\n\tx++\n\treturn x\n}\n\nfunc Bad() {\n//line a.go:4:2\n\tvar s int = \"not an int\"\n\t_ = s\n}\n"
	for name, content := range map[string]string{"go.mod": "module m\n\ngo 1.22\n", "a.go": src} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.LoadAllSyntax, Dir: root,
		Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || !pkgs[0].IllTyped {
		t.Fatalf("want one ill-typed package, got %v", pkgs)
	}
	for p, fns := range repairable(root, pkgs) {
		for _, fd := range fns {
			t.Errorf("%s: %s left out, by the position a //line directive gave its error", p.PkgPath, funcName(fd))
		}
	}
}

// The reason a file's functions were left out is its own error whichever
// of its packages (the package, its test variant) gives its reason
// first: the repairs come from a map.
func TestBetterReasonIsOrderFree(t *testing.T) {
	const file = "/r/s/s.go"
	own := "/r/s/s.go:4:14: cannot use \"one\" as int value"
	other := "/r/s/a_test.go:6:17: cannot use S() as string value"
	later := "/r/s/s.go:9:2: undefined: x"
	for _, reasons := range [][]string{{own, other}, {other, own}, {later, own, other}, {other, later, own}} {
		got := ""
		for _, r := range reasons {
			if got == "" || betterReason(r, got, file) {
				got = r
			}
		}
		if got != own {
			t.Errorf("from %q in that order: %q, want the file's own first error %q", reasons, got, own)
		}
	}
}
