package goanalysis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// lib is the private module the tests' repositories need.
func lib() goanalysistest.Module {
	return goanalysistest.Module{Path: "corp.example/lib", Version: "v1.0.0", Files: map[string]string{
		"lib.go": "package lib\n\n// Greeting is a greeting.\nfunc Greeting() string { return \"hi\" }\n",
	}}
}

// fetchChange is a change of app/app.go in a module whose go.mod is
// goMod; the head's app.go imports imports.
func fetchChange(t *testing.T, goMod string, imports ...string) *change.Change {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goMod, "app/app.go": "package app\n\nfunc A() int { return 1 }\n"})
	base := r.Commit("base")
	src := "package app\n\nimport (\n"
	for _, ip := range imports {
		src += "\t\"" + ip + "\"\n"
	}
	src += ")\n\nfunc A() int { return 2 }\n\nvar _ = []any{"
	for _, ip := range imports {
		src += filepath.Base(ip) + ".Greeting, "
	}
	src += "}\n"
	r.Write(map[string]string{"app/app.go": src})
	return r.Change(base, r.Commit("head"))
}

func requireLine(mods ...string) string {
	return "module example.com/app\n\ngo 1.22\n\nrequire (\n\t" + strings.Join(mods, "\n\t") + "\n)\n"
}

// loadWith loads c with cfg, its caches the test's own.
func loadWith(t *testing.T, cfg goanalysis.Config, c *change.Change) *goanalysis.Program {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := goanalysis.NewLoader(cfg)
	p, err := l.Load(ctx, c)
	// The prune a review starts when it ends holds the module cache's
	// lock: a test that prunes or locks the cache itself must not meet it.
	l.WaitPruningForTest()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// reasons joins the reasons of the program's syntax-only packages.
func reasons(p *goanalysis.Program) string {
	var out []string
	for _, f := range p.Fallback {
		out = append(out, f.Dir+": "+f.Reason)
	}
	return strings.Join(out, "\n")
}

func TestFetchLoadsWhatTheProxyServes(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, lib())
	modCache := t.TempDir()
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: modCache}, c)
	if len(p.Fallback) > 0 || len(p.Packages) == 0 {
		t.Fatalf("app was not type-checked: %s", reasons(p))
	}
	if !slices.Contains(proxy.Requests(), "/corp.example/lib/@v/v1.0.0.zip") {
		t.Errorf("the proxy was not asked for the module's zip: %v", proxy.Requests())
	}
	if _, err := os.Stat(filepath.Join(modCache, "corp.example", "lib@v1.0.0", "lib.go")); err != nil {
		t.Errorf("the module is not in the module cache: %v", err)
	}
}

// Without a module cache named, a loader that fetches uses one of its
// own under its cache directory, never the user's, which the sandbox's
// user would then write.
func TestFetchIntoItsOwnModCache(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, lib())
	cacheDir := t.TempDir()
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", CacheDir: cacheDir}, c)
	if len(p.Fallback) > 0 {
		t.Fatalf("app was not type-checked: %s", reasons(p))
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "mod", "corp.example", "lib@v1.0.0", "lib.go")); err != nil {
		t.Errorf("the module is not in the loader's own module cache: %v", err)
	}
}

// The proxies of the list are tried in order: past a 404 after ",", past
// any error after "|"; "direct" is never a fetch from version control.
func TestFetchTriesTheProxiesInOrder(t *testing.T) {
	t.Parallel()
	empty := goanalysistest.NewGoProxy(t)
	private := goanalysistest.NewGoProxy(t, lib())
	private.RequireAuth("reviewer", "s3cret")
	public := goanalysistest.NewGoProxy(t, lib())
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	// The private proxy answers 401 without credentials: after "|" the
	// public one is tried.
	list := "direct," + empty.URL + "," + private.URL + "|" + public.URL
	p := loadWith(t, goanalysis.Config{GoProxy: list, GoPrivate: "corp.example", ModCache: t.TempDir()}, c)
	if len(p.Fallback) > 0 || len(p.Packages) == 0 {
		t.Fatalf("app was not type-checked: %s", reasons(p))
	}
	for _, proxy := range []*goanalysistest.GoProxy{empty, private, public} {
		if len(proxy.Requests()) == 0 {
			t.Errorf("%s was not asked", proxy.URL)
		}
	}
	// After ",", a 401 ends the list.
	list = empty.URL + "," + private.URL + "," + public.URL
	p = loadWith(t, goanalysis.Config{GoProxy: list, GoPrivate: "corp.example", ModCache: t.TempDir()}, c)
	if why := reasons(p); !strings.Contains(why, "401 Unauthorized") {
		t.Errorf("past a 401 after \",\", the next proxy was tried: %s", why)
	}
}

func TestFetchNamesAModuleNotServed(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, lib())
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0", "corp.example/secret v1.2.0"), "corp.example/lib", "corp.example/secret")
	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir()}, c)
	wantReasons(t, p, "module corp.example/secret@v1.2.0 could not be had", "404 Not Found", "--go-private", "e.g. corp.example)", "--go-netrc")
	if why := reasons(p); strings.Contains(why, "go list") || strings.Contains(why, "file://") {
		t.Errorf("the reason is the go command's error: %s", why)
	}
}

// A module whose zip does not match the repository's go.sum is named,
// with what the mismatch means.
func TestFetchNamesAChecksumMismatch(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, lib())
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     requireLine("corp.example/lib v1.0.0"),
		"go.sum":     "corp.example/lib v1.0.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
		"app/app.go": "package app\n\nimport \"corp.example/lib\"\n\nvar _ = lib.Greeting\n\nfunc A() int { return 1 }\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"app/app.go": "package app\n\nimport \"corp.example/lib\"\n\nvar _ = lib.Greeting\n\nfunc A() int { return 2 }\n"})
	c := r.Change(base, r.Commit("head"))
	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir()}, c)
	wantReasons(t, p, "module corp.example/lib@v1.0.0 could not be had", "checksum mismatch", "not to be trusted")
}

// A private proxy asks for credentials: quorum sends those of the
// operator's netrc for its host, and without them names the module with
// what to configure.
func TestFetchSendsTheNetrcCredentials(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, lib())
	proxy.RequireAuth("reviewer", "s3cret")
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")

	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir()}, c)
	why := reasons(p)
	t.Log(why)
	for _, want := range []string{"module corp.example/lib@v1.0.0 could not be had", "401 Unauthorized", "--go-netrc"} {
		if !strings.Contains(why, want) {
			t.Errorf("without credentials, the reason does not say %q: %s", want, why)
		}
	}

	netrc := filepath.Join(t.TempDir(), "netrc")
	host := strings.TrimPrefix(proxy.URL, "http://")
	host = host[:strings.LastIndex(host, ":")]
	if err := os.WriteFile(netrc, []byte("machine other.example login x password y\nmachine "+host+"\n\tlogin reviewer\n\tpassword s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p = loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir(), Netrc: netrc}, c)
	if len(p.Fallback) > 0 || len(p.Packages) == 0 {
		t.Errorf("with the netrc, app was not type-checked: %s", reasons(p))
	}
}

func TestFetchStopsAtTheByteBound(t *testing.T) {
	t.Parallel()
	big := lib()
	noise := make([]byte, 256<<10)
	rand.Read(noise)
	big.Files["data.go"] = "package lib\n\nconst data = \"" + hex.EncodeToString(noise) + "\"\n"
	proxy := goanalysistest.NewGoProxy(t, big)
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir(), FetchMaxBytes: 64 << 10}, c)
	wantReasons(t, p, "module corp.example/lib@v1.0.0 could not be had", "download bound (64 KiB)", "--go-fetch-max-bytes")
}

func TestFetchTimesOut(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, lib())
	proxy.Hang()
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir(), FetchTimeout: time.Second}, c)
	wantReasons(t, p, "module corp.example/lib@v1.0.0 could not be had", "took longer than 1s", "--go-fetch-timeout")
}

func TestFetchOff(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, lib())
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	p := loadWith(t, goanalysis.Config{GoProxy: "off", GoPrivate: "corp.example", ModCache: t.TempDir()}, c)
	wantReasons(t, p, "module corp.example/lib@v1.0.0 could not be had", "fetching modules is off", "--go-proxy")
	if len(proxy.Requests()) > 0 {
		t.Errorf("off, the proxy was asked %v", proxy.Requests())
	}
}

// A type error that names no module ("undefined: lib", which sorts
// before the import's error) still says which modules the review lacks.
func TestFetchOffNamesTheModulesLacked(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     "module example.com/app\n\ngo 1.22\n\nrequire corp.example/lib/v2 v2.0.0\n",
		"app/app.go": "package app\n\nfunc A() int { return 1 }\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"app/app.go": "package app\n\n// A\n// long\n// comment\n// before\n// the\n// import.\nimport \"corp.example/lib/v2\"\n\nfunc A() int { return 2 }\n\nvar _ = lib.Greeting\n"})
	c := r.Change(base, r.Commit("head"))
	p := loadWith(t, goanalysis.Config{GoProxy: "off", ModCache: t.TempDir()}, c)
	wantReasons(t, p, "the review lacks modules its go.mod requires: corp.example/lib/v2@v2.0.0", "--go-proxy")
}

// A go.mod is the attacker's: it names a module no proxy serves (the go
// command would fetch it from version control, with "direct" in the
// operator's GOPROXY as is usual), asks for a toolchain that does not
// exist (the go command would download and run it), and replaces a
// module with a directory outside the tree. Nothing of that happens:
// the module is named in the review, no toolchain is asked for, nothing
// outside the tree is read and nothing is left outside the review's
// directories and the module cache.
func TestFetchAttackerGoMod(t *testing.T) {
	tmp := worldDir(t, "quorum-fetch-attack-")
	t.Setenv("TMPDIR", tmp)
	outside := filepath.Join(tmp, "outside")
	if err := os.MkdirAll(filepath.Join(outside, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	const marker = "QUORUM_OUTSIDE_7c1d"
	os.WriteFile(filepath.Join(outside, "lib", "go.mod"), []byte("module corp.example/lib\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "lib", "lib.go"), []byte("package lib\n\n// Greeting is "+marker+".\nfunc Greeting() string { return \""+marker+"\" }\n"), 0o644)
	proxy := goanalysistest.NewGoProxy(t, lib())
	goMod := "module example.com/app\n\ngo 1.22\n\ntoolchain go1.99.0\n\nrequire (\n\tcorp.example/lib v1.0.0\n\tvcs.example/evil v1.0.0\n)\n\nreplace corp.example/lib => " + filepath.Join(outside, "lib") + "\n"
	c := fetchChange(t, goMod, "corp.example/lib", "vcs.example/evil")
	modCache := filepath.Join(tmp, "modcache")
	cacheDir := filepath.Join(tmp, "cache")
	before := entries(t, tmp)
	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL + ",direct", GoPrivate: "corp.example,vcs.example", ModCache: modCache, CacheDir: cacheDir}, c)
	why := reasons(p)
	t.Log(why)
	if !strings.Contains(why, "module vcs.example/evil@v1.0.0 could not be had") {
		t.Errorf("the module no proxy serves is not named: %s", why)
	}
	for _, r := range proxy.Requests() {
		if strings.Contains(r, "toolchain") {
			t.Errorf("a toolchain was asked for: %s", r)
		}
	}
	for _, pkg := range p.Packages {
		for _, f := range pkg.GoFiles {
			if strings.HasPrefix(f, outside) {
				t.Errorf("a file outside the tree was loaded: %s", f)
			}
		}
	}
	if strings.Contains(why, marker) {
		t.Errorf("the review read outside the tree: %s", why)
	}
	after := entries(t, tmp)
	for _, e := range after {
		if !slices.Contains(before, e) && e != "modcache" && e != "cache" {
			t.Errorf("left behind in the temporary directory: %s", e)
		}
	}
	if got := entries(t, filepath.Join(outside, "lib")); len(got) != 2 {
		t.Errorf("written outside the tree: %v", got)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// The module cache quorum owns is pruned, least recently used first, and
// never while a review holds it.
func TestPruneModCache(t *testing.T) {
	t.Parallel()
	old := goanalysistest.Module{Path: "corp.example/old", Version: "v1.0.0", Files: map[string]string{
		"old.go": "package old\n\n// Greeting is a greeting.\nfunc Greeting() string { return \"hi\" }\n",
	}}
	noise := make([]byte, 256<<10)
	rand.Read(noise)
	old.Files["data.go"] = "package old\n\nconst data = \"" + hex.EncodeToString(noise) + "\"\n"
	proxy := goanalysistest.NewGoProxy(t, lib(), old)
	modCache := t.TempDir()
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0", "corp.example/old v1.0.0"), "corp.example/lib", "corp.example/old")
	if p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: modCache, ModCacheMaxBytes: 1 << 40}, c); len(p.Fallback) > 0 {
		t.Fatalf("app was not type-checked: %s", reasons(p))
	}
	oldDir := filepath.Join(modCache, "corp.example", "old@v1.0.0")
	libDir := filepath.Join(modCache, "corp.example", "lib@v1.0.0")
	long := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{oldDir, filepath.Join(modCache, "cache", "download", "corp.example", "old", "@v", "v1.0.0.zip")} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}

	// A review holds it: nothing is removed.
	lock, err := os.Open(filepath.Join(modCache, ".quorum-lock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	if n, err := goanalysis.PruneModCache(modCache, 64<<10); err != nil || n != 0 {
		t.Errorf("pruned %d bytes (%v) while a review holds the cache", n, err)
	}
	// Unlocked before it is closed: a process another test forks holds
	// the open file until it execs.
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	lock.Close()

	n, err := goanalysis.PruneModCache(modCache, 64<<10)
	if err != nil || n < 256<<10 {
		t.Errorf("pruned %d bytes (%v), want the old module's", n, err)
	}
	if _, err := os.Stat(oldDir); err == nil {
		t.Error("the least recently used module is still there")
	}
	if _, err := os.Stat(filepath.Join(libDir, "lib.go")); err != nil {
		t.Errorf("the recently used module was removed: %v", err)
	}
}

// After a review, the loader prunes its module cache past its bound.
func TestLoaderPrunesItsModCache(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, lib())
	modCache := t.TempDir()
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	l := goanalysis.NewLoader(goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: modCache, ModCacheMaxBytes: 1, CacheDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := l.Load(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Fallback) > 0 {
		t.Fatalf("app was not type-checked: %s", reasons(p))
	}
	// The pruning runs on its own once the review let the cache go.
	l.WaitPruningForTest()
	if _, err := os.Stat(filepath.Join(modCache, "corp.example", "lib@v1.0.0")); err == nil {
		t.Error("a module is still in a module cache bounded to 1 byte")
	}
}

// Without bubblewrap there is no sandbox whose network is a loopback of
// its own: nothing is fetched, rather than the go command given the
// host's network, and the review says what to install. The test runs
// itself again with bwrap gone from PATH (the sandbox probes once per
// process).
func TestFetchWithoutBubblewrap(t *testing.T) {
	if os.Getenv("QUORUM_TEST_NO_BWRAP") == "" {
		bin := t.TempDir()
		for _, d := range []string{"/usr/bin", "/usr/sbin"} {
			entries, err := os.ReadDir(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() == "bwrap" {
					continue
				}
				os.Symlink(filepath.Join(d, e.Name()), filepath.Join(bin, e.Name()))
			}
		}
		var path []string
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if _, err := os.Stat(filepath.Join(d, "bwrap")); err == nil {
				d = bin
			}
			path = append(path, d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFetchWithoutBubblewrap$", "-test.v")
		cmd.Env = append(os.Environ(), "QUORUM_TEST_NO_BWRAP=1", "PATH="+strings.Join(path, string(os.PathListSeparator)))
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil {
			t.Fatalf("without bubblewrap: %v", err)
		}
		return
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		t.Fatal("bwrap is still on PATH")
	}
	proxy := goanalysistest.NewGoProxy(t, lib())
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	p := loadWith(t, goanalysis.Config{GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir()}, c)
	why := reasons(p)
	t.Log(why)
	if len(proxy.Requests()) > 0 {
		t.Errorf("without bubblewrap, the fetch reached the proxy: %v", proxy.Requests())
	}
	for _, want := range []string{"modules are not fetched without bubblewrap", "install bubblewrap"} {
		if !strings.Contains(why, want) {
			t.Errorf("the reason does not say %q: %s", want, why)
		}
	}
}

// serve prepares a loader that fetches at start: the bridge the first
// fetch needs is built then, not during the first review. Not parallel:
// it puts another cache directory in place for the bridge.
func TestPrepareBuildsTheBridge(t *testing.T) {
	dir := t.TempDir()
	defer goanalysis.FreshBridgeForTest(dir)()
	off := goanalysis.NewLoader(goanalysis.Config{GoProxy: "off", CacheDir: t.TempDir()})
	if err := off.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	if built, _ := filepath.Glob(filepath.Join(dir, "quorum", "go-bridge", "*", "bridge")); len(built) != 0 {
		t.Fatalf("a loader that fetches nothing built the bridge: %v", built)
	}
	l := goanalysis.NewLoader(goanalysis.Config{GoProxy: "http://127.0.0.1:9", CacheDir: t.TempDir()})
	if err := l.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	if built, _ := filepath.Glob(filepath.Join(dir, "quorum", "go-bridge", "*", "bridge")); len(built) != 1 {
		t.Fatalf("Prepare built no bridge under %s", dir)
	}
}

// go.mod files, lists of versions and the checksum database's tiles count
// toward the bound and may go too: a pull request can make a fetch
// download many go.mod files, and when they alone passed the bound every
// prune removed every module, the one just used first among them.
func TestPruneModCacheRemovesModFilesToo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dl := filepath.Join(dir, "cache", "download")
	long := time.Now().Add(-time.Hour)
	write := func(rel string, size int, at time.Time) {
		p := filepath.Join(dl, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	// A flood of old go.mod files a pull request asked for.
	for i := range 8 {
		write(fmt.Sprintf("example.com/flood/@v/v1.0.%d.mod", i), 1000, long)
	}
	write("example.com/flood/@v/list", 500, long)
	write("sumdb/sum.golang.org/tile/8/0/000", 1000, long)
	// The module the last review used.
	write("example.com/new/@v/v1.0.0.mod", 100, now)
	write("example.com/new/@v/v1.0.0.zip", 1000, now)
	if _, err := goanalysis.PruneModCache(dir, 3000); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dl, "example.com", "new", "@v", "v1.0.0.zip")); err != nil {
		t.Errorf("the most recently used module was removed: %v", err)
	}
	var left int64
	filepath.WalkDir(dl, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				left += fi.Size()
			}
		}
		return nil
	})
	if left > 3000 {
		t.Errorf("%d bytes were kept, past the bound of 3000", left)
	}
}

// wantReasons checks that why p's packages were not analysed says each
// of wants.
func wantReasons(t *testing.T, p *goanalysis.Program, wants ...string) {
	t.Helper()
	why := reasons(p)
	t.Log(why)
	for _, want := range wants {
		if !strings.Contains(why, want) {
			t.Errorf("the reason does not say %q: %s", want, why)
		}
	}
}

// A fetch whose go command fails without naming a module (it could not
// start, its sandbox did not) is the reason the module is lacking, not
// what the offline load makes of the hole ("could not import
// corp.example/lib (invalid package name: "")"): its error, not its
// lines of progress.
func TestFetchFailureIsNamed(t *testing.T) {
	t.Parallel()
	base := worldDir(t, "quorum-go-fetch-")
	goExe := standInGo(t, base, `case "$GOPROXY" in *http://*) printf 'go: downloading corp.example/lib v1.0.0\nquorum-stand-in: the fetch broke\ngo: finding module for package corp.example/other\n' >&2; exit 2 ;; esac
exec `+goRoot(t)+`/bin/go "$@"
`)
	proxy := goanalysistest.NewGoProxy(t, lib())
	c := fetchChange(t, requireLine("corp.example/lib v1.0.0"), "corp.example/lib")
	p := loadWith(t, goanalysis.Config{Go: goExe, GoProxy: proxy.URL, GoPrivate: "corp.example", ModCache: t.TempDir()}, c)
	wantReasons(t, p, "module corp.example/lib@v1.0.0 could not be had", "the fetch's go command failed: quorum-stand-in: the fetch broke", "go mod download")
}
