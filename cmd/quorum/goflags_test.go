package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// A module the proxy does not serve is named in the review's summary with
// what to configure, and the review is incomplete (exit 3); the module
// the proxy serves is fetched into the module cache given.
func TestReviewNamesAModuleItCannotFetch(t *testing.T) {
	t.Parallel()
	proxy := goanalysistest.NewGoProxy(t, goanalysistest.Module{Path: "corp.example/lib", Version: "v1.0.0", Files: map[string]string{
		"lib.go": "package lib\n\n// Greeting is a greeting.\nfunc Greeting() string { return \"hi\" }\n",
	}})
	goMod := "module example.com/app\n\ngo 1.22\n\nrequire (\n\tcorp.example/lib v1.0.0\n\tcorp.example/secret v1.2.0\n)\n"
	dir := gitRepo(t, map[string]string{"go.mod": goMod, "app/app.go": "package app\n\nfunc A() int { return 1 }\n"},
		map[string]string{"app/app.go": "package app\n\nimport (\n\t\"corp.example/lib\"\n\t\"corp.example/secret\"\n)\n\nvar _, _ = lib.Greeting, secret.Greeting\n\nfunc A() int { return 2 }\n"})
	modCache := t.TempDir()
	stdout, stderr, code := reviewRun(t, "--repo", dir, "--base", "main", "--go-proxy", proxy.URL, "--go-private", "corp.example", "--go-modcache", modCache)
	if code != 3 {
		t.Fatalf("exit %d, want 3 (not analysed); stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"module corp.example/secret@v1.2.0 could not be had", "answered 404 Not Found", "--go-private", "--go-netrc"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary does not say %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "go list") {
		t.Errorf("the summary shows the go command's error:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(modCache, "corp.example", "lib@v1.0.0", "lib.go")); err != nil {
		t.Errorf("the module served is not in the module cache: %v", err)
	}
}

// serve takes the Go fetch settings from its environment, and refuses a
// proxy list it cannot fetch through, or a netrc that is not there, at
// start.
func TestServeGoFetchSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, value, want string }{
		{"QUORUM_GO_PROXY", "ftp://proxy.example", "--go-proxy"},
		{"QUORUM_GO_NETRC", filepath.Join(t.TempDir(), "missing"), "--go-netrc"},
	} {
		_, _, err := quorum(t, env("QUORUM_DATA_DIR", t.TempDir(), tc.key, tc.value), "serve", "--addr", "127.0.0.1:0")
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: serve returned %v, want a usage error naming %s", tc.key, tc.value, err, tc.want)
		}
	}
}

// quorum prunes the module cache it owns; one the operator names (the
// host's GOMODCACHE, say) only when told to.
func TestGoFlagsPruneOnlyQuorumsOwnCache(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  []string
		want int64
	}{
		{nil, nil, defaultModCacheMax},
		{[]string{"--go-modcache", "/srv/gomod"}, nil, 0},
		{[]string{"--go-modcache", "/srv/gomod", "--go-modcache-max-bytes", "1000"}, nil, 1000},
		{[]string{"--go-modcache", "/srv/gomod"}, []string{"QUORUM_GO_MODCACHE_MAX_BYTES", "2000"}, 2000},
	} {
		c := newCommand("review", "quorum review [flags]", "")
		g := addGoFlags(c, "")
		getenv := func(k string) string {
			for i := 0; i+1 < len(tc.env); i += 2 {
				if tc.env[i] == k {
					return tc.env[i+1]
				}
			}
			return ""
		}
		if err := c.parse(tc.args, getenv, io.Discard); err != nil {
			t.Fatal(err)
		}
		cfg, err := g.config("/own/mod", "")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.ModCacheMaxBytes != tc.want {
			t.Errorf("%q %q: prune past %d bytes, want %d", tc.args, tc.env, cfg.ModCacheMaxBytes, tc.want)
		}
	}
}
