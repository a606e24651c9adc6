package goanalysis_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/go/analysis"

	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

func TestEnvironmentIsSandboxed(t *testing.T) {
	t.Parallel()
	modCache := t.TempDir()
	env, err := goanalysis.NewLoader(goanalysis.Config{CacheDir: t.TempDir(), ModCache: modCache}).EnvironmentForTest()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		// Offline, the only proxy is the module cache itself.
		"GOTOOLCHAIN=local", "CGO_ENABLED=0", "GOPROXY=file://" + filepath.ToSlash(filepath.Join(modCache, "cache", "download")), "GOSUMDB=off", "GOVCS=*:off",
		"GOWORK=off", "GOENV=off", "GOFLAGS=-mod=mod -buildvcs=false",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("environment lacks %s: %v", want, env)
		}
	}
	for _, v := range env {
		if strings.HasPrefix(v, "GOROOT=") || strings.HasPrefix(v, "GIT_DIR=") {
			t.Errorf("environment carries %s", v)
		}
	}

	// With a proxy to fetch through, the load itself stays offline:
	// only the fetch before it (fetch.go) reaches the proxy.
	fetchCache := t.TempDir()
	online, err := goanalysis.NewLoader(goanalysis.Config{GoProxy: goanalysis.DefaultGoProxy, CacheDir: t.TempDir(), ModCache: fetchCache}).EnvironmentForTest()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(online, "GOPROXY=file://"+filepath.ToSlash(filepath.Join(fetchCache, "cache", "download"))) || !slices.Contains(online, "GOSUMDB=off") || !slices.Contains(online, "GOVCS=*:off") {
		t.Errorf("load environment with a proxy: %v", online)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":          goanalysistest.GoMod("example.com/load"),
		"lib/lib.go":      "package lib\n\n// N is a number.\nconst N = 1\n",
		"svc/helper.go":   "package svc\n\nfunc helper() int { return 2 }\n",
		"svc/svc.go":      "package svc\n\nfunc S() int { return helper() }\n",
		"docs/a.md":       "docs\n",
		"other/o.go":      "package other\n\nfunc O() int { return 1 }\n",
		"other/o_test.go": "package other\n\nimport \"testing\"\n\nfunc TestO(t *testing.T) { _ = O() }\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{
		"svc/svc.go":      "package svc\n\nimport \"example.com/load/lib\"\n\nfunc S() int { return helper() + lib.N }\n",
		"svc/svc_test.go": "package svc\n\nimport \"testing\"\n\nfunc TestS(t *testing.T) { _ = S() }\n",
		"other/o.go":      "package other\n\nfunc O() int { return 2 }\n",
	})
	head := r.Commit("head")
	c := r.Change(base, head)
	l := goanalysistest.Loader()

	// Concurrent loads of one change share one program.
	progs := make([]*goanalysis.Program, 4)
	var wg sync.WaitGroup
	for i := range progs {
		wg.Go(func() {
			p, err := l.Load(context.Background(), c)
			if err != nil {
				t.Error(err)
			}
			progs[i] = p
		})
	}
	wg.Wait()
	p := progs[0]
	if p == nil {
		t.Fatal("no program")
	}
	for _, q := range progs[1:] {
		if q != p {
			t.Fatal("concurrent loads of one change gave different programs")
		}
	}
	if p.SyntaxOnly != "" {
		t.Fatalf("syntax-only: %s", p.SyntaxOnly)
	}
	// The changed package is loaded with its test variant (a test file
	// changed), and type-checks against the unchanged helper.go and the
	// module's other package.
	var paths []string
	for _, pkg := range p.Packages {
		paths = append(paths, pkg.ID)
		if pkg.IllTyped {
			t.Errorf("%s ill-typed: %v", pkg.ID, pkg.Errors)
		}
	}
	if !slices.Contains(paths, "example.com/load/svc [example.com/load/svc.test]") {
		t.Errorf("packages %v lack svc's test variant", paths)
	}
	// The test variant holds the package's own files: the package is not
	// analyzed a second time on its own.
	if slices.Contains(paths, "example.com/load/svc") {
		t.Errorf("packages %v hold svc besides its test variant", paths)
	}
	// A package whose tests did not change is analyzed without them.
	if !slices.Contains(paths, "example.com/load/other") || slices.Contains(paths, "example.com/load/other [example.com/load/other.test]") {
		t.Errorf("packages %v: want other alone, not its test variant", paths)
	}
	if _, ok := p.HeadFile("svc/helper.go"); !ok {
		t.Error("unchanged file of the package not copied")
	}
	if _, ok := p.HeadFile("lib/lib.go"); !ok {
		t.Error("imported package of the module not copied")
	}
	if _, ok := p.HeadFile("docs/a.md"); ok {
		t.Error("a file no package needs was copied")
	}
	if rp, ok := p.RepoPath(p.Root + "/svc/svc.go"); !ok || rp != "svc/svc.go" {
		t.Errorf("RepoPath = %q, %v", rp, ok)
	}
	if _, ok := p.RepoPath("/usr/lib/go/src/fmt/print.go"); ok {
		t.Error("a file outside the repository has a repository path")
	}

	// An analyzer's panic is its error, not the service's crash.
	panicky := &analysis.Analyzer{Name: "panicky", Doc: "panics", Run: func(*analysis.Pass) (any, error) { panic("boom") }}
	if _, err := p.Analyze(context.Background(), []*analysis.Analyzer{panicky}, nil); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Analyze with a panicking analyzer: %v", err)
	}
	// Also when the analyzer that panics is required by another.
	panickyReq := &analysis.Analyzer{Name: "panickyreq", Doc: "panics", Run: func(*analysis.Pass) (any, error) { panic("boom") }}
	needs := &analysis.Analyzer{Name: "needs", Doc: "requires panickyreq", Requires: []*analysis.Analyzer{panickyReq}, Run: func(*analysis.Pass) (any, error) { return nil, nil }}
	if _, err := p.Analyze(context.Background(), []*analysis.Analyzer{needs}, nil); err == nil || !strings.Contains(err.Error(), "panickyreq") {
		t.Errorf("Analyze with a panicking required analyzer: %v", err)
	}
}

func TestLoadNoGo(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"README.md": "a\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"README.md": "b\n"})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil || p != nil {
		t.Fatalf("Load of a change without Go = %v, %v; want nil, nil", p, err)
	}
}

// A go.mod asking for a toolchain newer than ours cannot make the loader
// fetch and run one, nor turn the analysis off: the copied go.mod is
// lowered to the local version, and the review says so.
func TestLoadRefusesOtherToolchains(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod": "module example.com/future\n\ngo 1.99.0\n\ntoolchain go1.99.1\n",
		"a.go":   "package future\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"a.go": "package future\n\nfunc F() {}\n"})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if p.SyntaxOnly != "" || len(p.Packages) != 1 {
		t.Fatalf("SyntaxOnly = %q, %d packages; want the package type-checked", p.SyntaxOnly, len(p.Packages))
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "Go 1.99.0") {
		t.Fatalf("Notes = %q, want the go line's rewrite", p.Notes)
	}
}

// One package that does not type-check (or cannot be loaded at all) falls
// back to syntax-only alone: the others are type-checked, and the type
// errors are diagnostics of TypeCheck.
func TestLoadFallsBackPerPackage(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/mix"),
		"ok/a.go":    "package ok\n\nfunc A() int { return 1 }\n",
		"bad/b.go":   "package bad\n\nfunc B() int { return 1 }\n",
		"two/a.go":   "package two\n",
		"syn/s.go":   "package syn\n",
		"imp/i.go":   "package imp\n",
		"bomb/b.go":  "package bomb\n",
		"user/u.go":  "package user\n",
		"keep/k.go":  "package keep\n",
		"outside.go": "package mix\n",
	})
	base := r.Commit("base")
	bomb := []string{"package bomb", "", "type P0[T any] struct{ v T }"}
	for i := 1; i < 40; i++ {
		bomb = append(bomb, fmt.Sprintf("type P%d[T any] struct{ a, b P%d[T] }", i, i-1))
	}
	bomb = append(bomb, "var V P39[int]")
	r.Write(map[string]string{
		"ok/a.go":      "package ok\n\nfunc A() int { return 2 }\n",
		"bad/b.go":     "package bad\n\nvar X int = \"s\"\n\nfunc B() int { return 1 }\n",
		"two/b.go":     "package other\n",
		"syn/s.go":     "package syn\n\nfunc F( {\n",
		"imp/i.go":     "package imp\n\nimport \"example.com/nowhere/x\"\n\nvar _ = x.Y\n",
		"bomb/b.go":    strings.Join(bomb, "\n") + "\n",
		"user/u.go":    "package user\n\nimport \"example.com/mix/bomb\"\n\nvar _ = bomb.V\n",
		"keep/k.go":    "package keep\n\nfunc K() {}\n",
		"odd\nname.go": "package mix\n",
	})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	// bomb's nested generic types are analysed as empty structs, and
	// the rest of it, and user, as usual.
	typed := typedPaths(p)
	if want := []string{"example.com/mix/bomb", "example.com/mix/keep", "example.com/mix/ok", "example.com/mix/user"}; !slices.Equal(typed, want) {
		t.Errorf("type-checked %v, want %v", typed, want)
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.HasPrefix(n, "bomb: its type") && strings.Contains(n, "expands to more than")
	}) {
		t.Errorf("notes %q do not say bomb's types were too large", p.Notes)
	}
	fallback := fallbackReasons(p)
	for dir, want := range map[string]string{
		"bad": "cannot use",
		"two": "found packages",
		"syn": "expected",
		"imp": "example.com/nowhere/x",
	} {
		if !strings.Contains(fallback[dir], want) {
			t.Errorf("fallback of %s = %q, want it to say %q", dir, fallback[dir], want)
		}
	}
	if p.SyntaxOnly != "" {
		t.Errorf("SyntaxOnly = %q with packages type-checked", p.SyntaxOnly)
	}
	if p.FallbackReason("bad/b.go") == "" || p.FallbackReason("ok/a.go") != "" {
		t.Errorf("FallbackReason: bad %q, ok %q", p.FallbackReason("bad/b.go"), p.FallbackReason("ok/a.go"))
	}
	if len(p.Skipped) != 1 || p.Skipped[0].Path != "odd\nname.go" {
		t.Errorf("Skipped = %+v, want the file whose name has a newline", p.Skipped)
	}
	ds, err := p.Analyze(context.Background(), []*analysis.Analyzer{goanalysis.TypeCheck}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, d := range ds {
		errs = append(errs, fmt.Sprintf("%s:%d", d.Path, d.Line))
	}
	if !slices.Contains(errs, "bad/b.go:3") {
		t.Errorf("type errors at %v, want bad/b.go:3", errs)
	}
	for _, e := range errs {
		if strings.HasPrefix(e, "imp/") {
			t.Errorf("an import unavailable offline is reported as the code's error: %v", errs)
		}
	}
}

// A replace directive naming a directory outside the repository is dropped
// from the copied go.mod: nothing outside the tree is read.
func TestLoadDropsReplaceOutsideRepository(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "go.mod"), []byte("module example.com/x\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "x.go"), []byte("package x\n\nconst Secret = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod": "module example.com/rep\n\ngo 1.26\n\nrequire example.com/x v0.0.0\n\nreplace example.com/x => " + outside + "\n",
		"a.go":   "package rep\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"a.go": "package rep\n\nimport \"example.com/x\"\n\nconst N = x.Secret\n"})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Packages) != 0 || len(p.Fallback) != 1 {
		t.Fatalf("packages %d, fallback %+v: the replaced module outside the repository was read", len(p.Packages), p.Fallback)
	}
	// The rest of the module is still typed: the package that imports
	// the module no longer replaced is typed in part.
	if len(p.Partial) != 1 || !p.PartlyTyped("a.go") {
		t.Errorf("partly typed %d packages, fallback %+v: want a.go typed in part", len(p.Partial), p.Fallback)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "outside the repository") {
		t.Fatalf("Notes = %q", p.Notes)
	}
}

// Past its time limit, loading gives way to syntax-only review.
func TestLoadTimeoutFallsBackToSyntax(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/slow"), "a.go": "package slow\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.go": "package slow\n\nfunc F() {}\n"})
	head := r.Commit("head")
	l := goanalysis.NewLoader(goanalysis.Config{Timeout: time.Nanosecond})
	p, err := l.Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if p.SyntaxOnly != "loading took longer than 1ns" || len(p.Files) != 1 {
		t.Fatalf("SyntaxOnly = %q, %d files", p.SyntaxOnly, len(p.Files))
	}

	// The caller's own deadline is an error, not a fallback.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := goanalysistest.Loader().Load(ctx, r.Change(base, head)); err == nil {
		t.Fatal("Load with a cancelled context succeeded")
	}
}

// A repository without go.mod (GOPATH-era code) is type-checked in GOPATH
// mode under the import path its files name, with its vendored packages.
func TestLoadWithoutGoMod(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"lib/lib.go":                             "package lib // import \"github.com/acme/old/lib\"\n\nconst N = 1\n",
		"vendor/github.com/pkg/errors/errors.go": "package errors\n\nfunc New(s string) error { return nil }\n",
		"svc/svc.go":                             "package svc\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{
		"svc/svc.go": "package svc\n\nimport (\n\t\"github.com/acme/old/lib\"\n\t\"github.com/pkg/errors\"\n)\n\nfunc S() (int, error) { return lib.N, errors.New(\"x\") }\n",
	})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Packages) != 1 || p.Packages[0].PkgPath != "github.com/acme/old/svc" || len(p.Fallback) != 0 {
		t.Fatalf("packages %d, fallback %+v; want github.com/acme/old/svc type-checked", len(p.Packages), p.Fallback)
	}
	if rp, ok := p.RepoPath(p.Packages[0].CompiledGoFiles[0]); !ok || rp != "svc/svc.go" {
		t.Errorf("RepoPath = %q, %v", rp, ok)
	}
}

// Changed packages of several modules are each loaded with their own
// module.
func TestLoadSeveralModules(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"a/go.mod": goanalysistest.GoMod("example.com/a"),
		"a/a.go":   "package a\n",
		"b/go.mod": goanalysistest.GoMod("example.com/b"),
		"b/b.go":   "package b\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"a/a.go": "package a\n\nfunc A() {}\n", "b/b.go": "package b\n\nfunc B() {}\n"})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Packages) != 2 || len(p.Fallback) != 0 {
		t.Fatalf("packages %d, fallback %+v; want both modules' packages", len(p.Packages), p.Fallback)
	}
}

// A GOPATH-era package importing the repository's root package by its
// import path ("github.com/acme/bolt" for package bolt at the root) is
// loaded under that path.
func TestLoadWithoutGoModRootImport(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"db.go":            "package bolt\n\n// Open opens.\nfunc Open() int { return 1 }\n",
		"cmd/bolt/main.go": "package main\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"cmd/bolt/main.go": "package main\n\nimport \"github.com/acme/bolt\"\n\nfunc main() { _ = bolt.Open() }\n"})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Packages) != 1 || p.Packages[0].PkgPath != "github.com/acme/bolt/cmd/bolt" || len(p.Fallback) != 0 {
		t.Fatalf("packages %d, fallback %+v; want github.com/acme/bolt/cmd/bolt type-checked", len(p.Packages), p.Fallback)
	}
}

// Offline, an import no go.mod requires resolves from the module cache
// (the newest version it holds), without the network: the module cache is
// the proxy. golang.org/x/mod is in the cache wherever quorum was built.
func TestLoadResolvesMissingRequireFromModuleCache(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/ver"), "a.go": "package ver\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.go": "package ver\n\nimport \"golang.org/x/mod/semver\"\n\n// Newer reports whether a is newer than b.\nfunc Newer(a, b string) bool { return semver.Compare(a, b) > 0 }\n"})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Packages) != 1 || len(p.Fallback) != 0 || len(p.Partial) != 0 {
		t.Fatalf("packages %d, partial %d, fallback %+v: golang.org/x/mod did not resolve from the module cache", len(p.Packages), len(p.Partial), p.Fallback)
	}
}

// An import comment is the pull request's to write: one that climbs out
// of the copied tree ("../../…/target") is not an import path, so the
// tree is not copied there, and the package is still type-checked under
// the fallback path.
func TestLoadIgnoresImportCommentLeavingTheTree(t *testing.T) {
	t.Parallel()
	target := filepath.Join(t.TempDir(), "pwned")
	// Past the file system's root, ".." stays there: enough of them reach
	// "/" from wherever the temporary tree is.
	traversal := strings.Repeat("../", 64) + strings.TrimPrefix(filepath.ToSlash(target), "/")
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"victim.txt": "secret\n", "x.go": "package x\n", "sub/s.go": "package sub\n"})
	base := r.Commit("base")
	r.Write(map[string]string{
		"x.go":     "package x // import \"" + traversal + "\"\n\nimport _ \"embed\"\n\n//go:embed victim.txt\nvar S string\n",
		"sub/s.go": "package sub /* import \"" + traversal + "/sub\" */\n\n// N is a number.\nconst N = 1\n",
	})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(target)
		t.Errorf("the loader wrote outside its tree: %s holds %v (stat: %v)", target, entries, err)
	}
	typed := typedPaths(p)
	if want := []string{"quorum.invalid/repository", "quorum.invalid/repository/sub"}; !slices.Equal(typed, want) || len(p.Fallback) != 0 {
		t.Fatalf("type-checked %v, fallback %+v; want %v", typed, p.Fallback, want)
	}
}

// Nested generic types split over three packages, each small enough alone
// (P0–P13 in a, P14–P27 in b, P28–P39 in c), are measured with what they
// import from the tree: the review ends quickly, the types past the bound
// are analysed as empty structs and said so, the rest of their packages is
// type-checked, and the load leaves no copied tree behind.
func TestLoadCatchesTypesExplodingAcrossPackages(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":  goanalysistest.GoMod("example.com/split"),
		"a/a.go":  "package a\n",
		"b/b.go":  "package b\n",
		"c/c.go":  "package c\n",
		"ok/o.go": "package ok\n",
	})
	base := r.Commit("base")
	level := func(pkg, imp, qual string, from, to int) string {
		lines := []string{"package " + pkg, ""}
		if imp != "" {
			lines = append(lines, "import "+imp, "")
		}
		for i := from; i < to; i++ {
			prev := fmt.Sprintf("P%d[T]", i-1)
			if i == from {
				prev = qual + prev
			}
			if i == 0 {
				lines = append(lines, "type P0[T any] struct{ v T }")
				continue
			}
			lines = append(lines, fmt.Sprintf("type P%d[T any] struct{ a, b %s }", i, prev))
		}
		return strings.Join(lines, "\n") + "\n"
	}
	r.Write(map[string]string{
		"a/a.go": level("a", "", "", 0, 14),
		"b/b.go": level("b", `"example.com/split/a"`, "a.", 14, 28),
		// A dot import names b's types without a qualifier.
		"c/c.go":  level("c", `. "example.com/split/b"`, "", 28, 40) + "var V P39[int]\n",
		"ok/o.go": "package ok\n\nfunc O() int { return 2 }\n",
	})
	head := r.Commit("head")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	p, err := goanalysis.NewLoader(goanalysis.Config{Timeout: 30 * time.Second}).Load(ctx, r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("load took %s", d)
	}
	fallback := fallbackReasons(p)
	for _, dir := range []string{"b", "c"} {
		if !slices.ContainsFunc(p.Notes, func(n string) bool {
			return strings.HasPrefix(n, dir+": its type") && strings.Contains(n, "expands to more than")
		}) {
			t.Errorf("notes %q do not say %s's types expand too far", p.Notes, dir)
		}
	}
	typed := typedPaths(p)
	for _, pkg := range p.Repaired {
		typed = append(typed, pkg.PkgPath)
	}
	slices.Sort(typed)
	if want := []string{"example.com/split/a", "example.com/split/b", "example.com/split/c", "example.com/split/ok"}; !slices.Equal(typed, want) {
		t.Errorf("type-checked %v, want %v (fallback %v)", typed, want, fallback)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "quorum-tree-*"))
	if err != nil || len(left) > 0 {
		t.Errorf("left behind: %v (%v)", left, err)
	}
}

// typedPaths returns the import paths of a program's type-checked
// packages, sorted.
func typedPaths(p *goanalysis.Program) []string {
	var typed []string
	for _, pkg := range p.Packages {
		typed = append(typed, pkg.PkgPath)
	}
	slices.Sort(typed)
	return typed
}

// fallbackReasons returns why each package analysed syntax-only was, by
// directory.
func fallbackReasons(p *goanalysis.Program) map[string]string {
	fallback := map[string]string{}
	for _, f := range p.Fallback {
		fallback[f.Dir] = f.Reason
	}
	return fallback
}

// What the type checker is given is bounded in bytes: a package whose
// files do not fit is analysed syntax-only, not type-checked with files
// missing, and the review says the limit was reached.
func TestLoadCapsTheBytesCopied(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/big"),
		"big/b.go":   "package big\n",
		"big/c.go":   "package big\n\nconst C = 1\n",
		"small/s.go": "package small\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{
		"big/b.go":   "package big\n\n// " + strings.Repeat("x", 5000) + "\nconst B = C\n",
		"small/s.go": "package small\n\nfunc S() int { return 2 }\n",
	})
	head := r.Commit("head")
	p, err := goanalysis.NewLoader(goanalysis.Config{MaxTreeBytes: 4096}).Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if typed := typedPaths(p); !slices.Equal(typed, []string{"example.com/big/small"}) {
		t.Errorf("type-checked %v, want small alone", typed)
	}
	const limit = "reached their limit of 4096 bytes"
	if why := fallbackReasons(p)["big"]; !strings.Contains(why, limit) {
		t.Errorf("fallback of big = %q, want it to say %q", why, limit)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], limit) {
		t.Errorf("Notes = %q, want the limit said", p.Notes)
	}
	ds, err := p.Analyze(context.Background(), []*analysis.Analyzer{goanalysis.TypeCheck}, nil)
	if err != nil || len(ds) != 0 {
		t.Errorf("type errors %v (%v): a package missing files was type-checked", ds, err)
	}
}

// A load with tests parses the test main the go command generates in its
// build cache: go/packages logged "internal error: … is outside the tree,
// GOROOT and the module cache" on every such review (spf13/cobra's).
// Not parallel: it reads what the standard logger writes.
func TestLoadReadsTheGeneratedTestMain(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":      goanalysistest.GoMod("example.com/testmain"),
		"s/s.go":      "package s\n\nfunc S() int { return 1 }\n",
		"s/s_test.go": "package s\n\nimport \"testing\"\n\nfunc TestS(t *testing.T) { _ = S() }\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"s/s_test.go": "package s\n\nimport \"testing\"\n\nfunc TestS(t *testing.T) {\n\tif S() != 1 {\n\t\tt.Fatal(S())\n\t}\n}\n"})
	head := r.Commit("head")
	p, err := goanalysistest.Loader().Load(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if p.SyntaxOnly != "" {
		t.Fatalf("syntax-only: %s", p.SyntaxOnly)
	}
	if strings.Contains(logged.String(), "outside the tree") {
		t.Errorf("the load logged %q", logged.String())
	}
}
