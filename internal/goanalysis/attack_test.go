package goanalysis_test

import (
	"context"
	"go/ast"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// quorum, unconfined (root), reads the tree once go list has answered. A
// go command that plays the attacker (arbitrary code in the sandbox) tries
// to leave a symbolic link where a file of the package was, so that quorum
// would read, outside the sandbox, the host file it names, and what it
// read would reach the review. The tree is read-only to the go command:
// the sandbox is not a way to read the host through quorum.
func TestGoCommandCannotMakeQuorumReadTheHost(t *testing.T) {
	base := worldDir(t, "quorum-go-symlink-")
	// A host file the sandbox does not show (root's, like quorum's
	// configuration or data).
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	const secret = "QUORUM_HOST_SECRET_5e2f"
	secretFile := filepath.Join(outside, "secret")
	// Another review's Go file, say, or any file of the host's.
	if err := os.WriteFile(secretFile, []byte("package p\n\nconst Token = \""+secret+"\"\n\nfunc F() {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	goroot := goRoot(t)
	// Confined, it runs the real go command, then swaps the package's
	// file for a link to the host's secret.
	goExe := standInGo(t, base, `case "$*" in *-json*) [ -L p/p.go ] && mv -f p/.orig p/p.go;; esac
`+goroot+`/bin/go "$@"
rc=$?
case "$*" in *-json*) [ -f p/p.go ] && cp p/p.go p/.orig && ln -sf `+secretFile+` p/p.go;; esac
exit $rc
`)
	ch := probeChange(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := goanalysis.NewLoader(goanalysis.Config{Go: goExe, CacheDir: t.TempDir()}).Load(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Fallback {
		t.Logf("fallback %s: %s", f.Dir, f.Reason)
		if strings.Contains(f.Reason, secret) {
			t.Errorf("quorum read the host's %s through a link the sandboxed go command left in its tree: %q", secretFile, f.Reason)
		}
	}
	for _, pkg := range p.Packages {
		for _, f := range pkg.Syntax {
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok {
					for _, s := range g.Specs {
						if v, ok := s.(*ast.ValueSpec); ok && len(v.Values) > 0 {
							if l, ok := v.Values[0].(*ast.BasicLit); ok && strings.Contains(l.Value, secret) {
								t.Errorf("quorum read and parsed (as the package's p/p.go) the host's %s through a link the sandboxed go command left in its tree", secretFile)
							}
						}
					}
				}
			}
		}
	}
}

// The dispatcher that confines the go command is installed once per
// process, in the first loader's cache directory, and go/packages finds it
// by PATH. When that directory is gone (another loader's, a cache cleaned,
// a test's temporary directory) or a later loader has a cache directory of
// its own, "go" on PATH is the real go command: the load's go command then
// runs unconfined, as root, and nothing says so. A second load must be as
// confined as the first.
func TestGoCommandStaysConfinedWhenTheFirstCacheDirIsGone(t *testing.T) {
	base := worldDir(t, "quorum-go-dispatch-")
	// The go command says which user runs it, and fails.
	goExe := standInGo(t, base, `echo "probe uid=$(id -u)" >&2
exit 1
`)
	ch := probeChange(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, what := range []string{"first load", "load after the first loader's cache directory is gone"} {
		cacheDir, err := os.MkdirTemp("", "quorum-go-cache-")
		if err != nil {
			t.Fatal(err)
		}
		p, err := goanalysis.NewLoader(goanalysis.Config{Go: goExe, CacheDir: cacheDir}).Load(ctx, ch)
		os.RemoveAll(cacheDir)
		if err != nil {
			t.Fatal(err)
		}
		why := fallbackReasons(p)["p"]
		t.Logf("%s: package p: %q", what, why)
		switch {
		case strings.Contains(why, "probe uid=0"):
			t.Errorf("%s: the go command ran as root", what)
		case !strings.Contains(why, "probe uid="):
			t.Errorf("%s: the go command the loader was given did not run (%q): a go command other than the sandbox's ran", what, why)
		}
	}
}

// The loader type-checks the files go list names. A go command that
// plays the attacker names, as a file of the changed package and as one
// of a standard-library package it imports, host files the sandbox does
// not show: quorum must not read them, for the package's types or for
// the dependency's, and says the package did not load.
func TestGoListCannotNameAHostFileToTypeCheck(t *testing.T) {
	t.Parallel()
	base := worldDir(t, "quorum-go-names-")
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	const secret = "QUORUM_HOST_SECRET_91ac"
	own, dep := filepath.Join(outside, "secret_p.go"), filepath.Join(outside, "secret_strings.go")
	for file, pkg := range map[string]string{own: "p", dep: "strings"} {
		if err := os.WriteFile(file, []byte("package "+pkg+"\n\nconst Token = \""+secret+"\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	goExe := standInGo(t, base, `out=$(`+goRoot(t)+`/bin/go "$@"); rc=$?
printf '%s\n' "$out" | sed -e 's#"q.go"#"`+own+`"#g' -e 's#"builder.go"#"`+dep+`"#g'
exit $rc
`)
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/probe"), "p/p.go": "package p\n", "p/q.go": "package p\n"})
	prev := r.Commit("base")
	r.Write(map[string]string{"p/p.go": "package p\n\nimport \"strings\"\n\nfunc F() string { return strings.ToUpper(\"x\") }\n"})
	ch := r.Change(prev, r.Commit("head"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := goanalysis.NewLoader(goanalysis.Config{Go: goExe, CacheDir: t.TempDir()}).Load(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Fallback) != 1 || p.Fallback[0].Dir != "p" || !strings.Contains(p.Fallback[0].Reason, "secret_p.go:1: outside the tree") {
		t.Errorf("p loaded with a file go list named outside the tree: %+v (%d packages repaired)", p.Fallback, len(p.Repaired))
	}
	for _, f := range p.Fallback {
		if strings.Contains(f.Reason, secret) {
			t.Errorf("the host's file reached the review: %q", f.Reason)
		}
	}
	seen := map[*packages.Package]bool{}
	packages.Visit(slices.Concat(p.Packages, p.Partial), func(pkg *packages.Package) bool {
		seen[pkg] = true
		return true
	}, nil)
	found := false
	for pkg := range seen {
		found = found || pkg.PkgPath == "strings"
		if pkg.Types != nil && pkg.Types.Scope().Lookup("Token") != nil {
			t.Errorf("%s declares the host file's Token: quorum type-checked it", pkg.PkgPath)
		}
	}
	if !found {
		t.Errorf("strings is not in the program: the dependency's half was not tried (%d packages)", len(seen))
	}
}

// A go command in the sandbox fills the module cache that later reviews
// read, and one that plays the attacker may leave there a link to a host
// file, then name it as a module's file: quorum, reading what go list
// names, must not follow a link out of the module cache.
func TestModuleCacheLinkIsNotFollowed(t *testing.T) {
	t.Parallel()
	base := worldDir(t, "quorum-modcache-link-")
	const secret = "QUORUM_HOST_SECRET_77d0"
	secretFile := filepath.Join(base, "secret.go")
	if err := os.WriteFile(secretFile, []byte("package lib\n\n// Greeting is the host's.\nfunc Greeting() string { return \""+secret+"\" }\n\nconst Token = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	proxy := goanalysistest.NewGoProxy(t, goanalysistest.Module{Path: "corp.example/lib", Version: "v1.0.0", Files: map[string]string{
		"lib.go": "package lib\n\n// Greeting is a greeting.\nfunc Greeting() string { return \"hi\" }\n",
	}})
	modCache := t.TempDir()
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	cfg := goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: modCache}
	if p := loadWith(t, cfg, c); len(p.Fallback) > 0 {
		t.Fatalf("app did not load with the module as fetched: %s", reasons(p))
	}
	// What an earlier review's go command left, and what this one's says.
	dir := filepath.Join(modCache, "corp.example", "lib@v1.0.0")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretFile, filepath.Join(dir, "evil.go")); err != nil {
		t.Fatal(err)
	}
	cfg.Go = standInGo(t, base, `out=$(`+goRoot(t)+`/bin/go "$@"); rc=$?
printf '%s\n' "$out" | sed -e 's#"lib.go"#"evil.go"#g'
exit $rc
`)
	p := loadWith(t, cfg, c)
	why := reasons(p)
	if strings.Contains(why, secret) {
		t.Errorf("the host's file reached the review: %s", why)
	}
	if len(p.Fallback) == 0 {
		t.Errorf("app loaded whole: the module's linked file was read")
	}
	packages.Visit(slices.Concat(p.Packages, p.Partial), nil, func(pkg *packages.Package) {
		if pkg.Types != nil && pkg.Types.Scope().Lookup("Token") != nil {
			t.Errorf("%s declares the host file's Token: quorum followed the link", pkg.PkgPath)
		}
	})
}
