package goanalysis

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/quorum-review/quorum/internal/sandbox"
)

// Before the offline load, the modules the changed packages need are
// fetched (docs/go-analysis.md, "Fetching modules"): the go command lists
// the changed packages with their dependencies (go list -e -deps), in its
// sandbox, into the module cache, with GOPROXY a forwarding proxy that
// quorum runs for that one fetch on a Unix socket, which the go command,
// with no network but its sandbox's own loopback, reaches only through
// the bridge (confine.go) listening there. The proxy forwards the
// GOPROXY protocol (go help goproxy) and the checksum database's
// (/sumdb/<name>/…) to the operator's proxies, adds the operator's
// credentials (a netrc) on the way out, so they never enter the sandbox,
// counts the bytes and refuses past the review's bound, and remembers
// which module versions it could not serve, and why, so that the review
// names them with what to configure. The go command itself is given
// nothing else to reach: GOVCS=*:off, GOTOOLCHAIN=local, GONOPROXY empty.

// Defaults of a fetch.
const (
	// DefaultGoProxy is the module proxy the commands fetch through.
	DefaultGoProxy = "https://proxy.golang.org"
	// DefaultFetchTimeout bounds fetching one change's modules.
	DefaultFetchTimeout = 3 * time.Minute
	// DefaultFetchMaxBytes bounds the bytes one change's fetch downloads.
	DefaultFetchMaxBytes = 512 << 20
	// sumDB is the checksum database the fetched modules are checked
	// against.
	sumDB = "sum.golang.org"
)

// fetching reports whether the loader fetches modules before a load.
func (c Config) fetching() bool {
	return c.GoProxy != "" && c.GoProxy != "off"
}

// CheckGoProxy reports whether list is a GOPROXY list quorum can fetch
// through: http or https URLs, "direct" (ignored) and "off".
func CheckGoProxy(list string) error {
	_, err := upstreams(list)
	return err
}

// upstream is one entry of the operator's GOPROXY list.
type upstream struct {
	url string
	// anyError says the next entry is tried on any error (a "|" after
	// it), not only on 404 and 410 (a ",").
	anyError bool
}

// upstreams parses a GOPROXY list. "direct" is left out (quorum never
// fetches from version control); "off" ends it.
func upstreams(list string) ([]upstream, error) {
	var out []upstream
	for list != "" {
		i := strings.IndexAny(list, ",|")
		entry, sep := list, byte(0)
		if i >= 0 {
			entry, sep, list = list[:i], list[i], list[i+1:]
		} else {
			list = ""
		}
		entry = strings.TrimSpace(entry)
		switch entry {
		case "":
			continue
		case "off":
			return out, nil
		case "direct":
			continue
		}
		u, err := url.Parse(entry)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("GOPROXY entry %q: want an http or https URL, direct or off", entry)
		}
		out = append(out, upstream{url: strings.TrimSuffix(entry, "/"), anyError: sep == '|'})
	}
	return out, nil
}

// credential is a netrc entry's login and password.
type credential struct{ login, password string }

// readNetrc reads the machines of a netrc file (the format curl and the go
// command read: machine, login, password, default; macdef is skipped).
func readNetrc(file string) (map[string]credential, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("netrc: %w", err)
	}
	out := map[string]credential{}
	var machine string
	var cur credential
	flush := func() {
		if machine != "" {
			if _, ok := out[machine]; !ok {
				out[machine] = cur
			}
		}
		machine, cur = "", credential{}
	}
	fields := strings.Fields(string(b))
	for i := 0; i < len(fields); i++ {
		next := func() string {
			if i+1 < len(fields) {
				i++
				return fields[i]
			}
			return ""
		}
		switch fields[i] {
		case "machine":
			flush()
			machine = next()
		case "default":
			// The go command ignores a default entry: a login
			// sent to every host would reach hosts the operator
			// never named (sum.golang.org, the next proxy).
			flush()
		case "login":
			cur.login = next()
		case "password":
			cur.password = next()
		case "macdef":
			// A macro runs to the next empty line; no credential in it.
			flush()
			return out, nil
		}
	}
	flush()
	return out, nil
}

// fetcher fetches modules through the operator's proxies; one per loader.
type fetcher struct {
	upstreams []upstream
	creds     map[string]credential
	client    *http.Client
	maxBytes  int64
	timeout   time.Duration
	// private are the GONOSUMDB patterns.
	private string
	// lastPrune is when the module cache was last pruned (unix nanos).
	lastPrune atomic.Int64
}

func newFetcher(cfg Config) (*fetcher, error) {
	ups, err := upstreams(cfg.GoProxy)
	if err != nil {
		return nil, err
	}
	creds, err := readNetrc(cfg.Netrc)
	if err != nil {
		return nil, err
	}
	f := &fetcher{
		upstreams: ups,
		creds:     creds,
		maxBytes:  cfg.FetchMaxBytes,
		timeout:   cfg.FetchTimeout,
		private:   cfg.GoPrivate,
		client: &http.Client{
			// No redirect leaves with the credentials of another host.
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 5 {
					return errors.New("too many redirects")
				}
				req.Header.Del("Authorization")
				return nil
			},
		},
	}
	if f.maxBytes <= 0 {
		f.maxBytes = DefaultFetchMaxBytes
	}
	if f.timeout <= 0 {
		f.timeout = DefaultFetchTimeout
	}
	return f, nil
}

// unavailable is why a module version could not be had.
type unavailable struct {
	// why says what the proxies answered; kind classes it for the advice.
	why  string
	kind unavailableKind
}

type unavailableKind int

const (
	notServed   unavailableKind = iota // 404 or 410 from every proxy
	refused                            // 401 or 403: credentials
	unreachable                        // a network error or another status
	overBound                          // past the review's bytes
	timedOut                           // past the review's time
	fetchOff                           // GOPROXY off
	notVerified                        // served, but its checksum or go.mod did not verify
	noSandbox                          // no bubblewrap to fetch in
	goFailed                           // the fetch's go command failed and named no module
)

// fetchSession is the proxy of one change's fetch: its bytes and what it
// could not serve.
type fetchSession struct {
	f      *fetcher
	prefix string
	used   atomic.Int64
	mu     sync.Mutex
	// missing are the module versions ("path@version") not had, and
	// why.
	missing map[string]unavailable
}

// proxyPath is what a path of the GOPROXY and checksum database protocols
// is made of (escaped module paths and versions, tiles): anything else —
// a '?', '#', '%' or space decoded from the go command's request — would
// change the meaning of the URL it is forwarded as.
var proxyPath = regexp.MustCompile(`^[A-Za-z0-9._~!@+/-]*$`)

// ServeHTTP forwards one request of the GOPROXY protocol.
func (s *fetchSession) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, s.prefix)
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) || strings.Contains(rest, "..") || !proxyPath.MatchString(rest) {
		http.NotFound(w, r)
		return
	}
	mod, version := requested(rest)
	if s.used.Load() >= s.f.maxBytes {
		s.miss(mod, version, unavailable{fmt.Sprintf("the review's download bound (%s) was reached", mib(s.f.maxBytes)), overBound})
		http.Error(w, "quorum: the review's download bound is reached", http.StatusForbidden)
		return
	}
	targets := make([]upstream, 0, len(s.f.upstreams)+1)
	for _, up := range s.f.upstreams {
		targets = append(targets, upstream{url: up.url + "/" + rest, anyError: up.anyError})
	}
	if db, ok := strings.CutPrefix(rest, "sumdb/"+sumDB+"/"); ok {
		// The checksum database, through the proxies when they serve
		// it, else from the database itself: the go command is told
		// that every proxy supports it, and so never leaves loopback.
		if db == "supported" {
			w.WriteHeader(http.StatusOK)
			return
		}
		for i := range targets {
			targets[i].anyError = true
		}
		targets = append(targets, upstream{url: "https://" + sumDB + "/" + db})
	} else if strings.HasPrefix(rest, "sumdb/") {
		http.NotFound(w, r)
		return
	}
	var last unavailable
	status := http.StatusNotFound
	for _, up := range targets {
		target := up.url
		resp, err := s.get(r.Context(), target)
		if err != nil {
			last, status = unavailable{fmt.Sprintf("%s could not be reached: %s", host(target), netErrorClass(err)), unreachable}, http.StatusBadGateway
			if r.Context().Err() != nil {
				return
			}
			if up.anyError {
				continue
			}
			break
		}
		if resp.StatusCode == http.StatusOK {
			s.relay(w, resp, mod, version)
			return
		}
		resp.Body.Close()
		last, status = unavailable{fmt.Sprintf("%s answered %s", host(target), resp.Status), notServed}, resp.StatusCode
		switch {
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
			continue
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			last.kind = refused
		default:
			last.kind = unreachable
		}
		if !up.anyError {
			break
		}
	}
	if len(targets) == 0 {
		last = unavailable{"GOPROXY names no proxy", fetchOff}
	}
	s.miss(mod, version, last)
	if status != http.StatusNotFound && status != http.StatusGone {
		status = http.StatusBadGateway
	}
	http.Error(w, "quorum: "+last.why, status)
}

// get asks one proxy, with the operator's credentials for its host.
func (s *fetchSession) get(ctx context.Context, target string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	if c, ok := s.f.creds[req.URL.Hostname()]; ok {
		req.SetBasicAuth(c.login, c.password)
	}
	return s.f.client.Do(req)
}

// relay copies a proxy's answer to the go command, within the review's
// bound: past it the connection is cut, and the go command fails on that
// module.
func (s *fetchSession) relay(w http.ResponseWriter, resp *http.Response, mod, version string) {
	defer resp.Body.Close()
	left := s.f.maxBytes - s.used.Load()
	if resp.ContentLength > left {
		s.miss(mod, version, unavailable{fmt.Sprintf("it is larger (%s) than what was left of the review's download bound (%s)", mib(resp.ContentLength), mib(s.f.maxBytes)), overBound})
		http.Error(w, "quorum: over the review's download bound", http.StatusForbidden)
		return
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	if resp.ContentLength >= 0 {
		w.Header().Set("Content-Length", fmt.Sprint(resp.ContentLength))
	}
	w.WriteHeader(http.StatusOK)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if s.used.Add(int64(n)) > s.f.maxBytes {
				s.miss(mod, version, unavailable{fmt.Sprintf("the review's download bound (%s) was reached while fetching it", mib(s.f.maxBytes)), overBound})
				panic(http.ErrAbortHandler)
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			panic(http.ErrAbortHandler)
		}
	}
}

// miss records that a module version could not be had; lookups without
// a version (@v/list, @latest: the go command probing which module holds
// an import) are not.
func (s *fetchSession) miss(mod, version string, why unavailable) {
	if mod == "" || version == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.missing[mod+"@"+version]; !ok {
		s.missing[mod+"@"+version] = why
	}
}

// copyMissing adds what the session could not serve to dst.
func (s *fetchSession) copyMissing(dst map[string]unavailable) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.missing {
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
}

// requested returns the module path and version a GOPROXY request names
// (<module>/@v/<version>.info, .mod or .zip); empty for anything else.
func requested(rest string) (mod, version string) {
	escMod, file, ok := strings.Cut(rest, "/@v/")
	if !ok {
		return "", ""
	}
	escVer := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(file, ".info"), ".mod"), ".zip")
	if escVer == file || escVer == "" {
		return "", ""
	}
	mod, err1 := module.UnescapePath(escMod)
	version, err2 := module.UnescapeVersion(escVer)
	if err1 != nil || err2 != nil {
		return "", ""
	}
	return mod, version
}

// netErrorClass says what kind of network error err is, without the URL
// it names (a token may be in the operator's proxy URL, and the reason is
// read by the pull request's author).
func netErrorClass(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &dns):
		return "its name did not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &op):
		return "a network error (" + op.Op + ")"
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:"):
		return "a TLS error"
	}
	return "a network error"
}

func host(target string) string {
	if u, err := url.Parse(target); err == nil {
		return u.Host
	}
	return "the proxy"
}

// mib says a number of bytes in MiB, or KiB below one.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", (n+(1<<10)-1)>>10)
	}
	return fmt.Sprintf("%d MiB", (n+(1<<20)-1)>>20)
}

// fetched is what one change's fetch could not have, for the review.
type fetched struct {
	// off says nothing was fetched (GOPROXY off).
	off bool
	// missing are the module versions not had, by "path@version".
	missing map[string]unavailable
	// requires are the go.mod's requirements of each module group, by
	// its directory, to find the module of an import the load names.
	requires map[string][]module.Version
	// err is the whole fetch's own failure (its time limit, no sandbox
	// for it), if any; groupErr the failure of one module group's go
	// command, by its directory. failure reads both.
	err      *unavailable
	groupErr map[string]unavailable
	// modCache is the module cache the load reads.
	modCache string
}

// fetch lists the group's packages with their dependencies (and their
// tests' when tests), so that the go command downloads what they need
// into the module cache, through a forwarding proxy of this fetch's own.
// It returns an error only when the fetch could not start.
func (l *Loader) fetch(ctx context.Context, env []string, tree, root string, groups []group, tests bool) (*fetched, error) {
	out := &fetched{off: l.fetcher == nil, missing: map[string]unavailable{}, requires: map[string][]module.Version{}, modCache: l.modCache, groupErr: map[string]unavailable{}}
	for _, g := range groups {
		if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(g.modDir), "go.mod")); err == nil {
			if mf, err := modfile.ParseLax("go.mod", b, nil); err == nil {
				for _, r := range mf.Require {
					out.requires[g.modDir] = append(out.requires[g.modDir], r.Mod)
				}
			}
		}
	}
	if out.off || !slices.Contains(env, "GO111MODULE=on") {
		return out, nil
	}
	// The session's own record of what it could not serve, copied into
	// out's after each go command: a handler still waiting on a proxy
	// when the go command gave up may write it later, and out's is read
	// without a lock.
	s := &fetchSession{f: l.fetcher, missing: map[string]unavailable{}}
	var token [16]byte
	if _, err := rand.Read(token[:]); err != nil {
		return nil, err
	}
	s.prefix = "/" + hex.EncodeToString(token[:]) + "/"
	// The go command has no network but its sandbox's own loopback,
	// where the bridge forwards to the proxy's Unix socket: without
	// bubblewrap there is no such sandbox, and nothing is fetched
	// rather than the go command given the host's network.
	if sandbox.Probe().Bubblewrap == "" {
		out.err = &unavailable{"modules are not fetched without bubblewrap: the fetch's go command runs only in a network namespace of its own", noSandbox}
		return out, nil
	}
	if _, err := l.bridge(ctx); err != nil {
		return nil, fmt.Errorf("fetch modules: %w", err)
	}

	// The go command sees the proxy only, through the bridge, preceded by
	// the seed cache (read, never written) when there is one.
	proxy := "http://" + bridgeAddr + strings.TrimSuffix(s.prefix, "/")
	if l.cfg.SeedModCache != "" && l.cfg.SeedModCache != l.modCache {
		if _, err := os.Stat(filepath.Join(l.cfg.SeedModCache, "cache", "download")); err == nil {
			proxy = "file://" + filepath.ToSlash(filepath.Join(l.cfg.SeedModCache, "cache", "download")) + "," + proxy
		}
	}
	fenv := make([]string, 0, len(env))
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "GOPROXY="), strings.HasPrefix(kv, "GOSUMDB="), strings.HasPrefix(kv, "GONOSUMDB="):
			continue
		}
		fenv = append(fenv, kv)
	}
	fenv = append(fenv, "GOPROXY="+proxy, "GOSUMDB="+sumDB, "GONOSUMDB="+l.fetcher.private)
	confined, err := l.confine(fenv, tree, true)
	if err != nil {
		return nil, fmt.Errorf("fetch modules: %w", err)
	}
	defer confined.release()
	ln, err := net.Listen("unix", confined.socket)
	if err != nil {
		return nil, fmt.Errorf("fetch modules: %w", err)
	}
	// Its directory, shown to the sandbox only, is the sandbox user's;
	// the socket is root's when quorum is: the go command's user
	// connects to it.
	if err := os.Chmod(confined.socket, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("fetch modules: %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	// The checksum database's client keeps what it verified under
	// GOPATH/pkg/sumdb: a directory of the fetch's own.
	gopath := filepath.Join(confined.mod, "gopath")
	if err := os.Mkdir(gopath, 0o700); err != nil {
		return nil, fmt.Errorf("fetch modules: %w", err)
	}
	if err := sandbox.Own(gopath); err != nil {
		return nil, fmt.Errorf("fetch modules: %w", err)
	}

	fctx, cancel := context.WithTimeout(ctx, l.fetcher.timeout)
	defer cancel()
	for _, g := range groups {
		if len(g.patterns) == 0 {
			continue
		}
		genv, err := confined.envFor(root, g.modDir)
		if err != nil {
			return nil, fmt.Errorf("fetch modules: %w", err)
		}
		genv = slices.DeleteFunc(genv, func(kv string) bool { return strings.HasPrefix(kv, "GOPATH=") })
		genv = append(genv, "GOPATH="+gopath)
		// Each package's module directory (touch), and its error, if
		// any, on a line of its own.
		args := []string{"list", "-e", "-deps", "-f", "{{with .Module}}{{.Dir}}{{end}}{{with .Error}}\n" + errorLine + "{{.Err}}{{end}}"}
		if tests {
			args = append(args, "-test")
		}
		args = append(args, "--")
		args = append(args, g.patterns...)
		cmd := exec.CommandContext(fctx, confined.script(), args...)
		cmd.Env = genv
		cmd.Dir = filepath.Join(root, filepath.FromSlash(g.modDir))
		var stdout, stderr bytes.Buffer
		cmd.Stdout = &limitedBuffer{b: &stdout, n: 4 << 20}
		cmd.Stderr = &limitedBuffer{b: &stderr, n: 64 << 10}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 2 * time.Second
		runErr := cmd.Run()
		l.touch(stdout.String())
		before := len(out.missing)
		s.copyMissing(out.missing)
		named := out.failed(stdout.String(), stderr.String(), root)
		if fctx.Err() != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out.err = &unavailable{fmt.Sprintf("fetching modules took longer than %s", l.fetcher.timeout), timedOut}
			break
		}
		if runErr != nil && !named && len(out.missing) == before {
			// It failed and named no module (it could not start, the
			// sandbox did not, a limit killed it): what its module
			// lacks was not fetched, and the reason says so rather than
			// what the offline load makes of the hole.
			out.groupErr[g.modDir] = unavailable{"the fetch's go command failed: " + goError(stderr.String(), runErr, root), goFailed}
		}
	}
	return out, nil
}

// touch marks the modules of the directories listed (one a line) as used
// now, for pruning: their trees and their zips. Access times are not
// used: relatime updates them once a day, and measuring the cache
// would.
func (l *Loader) touch(dirs string) {
	if l.cfg.ModCacheMaxBytes <= 0 {
		return
	}
	now := time.Now()
	seen := map[string]bool{}
	for _, d := range strings.Split(dirs, "\n") {
		d = strings.TrimSpace(d)
		rel, err := filepath.Rel(l.modCache, d)
		if d == "" || seen[d] || err != nil || !filepath.IsLocal(rel) || strings.HasPrefix(rel, "cache") {
			continue
		}
		seen[d] = true
		os.Chtimes(d, now, now)
		if escMod, ver, ok := strings.Cut(filepath.ToSlash(rel), "@"); ok {
			os.Chtimes(filepath.Join(l.modCache, "cache", "download", filepath.FromSlash(escMod), "@v", ver+".zip"), now, now)
		}
	}
}

// errorLine starts the lines of the fetch's output that are a package's
// error.
const errorLine = "quorum-error: "

// verifyError finds, in a go command's error, a module whose download
// did not verify ("verifying example.com/m@v1.2.0: checksum mismatch").
var verifyError = regexp.MustCompile(`verifying ([^\s:"']+)@(v[^\s:"']+)(?:/go\.mod)?: (.*)`)

// failed records the modules the fetch's go command says it could not
// have though the proxy served them (a checksum that does not verify,
// say): from its error output and the packages' errors in its listing.
func (f *fetched) failed(listed, stderr, root string) (named bool) {
	var lines []string
	for _, line := range strings.Split(listed, "\n") {
		if msg, ok := strings.CutPrefix(line, errorLine); ok {
			lines = append(lines, msg)
		}
	}
	lines = append(lines, strings.Split(stderr, "\n")...)
	for _, msg := range lines {
		var mod, ver, why string
		if m := verifyError.FindStringSubmatch(msg); m != nil {
			mod, ver, why = m[1], m[2], "verifying it: "+m[3]
		} else if m := moduleError.FindStringSubmatchIndex(msg); m != nil {
			mod, ver, why = msg[m[2]:m[3]], msg[m[4]:m[5]], msg[m[5]+1:]
		} else {
			continue
		}
		named = true
		key := mod + "@" + ver
		if _, ok := f.missing[key]; ok {
			continue
		}
		f.missing[key] = unavailable{"the go command said: " + quoteGo(why, root), notVerified}
	}
	return named
}

// goError is what a failed go command said of its failure: the Go
// runtime's own ("fatal error: …", "panic: …") if it crashed, else its
// first line of error output that is not progress ("go: downloading …"),
// without the tree's path and in at most 200 characters; or, when it
// said nothing else or a signal ended it (bubblewrap exits with 128 plus
// the signal's number), how it failed.
func goError(stderr string, err error, root string) string {
	var first, crash string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case crash == "" && (strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:")):
			crash = l
		case first == "" && l != "" && !progressLine.MatchString(l):
			first = l
		}
	}
	line := first
	if crash != "" {
		line = crash
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if code := exit.ExitCode(); code > 128 && code <= 128+64 {
			return fmt.Sprintf("it was ended by signal %d (%s), a limit of its sandbox or the machine's", code-128, syscall.Signal(code-128))
		}
		if !exit.Exited() {
			return err.Error()
		}
	}
	if line == "" {
		return err.Error()
	}
	return quoteGo(line, root)
}

// quoteGo is a go command's words as a reason quotes them: without the
// tree's path (a review says the same each time), in at most 200
// characters.
func quoteGo(s, root string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, root+string(filepath.Separator), ""))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// progressLine is a go command's line of progress, not of error.
var progressLine = regexp.MustCompile(`^go: (downloading|finding|found|extracting) `)

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// moduleError finds, in a go command's error, the module version it could
// not read ("go: example.com/m@v1.2.0: reading …").
var moduleError = regexp.MustCompile(`([^\s:"']+)@(v[^\s:"']+): (?:reading|verifying|missing|module lookup disabled|Get )`)

// importError finds an import the type checker could not make.
var importError = regexp.MustCompile(`could not import ([^\s"()]+)`)

// explain rewrites why a package of the module at modDir did not load
// into what the operator can do about it, when the cause is a module
// that could not be had; other reasons are returned as they are, but for
// naming the modules the review lacks, if any.
func (f *fetched) explain(modDir, why string) string {
	if f == nil {
		return why
	}
	if mod, ok := f.moduleOf(modDir, why); ok {
		if u, ok := f.unavailable(modDir, mod); ok {
			return fmt.Sprintf("module %s@%s could not be had: %s; %s", mod.Path, mod.Version, u.why, advice(u.kind, mod.Path))
		}
		return why
	}
	failed, fetchFailed := f.failure(modDir)
	if fetchFailed && strings.Contains(why, "go list") {
		return why + "; " + failed.why + "; " + advice(failed.kind, "")
	}
	// A type error that names no module ("undefined: jwt") may come
	// from one the review lacks.
	var lacked []string
	kind, cause := fetchOff, ""
	if fetchFailed {
		cause = failed.why + "; "
	}
	for _, r := range f.requires[modDir] {
		if u, ok := f.unavailable(modDir, r); ok {
			lacked = append(lacked, r.Path+"@"+r.Version)
			kind = u.kind
		}
	}
	if len(lacked) == 0 {
		return why
	}
	more := ""
	if len(lacked) > 3 {
		more = fmt.Sprintf(" and %d more", len(lacked)-3)
		lacked = lacked[:3]
	}
	return fmt.Sprintf("%s (the review lacks modules its go.mod requires: %s%s; %s%s)", why, strings.Join(lacked, ", "), more, cause, advice(kind, lacked[0]))
}

// moduleOf returns the module a reason names: in a go command's error,
// or as the module of an import the type checker could not make.
func (f *fetched) moduleOf(modDir, why string) (module.Version, bool) {
	if m := moduleError.FindStringSubmatch(why); m != nil {
		return module.Version{Path: m[1], Version: m[2]}, true
	}
	var mod module.Version
	if m := importError.FindStringSubmatch(why); m != nil {
		for _, r := range f.requires[modDir] {
			if (m[1] == r.Path || strings.HasPrefix(m[1], r.Path+"/")) && len(r.Path) > len(mod.Path) {
				mod = r
			}
		}
	}
	return mod, mod.Path != ""
}

// unavailable says why the review could not have mod, which the module
// at modDir requires, if it could not.
func (f *fetched) unavailable(modDir string, mod module.Version) (unavailable, bool) {
	if u, ok := f.missing[mod.Path+"@"+mod.Version]; ok {
		return u, true
	}
	if f.cached(mod) {
		return unavailable{}, false
	}
	switch {
	case f.off:
		return unavailable{"fetching modules is off (--go-proxy off) and the module cache does not hold it", fetchOff}, true
	}
	return f.failure(modDir)
}

// failure is why the fetch for the module at modDir failed, if it did:
// the whole fetch's failure, else its group's.
func (f *fetched) failure(modDir string) (unavailable, bool) {
	if f.err != nil {
		return *f.err, true
	}
	u, ok := f.groupErr[modDir]
	return u, ok
}

// cached reports whether the module cache holds mod's zip.
func (f *fetched) cached(mod module.Version) bool {
	esc, err1 := module.EscapePath(mod.Path)
	ver, err2 := module.EscapeVersion(mod.Version)
	if err1 != nil || err2 != nil || f.modCache == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(f.modCache, "cache", "download", filepath.FromSlash(esc), "@v", ver+".zip"))
	return err == nil
}

// advice says what an operator configures for a module that could not be
// had.
func advice(k unavailableKind, mod string) string {
	switch k {
	case fetchOff:
		return "give quorum a module proxy (--go-proxy, QUORUM_GO_PROXY) or put the module in its module cache"
	case overBound:
		return "raise --go-fetch-max-bytes (QUORUM_GO_FETCH_MAX_BYTES)"
	case timedOut:
		return "raise --go-fetch-timeout (QUORUM_GO_FETCH_TIMEOUT)"
	case noSandbox:
		return "install bubblewrap (scripts/install-sandbox, docs/operations.md), or put the module in quorum's module cache"
	case goFailed:
		return "`go mod download` in the repository gives the go command's whole error"
	case refused:
		return "give the proxy's credentials in a netrc file (--go-netrc, QUORUM_GO_NETRC)"
	case notVerified:
		return fmt.Sprintf("a module the public checksum database does not know (a private one) is listed in --go-private (QUORUM_GO_PRIVATE, e.g. %s); a checksum mismatch means the proxy, or the repository's go.sum, is not to be trusted", privatePattern(mod))
	}
	return fmt.Sprintf("if it is private, list it in --go-private (QUORUM_GO_PRIVATE, as GOPRIVATE/GONOSUMDB: e.g. %s) and put a proxy that serves it first in --go-proxy, with its credentials in --go-netrc", privatePattern(mod))
}

// privatePattern suggests a GOPRIVATE pattern for a module: its host, or
// on a hosting service its owner's (github.com/org).
func privatePattern(mod string) string {
	parts := strings.SplitN(mod, "/", 3)
	switch {
	case len(parts) >= 2 && slices.Contains([]string{"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"}, parts[0]):
		return parts[0] + "/" + parts[1]
	default:
		return parts[0]
	}
}

// The module cache quorum owns is shared by the reviews of a process and
// of the processes sharing it: a review holds a shared lock on it while
// it fetches and loads, and pruning takes the lock exclusively, never
// waiting for it (it tries again after a later review).

// modCacheLock is the lock file at the module cache's root.
const modCacheLock = ".quorum-lock"

// pruneEvery is how often, at most, the module cache is measured.
const pruneEvery = time.Minute

// lockModCache takes the module cache's shared lock; the function
// returned releases it, then prunes the cache (pruneModCache). A cache the
// loader does not prune is not locked.
func (l *Loader) lockModCache() (func(), error) {
	if l.cfg.ModCacheMaxBytes <= 0 {
		return func() {}, nil
	}
	if err := os.MkdirAll(l.modCache, 0o700); err != nil {
		return nil, fmt.Errorf("lock the module cache: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(l.modCache, modCacheLock), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the module cache: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the module cache: %w", err)
	}
	return func() {
		unlock(f)
		l.pruneModCache()
	}, nil
}

// unlock releases f's lock and closes it. The lock is released first, on
// f itself: a flock belongs to the open file, and a process forked by
// another goroutine while f was open holds the file until it execs, so
// closing f alone could leave the lock held a moment longer (a prune
// then found the cache busy and pruned nothing).
func unlock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// pruneModCache removes the least recently used module versions while
// the cache is larger than Config.ModCacheMaxBytes, when no review uses
// it.
func (l *Loader) pruneModCache() {
	if l.cfg.ModCacheMaxBytes <= 0 || l.fetcher == nil {
		return
	}
	now := time.Now().UnixNano()
	if last := l.fetcher.lastPrune.Load(); now-last < int64(pruneEvery) || !l.fetcher.lastPrune.CompareAndSwap(last, now) {
		return
	}
	l.pruning.Add(1)
	go func() {
		defer l.pruning.Done()
		// On an error, nothing to do but try again after a later
		// review; when another review held the cache, the next one
		// to end tries again at once (else, with reviews overlapping,
		// a busy service would seldom prune).
		if _, locked, _ := pruneModCache(l.modCache, l.cfg.ModCacheMaxBytes); !locked {
			l.fetcher.lastPrune.CompareAndSwap(now, 0)
		}
	}()
}

// cachedModule is one module version in the cache: its extracted tree and
// its downloads.
type cachedModule struct {
	dir   string   // the extracted tree, "" when there is none
	files []string // its files in cache/download
	size  int64
	// used is when its zip or tree was last used (a fetch touches
	// them); written, when it has neither, when its files were.
	used, written time.Time
}

// PruneModCache removes the least recently used module versions from the
// module cache at dir (their trees and downloads; then go.mod files of
// versions never extracted, lists of versions and the checksum database's
// tiles, which a pull request can make many of) until it holds at most
// max bytes. It does nothing, and returns 0, while a review holds the
// cache's lock. It returns the bytes removed.
func PruneModCache(dir string, max int64) (int64, error) {
	removed, _, err := pruneModCache(dir, max)
	return removed, err
}

// pruneModCache is PruneModCache; locked says whether it got the cache's
// lock.
func pruneModCache(dir string, max int64) (removed int64, locked bool, err error) {
	f, err := os.OpenFile(filepath.Join(dir, modCacheLock), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return 0, false, err
	}
	defer unlock(f)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return 0, false, nil
	}
	removed, err = pruneLocked(dir, max)
	return removed, true, err
}

// pruneLocked prunes the module cache at dir, whose lock it holds.
func pruneLocked(dir string, max int64) (int64, error) {
	var err error
	mods := map[string]*cachedModule{}
	get := func(key string) *cachedModule {
		m := mods[key]
		if m == nil {
			m = &cachedModule{}
			mods[key] = m
		}
		return m
	}
	var total int64
	download := filepath.Join(dir, "cache", "download")
	// Downloads: cache/download/<escaped path>/@v/<version>.{info,mod,zip,ziphash,lock}.
	err = filepath.WalkDir(download, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		total += fi.Size()
		rel, _ := filepath.Rel(download, p)
		// Every file counts and may go: a version's .info, .mod, .zip
		// and .ziphash together; a module's list of versions; the
		// checksum database's tiles (sumdb/…) and anything else as one
		// group. The go command fetches again what a later review needs.
		key := "\x00other"
		if escMod, file, ok := strings.Cut(filepath.ToSlash(rel), "/@v/"); ok && !strings.HasPrefix(escMod, "sumdb/") {
			key = escMod + "@" + strings.TrimSuffix(file, path.Ext(file))
			if file == "list" || file == "list.lock" {
				key = escMod + "/@v/list"
			}
		}
		m := get(key)
		m.files = append(m.files, p)
		m.size += fi.Size()
		if strings.HasSuffix(p, ".zip") {
			m.used = later(m.used, fi)
		} else {
			m.written = later(m.written, fi)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	// Trees: <escaped path>@<version>/…, at any depth of the path.
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !e.IsDir() || p == dir {
			return nil
		}
		if p == filepath.Join(dir, "cache") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		if !strings.Contains(e.Name(), "@") {
			return nil
		}
		var size int64
		filepath.WalkDir(p, func(q string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if fi, err := e.Info(); err == nil {
					size += fi.Size()
				}
			}
			return nil
		})
		total += size
		m := get(filepath.ToSlash(rel))
		m.dir = p
		m.size += size
		if fi, err := e.Info(); err == nil {
			m.used = later(m.used, fi)
		}
		return filepath.SkipDir
	})
	if err != nil {
		return 0, err
	}
	if total <= max {
		return 0, nil
	}
	order := make([]*cachedModule, 0, len(mods))
	for _, m := range mods {
		order = append(order, m)
	}
	for _, m := range order {
		if m.used.IsZero() {
			m.used = m.written
		}
	}
	slices.SortFunc(order, func(a, b *cachedModule) int { return a.used.Compare(b.used) })
	var removed int64
	for _, m := range order {
		if total <= max {
			break
		}
		if m.dir != "" {
			// The go command makes the trees read-only.
			filepath.WalkDir(m.dir, func(p string, e fs.DirEntry, err error) error {
				if err == nil && e.IsDir() {
					os.Chmod(p, 0o700)
				}
				return nil
			})
			if err := os.RemoveAll(m.dir); err != nil {
				return removed, err
			}
		}
		for _, p := range m.files {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return removed, err
			}
		}
		total -= m.size
		removed += m.size
	}
	return removed, nil
}

// later returns the later of t and the file's modification time (the
// time it was fetched or last used: touch).
func later(t time.Time, fi fs.FileInfo) time.Time {
	if fi.ModTime().After(t) {
		return fi.ModTime()
	}
	return t
}
