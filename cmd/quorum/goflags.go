package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/goanalysis"
)

// goFlags say how the Go analysis fetches the modules a change needs
// (docs/go-analysis.md, "Fetching modules").
type goFlags struct {
	c                               *command
	proxy, private, netrc, modCache *string
	timeout                         *time.Duration
	maxBytes, modCacheMax           *int
}

// defaultModCacheMax bounds the module cache quorum owns.
const defaultModCacheMax = 10 << 30

// addGoFlags adds the Go fetch flags; where says where the module cache
// quorum owns is by default.
func addGoFlags(c *command, where string) goFlags {
	return goFlags{
		c:           c,
		proxy:       c.String("go-proxy", "QUORUM_GO_PROXY", goanalysis.DefaultGoProxy, "module proxies (a GOPROXY list) the Go modules a change needs are fetched through, checked against the checksum database, before its packages are loaded; \"off\": nothing is fetched (air-gapped: the module cache is used as it is). No version control, no toolchain download, nothing of the repository runs"),
		private:     c.String("go-private", "QUORUM_GO_PRIVATE", "", "module path patterns (GOPRIVATE's syntax: corp.example.com,github.com/org/*) of private modules: not checked against the public checksum database (GONOSUMDB); a proxy of --go-proxy must serve them, and is tried in the list's order"),
		netrc:       c.String("go-netrc", "QUORUM_GO_NETRC", "", "netrc file with the credentials (machine, login, password) of the module proxies; quorum sends them to those hosts, the go command never sees them"),
		timeout:     c.Duration("go-fetch-timeout", "QUORUM_GO_FETCH_TIMEOUT", goanalysis.DefaultFetchTimeout, "time limit of fetching one change's modules"),
		maxBytes:    c.Int("go-fetch-max-bytes", "QUORUM_GO_FETCH_MAX_BYTES", goanalysis.DefaultFetchMaxBytes, "bytes one change's fetch may download; past it the modules left are named in the review"),
		modCache:    c.String("go-modcache", "QUORUM_GO_MODCACHE", "", "the module cache the Go analysis loads from and fetches into (default with --go-proxy: "+where+"; with --go-proxy off: the go command's GOMODCACHE)"),
		modCacheMax: c.Int("go-modcache-max-bytes", "QUORUM_GO_MODCACHE_MAX_BYTES", defaultModCacheMax, "size past which the least recently used modules are removed from quorum's own module cache, between reviews (0: never); a cache --go-modcache names is pruned only when this is given"),
	}
}

// config returns the Go analysis' configuration; ownCache is the
// default module cache quorum owns, seed a module cache read before the
// proxies ("" for none).
func (g goFlags) config(ownCache, seed string) (goanalysis.Config, error) {
	if *g.timeout <= 0 || *g.maxBytes <= 0 || *g.modCacheMax < 0 {
		return goanalysis.Config{}, usageError{fmt.Errorf("--go-fetch-timeout and --go-fetch-max-bytes must be positive, --go-modcache-max-bytes 0 or more")}
	}
	if err := goanalysis.CheckGoProxy(*g.proxy); err != nil {
		return goanalysis.Config{}, usageError{fmt.Errorf("--go-proxy: %w", err)}
	}
	if *g.netrc != "" {
		if _, err := os.Stat(*g.netrc); err != nil {
			return goanalysis.Config{}, usageError{fmt.Errorf("--go-netrc: %w", err)}
		}
	}
	cfg := goanalysis.Config{
		GoProxy:       strings.TrimSpace(*g.proxy),
		GoPrivate:     *g.private,
		Netrc:         *g.netrc,
		FetchTimeout:  *g.timeout,
		FetchMaxBytes: int64(*g.maxBytes),
		ModCache:      *g.modCache,
	}
	if cfg.GoProxy == "off" {
		// Air-gapped: the module cache is only read, never pruned.
		return cfg, nil
	}
	if cfg.ModCache == "" {
		cfg.ModCache = ownCache
		cfg.SeedModCache = seed
	}
	if *g.modCache == "" || g.c.given("go-modcache-max-bytes") {
		// A cache the operator names may be another's (the host's
		// GOMODCACHE): quorum prunes it only when told to.
		cfg.ModCacheMaxBytes = int64(*g.modCacheMax)
	}
	return cfg, nil
}

// userModCache is the go command's GOMODCACHE, "" when there is no go
// command.
func userModCache() string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// ownModCacheHelp says where ownModCache is, for the flag's help.
const ownModCacheHelp = "$XDG_CACHE_HOME/quorum/go/mod, i.e. ~/.cache/quorum/go/mod (the service unit's /var/cache/quorum/go/mod)"

// ownModCache is quorum's own module cache, under the user's cache
// directory (XDG's; the service unit sets XDG_CACHE_HOME to its
// CacheDirectory).
func ownModCache(getenv func(string) string) string {
	base := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		if home := getenv("HOME"); filepath.IsAbs(home) {
			base = filepath.Join(home, ".cache")
		} else if base, _ = os.UserCacheDir(); base == "" {
			base = os.TempDir()
		}
	}
	return filepath.Join(base, "quorum", "go", "mod")
}
