package goanalysis_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"honnef.co/go/tools/staticcheck"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// deprecatedLib is a module with deprecations on a package the change
// imports and on one behind it (TestDeprecationsOfAModule's), and
// wrap, a module that hands out lib's types.
func deprecatedLib() []goanalysistest.Module {
	return []goanalysistest.Module{
		{Path: "corp.example/lib", Version: "v1.0.0", Files: map[string]string{
			"lib.go":         "package lib\n\nimport \"corp.example/lib/inner\"\n\n// Old is old.\n//\n// Deprecated: use New.\nfunc Old() int { return 1 }\n\n// New makes a T.\nfunc New() *inner.T { return &inner.T{} }\n",
			"inner/inner.go": "package inner\n\n// T is a thing.\ntype T struct {\n\t// Count counts.\n\t//\n\t// Deprecated: always zero.\n\tCount int\n}\n\n// Legacy does nothing.\n//\n// Deprecated: do nothing yourself.\nfunc (*T) Legacy() {}\n",
		}},
		{Path: "corp.example/wrap", Version: "v1.0.0", Files: map[string]string{
			"go.mod":  "module corp.example/wrap\n\ngo 1.21\n\nrequire corp.example/lib v1.0.0\n",
			"wrap.go": "package wrap\n\nimport (\n\t\"strings\"\n\n\t\"corp.example/lib\"\n\t\"corp.example/lib/inner\"\n)\n\n// Make makes a T.\nfunc Make() *inner.T { return lib.New() }\n\n// Name names one.\nfunc Name(s string) string { return strings.ToUpper(s) }\n",
		}},
	}
}

// depChange is a change to app, which imports what app.go (the head's)
// says, in a module requiring lib and wrap.
func depChange(t *testing.T, app string) *change.Change {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": requireLine("corp.example/lib v1.0.0", "corp.example/wrap v1.0.0"), "app/app.go": "package app\n\nfunc A() int { return 1 }\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"app/app.go": app})
	return r.Change(base, r.Commit("head"))
}

// sa1019 returns what staticcheck's SA1019 reports on p, a line each.
func sa1019(t *testing.T, p *goanalysis.Program) []string {
	t.Helper()
	if len(p.Fallback) > 0 || len(p.Packages) == 0 {
		t.Fatalf("app was not type-checked: %s", reasons(p))
	}
	var a *analysis.Analyzer
	for _, sa := range staticcheck.Analyzers {
		if sa.Analyzer.Name == "SA1019" {
			a = sa.Analyzer
		}
	}
	ds, err := p.Analyze(context.Background(), []*analysis.Analyzer{a}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, fmt.Sprintf("%d: %s", d.Line, strings.TrimSpace(d.Message)))
	}
	slices.Sort(got)
	return got
}

const (
	// libApp uses lib alone; wrapApp reaches lib's types through wrap
	// too, which no earlier load checked.
	libApp  = "package app\n\nimport \"corp.example/lib\"\n\nfunc A() int {\n\tt := lib.New()\n\tt.Legacy()\n\treturn lib.Old() + t.Count\n}\n"
	wrapApp = "package app\n\nimport (\n\t\"corp.example/lib\"\n\t\"corp.example/wrap\"\n)\n\nfunc A() int {\n\tt := wrap.Make()\n\tt.Legacy()\n\t_ = wrap.Name(\"x\")\n\treturn lib.Old() + t.Count\n}\n"
)

// A load keeps its dependencies' summaries; a later one, of another
// change, type-checks only what no earlier load did (wrap, against lib's
// summaries), and finds what a load with nothing kept finds: the same
// deprecations, through a package that was not checked.
func TestTypesCacheServesALaterLoad(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, deprecatedLib()...)
	modCache, cacheDir := t.TempDir(), t.TempDir()
	cfg := goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: modCache, CacheDir: cacheDir}

	first := loadWith(t, cfg, depChange(t, libApp))
	if first.Dependencies.FromCache != 0 || first.Dependencies.Checked != 2 {
		t.Errorf("first load: %+v, want lib and inner checked", first.Dependencies)
	}
	want := []string{
		"7: (*corp.example/lib/inner.T).Legacy is deprecated: do nothing yourself.",
		"8: (corp.example/lib/inner.T).Count is deprecated: always zero.",
		"8: corp.example/lib.Old is deprecated: use New.",
	}
	if got := sa1019(t, first); !slices.Equal(got, want) {
		t.Errorf("first load: SA1019 found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	later := loadWith(t, cfg, depChange(t, wrapApp))
	cold := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: modCache, CacheDir: t.TempDir()}, depChange(t, wrapApp))
	t.Logf("later load: %+v; with nothing kept: %+v", later.Dependencies, cold.Dependencies)
	// wrap and strings (with what it imports) were not checked before;
	// lib and inner were.
	if later.Dependencies.FromCache != 2 || later.Dependencies.Checked == 0 || later.Dependencies.Checked >= cold.Dependencies.Checked {
		t.Errorf("later load: %+v, want lib's summaries from the cache and wrap checked (with nothing kept: %+v)", later.Dependencies, cold.Dependencies)
	}
	want = []string{
		"10: (*corp.example/lib/inner.T).Legacy is deprecated: do nothing yourself.",
		"12: (corp.example/lib/inner.T).Count is deprecated: always zero.",
		"12: corp.example/lib.Old is deprecated: use New.",
	}
	got, gotCold := sa1019(t, later), sa1019(t, cold)
	if !slices.Equal(got, want) || !slices.Equal(gotCold, want) {
		t.Errorf("SA1019 found\n%s\nand with nothing kept\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(gotCold, "\n"), strings.Join(want, "\n"))
	}
}

// A summary's file that does not read back whole (a torn write, a
// flipped bit) is not used: its package is checked again, as if nothing
// were kept, and kept anew.
func TestTypesCacheDamagedEntryIsCheckedAgain(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, deprecatedLib()...)
	cfg := goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir(), CacheDir: t.TempDir()}
	c := depChange(t, libApp)
	first := loadWith(t, cfg, c)
	want := sa1019(t, first)

	var damaged int
	filepath.WalkDir(filepath.Join(cfg.CacheDir, "types"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch damaged % 3 {
		case 0:
			// The checksum itself: the rest still decodes.
			b[len(b)-1] ^= 0x01
		case 1:
			b = b[:len(b)/2]
		default:
			b[len(b)/2] ^= 0x40
		}
		damaged++
		return os.WriteFile(p, b, 0o600)
	})
	if damaged == 0 {
		t.Fatal("the first load kept nothing")
	}
	again := loadWith(t, cfg, c)
	if again.Dependencies.FromCache != 0 || again.Dependencies.Checked != first.Dependencies.Checked {
		t.Errorf("with every summary damaged: %+v, want all %d checked again", again.Dependencies, first.Dependencies.Checked)
	}
	if got := sa1019(t, again); !slices.Equal(got, want) {
		t.Errorf("with every summary damaged, SA1019 found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if third := loadWith(t, cfg, c); third.Dependencies.FromCache != first.Dependencies.Checked || third.Dependencies.Checked != 0 {
		t.Errorf("after the damaged summaries were checked again: %+v, want all %d from the cache", third.Dependencies, first.Dependencies.Checked)
	}
}

// A change cannot make another review see a dependency as it is not: a
// summary is found by the content of the files it was checked from, so a
// module version served with other contents (a proxy that lies, a cache
// written by another change's fetch) is checked from its own files, and
// the review that has the real ones gets their types.
func TestTypesCacheIsKeyedByContent(t *testing.T) {
	t.Parallel()
	honest := goanalysistest.NewGoProxy(t, goanalysistest.Module{Path: "corp.example/lib", Version: "v1.0.0", Files: map[string]string{
		"lib.go": "package lib\n\n// Count counts.\nfunc Count() int { return 1 }\n",
	}})
	forged := goanalysistest.NewGoProxy(t, goanalysistest.Module{Path: "corp.example/lib", Version: "v1.0.0", Files: map[string]string{
		"lib.go": "package lib\n\n// Count counts.\nfunc Count() string { return \"1\" }\n",
	}})
	cacheDir := t.TempDir()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": requireLine("corp.example/lib v1.0.0"), "app/app.go": "package app\n\nfunc A() int { return 1 }\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"app/app.go": "package app\n\nimport \"corp.example/lib\"\n\nfunc A() int { return lib.Count() + 1 }\n"})
	c := r.Change(base, r.Commit("head"))

	// The forged module is reviewed first, and its summary kept. Both
	// reviews' module caches are at one path, so that the files' names
	// are the same and only their contents differ.
	modCache := t.TempDir()
	p := loadWith(t, goanalysis.Config{GoProxy: forged.URL, GoPrivate: "corp.example", ModCache: modCache, CacheDir: cacheDir}, c)
	if errs := typeErrors(p); !strings.Contains(errs, "string") {
		t.Fatalf("with the forged lib, app type-checked: %+v %q", p.Dependencies, errs)
	}
	// The honest one, with the same cache: its lib is its own.
	emptyModCache(t, modCache)
	p = loadWith(t, goanalysis.Config{GoProxy: honest.URL, GoPrivate: "corp.example", ModCache: modCache, CacheDir: cacheDir}, c)
	if errs := typeErrors(p); errs != "" || len(p.Fallback) > 0 || len(p.Packages) == 0 {
		t.Errorf("with the honest lib, after the forged one's summary was kept, app did not type-check: %q %s", errs, reasons(p))
	}
	if p.Dependencies.Checked != 1 {
		t.Errorf("the honest load: %+v, want lib alone checked (the standard library is not imported)", p.Dependencies)
	}
}

// The go command, which runs on the change's behalf, is not shown the
// summaries: a go that plays the attacker can neither read them nor
// leave one there for the reviews that follow.
func TestTypesCacheIsNotVisibleToTheGoCommand(t *testing.T) {
	t.Parallel()
	base := worldDir(t, "quorum-go-types-")
	cacheDir := filepath.Join(base, "cache")
	types := filepath.Join(cacheDir, "types")
	if err := os.MkdirAll(filepath.Join(types, "ab"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cacheDir, 0o777); err != nil {
		t.Fatal(err)
	}
	goExe := standInGo(t, base, `seen=no; wrote=no
[ -e `+types+`/ab ] && seen=yes
(echo poison > `+types+`/ab/cd) 2>/dev/null && wrote=yes
echo "probe seen=$seen wrote=$wrote" >&2
exit 1
`)
	p := loadWith(t, goanalysis.Config{Go: goExe, CacheDir: cacheDir}, probeChange(t))
	why := fallbackReasons(p)["p"]
	if !strings.Contains(why, "probe ") {
		t.Fatalf("the probe's report is not in the reason the load gives: %q", why)
	}
	if !strings.Contains(why, "seen=no") || !strings.Contains(why, "wrote=no") {
		t.Errorf("the go command reached the summaries: %s", why)
	}
	if _, err := os.Stat(filepath.Join(types, "ab", "cd")); err == nil {
		t.Error("a file appeared among the summaries")
	}
}

// typeErrors returns the type errors of p's changed packages, a line each.
func typeErrors(p *goanalysis.Program) string {
	var out []string
	for _, d := range p.TypeErrors {
		out = append(out, d.Message)
	}
	return strings.Join(out, "\n")
}

// emptyModCache removes what a module cache holds (the go command makes
// its files read-only).
func emptyModCache(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}
