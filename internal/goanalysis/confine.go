package goanalysis

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/quorum-review/quorum/internal/sandbox"
)

// The go command that go/packages starts for a load (go list, go env,
// go version) runs in the analyzers' sandbox (internal/sandbox): as
// nobody, without network unless the operator allows it, seeing the
// toolchain, the module cache and the copied tree read-only, writing
// only its go.mod copies and the sandbox's build cache, with the
// sandbox's limits.
//
// go/packages starts "go" found on this process's PATH (exec.Command
// resolves a bare name with the process's PATH, not the child's), so a
// dispatcher named go goes first on PATH, once per process: with
// QUORUM_GO_SANDBOX in the child's environment (a load's) it runs that
// load's sandbox script, without it the first go on PATH past itself.
//
// It fails closed: a load's environment holds a GOTOOLCHAIN that the go
// command refuses, which only the sandbox script sets right. A go
// command started for a load some other way (the dispatcher gone from
// PATH) fails instead of running unconfined.

// sandboxVar names, in the go command's environment, the script that
// runs it confined.
const sandboxVar = "QUORUM_GO_SANDBOX"

// unconfinedToolchain is a load's GOTOOLCHAIN outside the sandbox: not
// one the go command accepts.
const unconfinedToolchain = "GOTOOLCHAIN=quorum-sandbox-required"

var (
	dispatchMu  sync.Mutex
	dispatchBin string
)

// dispatcher puts the dispatcher first on PATH, once per process, in a
// directory of its own under the user's cache directory (or a temporary
// one), and puts it back first if PATH has changed since. It returns the
// dispatcher's path.
func dispatcher() (string, error) {
	dispatchMu.Lock()
	defer dispatchMu.Unlock()
	if dispatchBin == "" {
		base := processCacheDir()
		// One directory for every process; each writes the script anew
		// (atomically), in case an older quorum wrote another.
		dir := filepath.Join(base, "go-dispatch")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		// Outside a load it runs the first go on PATH past itself: the
		// one any other go command of this process would have run.
		script := "#!/bin/sh\n# Written by quorum (internal/goanalysis): a load's go command runs in its sandbox.\n" +
			"if [ -n \"${" + sandboxVar + ":-}\" ]; then exec \"$" + sandboxVar + "\" \"$@\"; fi\n" +
			"IFS=:\nfor d in $PATH; do\n\t[ \"$d\" = " + sandbox.Quote(dir) + " ] && continue\n\t[ -x \"$d/go\" ] && exec \"$d/go\" \"$@\"\ndone\n" +
			"echo \"quorum: no go command on PATH\" >&2\nexit 127\n"
		tmp, err := os.CreateTemp(dir, ".go-")
		if err != nil {
			return "", err
		}
		tmp.Close()
		err = sandbox.WriteExecutable(tmp.Name(), []byte(script), 0o700)
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o700)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), filepath.Join(dir, "go"))
		}
		if err != nil {
			os.Remove(tmp.Name())
			return "", err
		}
		dispatchBin = dir
	}
	self := filepath.Join(dispatchBin, "go")
	if p, err := exec.LookPath("go"); err != nil || p != self {
		if err := os.Setenv("PATH", dispatchBin+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(self); err != nil {
		return "", fmt.Errorf("the go command's dispatcher: %w", err)
	}
	return self, nil
}

// processCacheDir is the directory, under the user's cache directory (or
// the temporary one), of what quorum keeps for every process of its user:
// the dispatcher, the fetch's bridge. Only quorum writes it.
func processCacheDir() string {
	base, err := userCacheDir()
	if err == nil {
		base = filepath.Join(base, "quorum")
		err = os.MkdirAll(base, 0o700)
	}
	if err != nil {
		base = os.TempDir()
	}
	return base
}

// bridgeSource is the fetch's bridge (bridge/main.go): inside the fetch's
// sandbox, it forwards the go command's connections to the sandbox's own
// loopback to quorum's proxy, on a Unix socket bound into it.
//
//go:embed bridge/main.go
var bridgeSource []byte

// bridgeAddr is where the bridge listens, on the loopback of the fetch's
// network namespace, which only the fetch's go command shares.
const bridgeAddr = "127.0.0.1:7070"

var (
	bridgeMu  sync.Mutex
	bridgeExe string
	// userCacheDir is os.UserCacheDir; a test puts another in its place.
	userCacheDir = os.UserCacheDir
	// bridgeBuildCache, when set, is a build cache kept for the bridge's
	// builds in place of a throwaway one: a test that builds the bridge
	// anew, as on a fresh machine, then compiles the standard library
	// under it once per machine, not every run (13.5 s, not 0.5 s).
	bridgeBuildCache string
)

// bridge returns the bridge's executable, built once per machine and
// version of its source: a static program (CGO_ENABLED=0), built by the
// go command quorum already requires from the source quorum embeds, into
// a directory named by the source's hash under processCacheDir, with a
// build cache of its own, removed after (no sandboxed go command ever
// wrote it).
func (l *Loader) bridge(ctx context.Context) (string, error) {
	bridgeMu.Lock()
	defer bridgeMu.Unlock()
	if bridgeExe != "" {
		return bridgeExe, nil
	}
	sum := sha256.Sum256(bridgeSource)
	base := filepath.Join(processCacheDir(), "go-bridge")
	// The directory is shown to the sandbox (read-only): others may read
	// and run the program; its build cache and sources stay 0700.
	dir := filepath.Join(base, hex.EncodeToString(sum[:12]))
	exe := filepath.Join(dir, "bridge")
	src := filepath.Join(base, "src")
	for _, d := range []string{src, dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("build the fetch's bridge: %w", err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", fmt.Errorf("build the fetch's bridge: %w", err)
	}
	// What runs in the sandbox is only what quorum's user built (the
	// cache directory may be the temporary one, others' to write).
	for _, p := range []string{base, src, dir} {
		if err := quorums(p); err != nil {
			return "", fmt.Errorf("build the fetch's bridge: %w", err)
		}
	}
	if err := quorums(exe); err == nil {
		bridgeExe = exe
		return exe, nil
	}
	work, err := os.MkdirTemp(src, "")
	if err != nil {
		return "", fmt.Errorf("build the fetch's bridge: %w", err)
	}
	defer os.RemoveAll(work)
	gocache := filepath.Join(work, "cache")
	if bridgeBuildCache != "" {
		gocache = bridgeBuildCache
	}
	if err := os.WriteFile(filepath.Join(work, "main.go"), bridgeSource, 0o600); err != nil {
		return "", fmt.Errorf("build the fetch's bridge: %w", err)
	}
	tmp := filepath.Join(dir, ".bridge-"+filepath.Base(work))
	cmd := exec.CommandContext(ctx, l.goPath, "build", "-trimpath", "-o", tmp, "main.go")
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + filepath.Dir(l.goPath) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + work, "GOCACHE=" + gocache, "GOPATH=" + filepath.Join(work, "gopath"), "GOENV=off", "GOWORK=off",
		"GOFLAGS=", "GOTOOLCHAIN=local", "CGO_ENABLED=0", "GOPROXY=off", "GOTELEMETRY=off", "TMPDIR=" + work}
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build the fetch's bridge: %v: %s", err, bytes.TrimSpace(out))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build the fetch's bridge: %w", err)
	}
	if err := os.Rename(tmp, exe); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build the fetch's bridge: %w", err)
	}
	bridgeExe = exe
	return exe, nil
}

// quorums checks that p is quorum's user's and that no one else may
// write it.
func quorums(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() || fi.Mode()&(fs.ModeSymlink|0o022) != 0 {
		return fmt.Errorf("%s is not quorum's own (owner, mode %s)", p, fi.Mode())
	}
	return nil
}

// confinement is one load's sandbox of the go command.
type confinement struct {
	env []string
	// private holds the script, its seccomp filter and the go.mod
	// copies; root's, not shown to the go command but for mod (and, for
	// a fetch, the proxy's socket).
	private string
	mod     string
	// socket is where a fetch's proxy listens: in a directory of
	// private shown read-only to the go command, through the bridge.
	socket string
	n      int
}

func (c *confinement) release() { os.RemoveAll(c.private) }

// script is the path of the script that runs the go command confined.
func (c *confinement) script() string { return filepath.Join(c.private, "go") }

// confine returns the sandbox of the go command for a load of the tree
// at dir, or, online, for a fetch of its modules (fetch.go): with the
// module cache writable and, in its network namespace, which has nothing
// but a loopback of its own, the bridge on bridgeAddr to the fetch's proxy,
// which is to listen on the confinement's socket. Online, it needs
// bubblewrap, and the bridge, which the fetch builds first with its
// context (fetch.go checks and does both).
func (l *Loader) confine(env []string, dir string, online bool) (*confinement, error) {
	if _, err := dispatcher(); err != nil {
		return nil, fmt.Errorf("confine the go command: %w", err)
	}
	private, err := os.MkdirTemp("", "quorum-go-")
	if err != nil {
		return nil, err
	}
	c := &confinement{private: private, mod: filepath.Join(private, "mod")}
	if err := os.Mkdir(c.mod, 0o700); err != nil {
		c.release()
		return nil, err
	}
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "TMPDIR="), strings.HasPrefix(kv, "GOTOOLCHAIN="):
			continue
		case strings.HasPrefix(kv, "HOME="):
			// Its HOME and temporary directory are the sandbox's /tmp:
			// memory, bounded, gone with it.
			kv = "HOME=/tmp"
		case strings.HasPrefix(kv, "XDG_CONFIG_HOME="):
			kv = "XDG_CONFIG_HOME=/tmp"
		case strings.HasPrefix(kv, "GOCACHE="):
			// The sandbox's build cache, kept across loads: go list
			// keeps its index of the standard library and the modules
			// there, without which a load takes seconds more. Only
			// sandboxed go commands write it, and nothing in it is ever
			// run (docs/go-analysis.md, the threat model).
			kv = "GOCACHE=" + l.sandboxCache
		}
		out = append(out, kv)
	}
	out = append(out, "TMPDIR=/tmp", unconfinedToolchain)
	spec := sandbox.Spec{
		Exe: l.goPath,
		Env: out,
		// The tree is read-only to it: nothing it could leave there (a
		// link to a host file, a FIFO) is read by quorum afterwards.
		ReadOnly: []string{l.goRoot, dir},
		Writable: []string{c.mod, l.sandboxCache},
		Own:      []string{dir, c.mod},
		Set:      []string{"GOTOOLCHAIN=local"},
	}
	if online {
		exe, err := l.bridge(context.Background())
		if err != nil {
			c.release()
			return nil, fmt.Errorf("confine the go command: %w", err)
		}
		sockDir := filepath.Join(private, "proxy")
		if err := os.Mkdir(sockDir, 0o700); err != nil {
			c.release()
			return nil, err
		}
		c.socket = filepath.Join(sockDir, "s")
		spec.Before = []string{exe, bridgeAddr, c.socket}
		spec.ReadOnly = append(spec.ReadOnly, sockDir)
		spec.Own = append(spec.Own, sockDir)
	}
	if online && l.cfg.SeedModCache != "" && l.cfg.SeedModCache != l.modCache {
		if _, err := os.Stat(l.cfg.SeedModCache); err == nil {
			spec.ReadOnly = append(spec.ReadOnly, l.cfg.SeedModCache)
		}
	}
	if _, err := os.Stat(l.modCache); err == nil {
		if online {
			// It downloads into the shared cache.
			spec.Writable = append(spec.Writable, l.modCache)
		} else {
			spec.ReadOnly = append(spec.ReadOnly, l.modCache)
		}
	}
	script, err := sandbox.Script(spec, private)
	if err != nil {
		c.release()
		return nil, fmt.Errorf("confine the go command: %w", err)
	}
	path := filepath.Join(private, "go")
	if err := sandbox.WriteExecutable(path, []byte(script), 0o700); err != nil {
		c.release()
		return nil, err
	}
	c.env = append(out, sandboxVar+"="+path)
	return c, nil
}

// envFor returns the environment of go list for the module at modDir of
// the tree (root): its go.mod and go.sum are copied where the go command
// may write them (-mod=mod adds what is missing), and -modfile names the
// copy. In GOPATH mode there is no go.mod and nothing is written.
func (c *confinement) envFor(root, modDir string) ([]string, error) {
	if !slicesContains(c.env, "GO111MODULE=on") {
		return c.env, nil
	}
	c.n++
	dir := filepath.Join(c.mod, strconv.Itoa(c.n))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(modDir), name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, err
		}
	}
	if err := sandbox.Own(dir); err != nil {
		return nil, err
	}
	modfile := filepath.Join(dir, "go.mod")
	if strings.ContainsAny(modfile, " \t\n") {
		// GOFLAGS is split at spaces.
		return nil, fmt.Errorf("the temporary directory %q holds a space, which GOFLAGS cannot carry", c.mod)
	}
	env := make([]string, 0, len(c.env)+1)
	set := false
	for _, kv := range c.env {
		if flags, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			kv = "GOFLAGS=" + strings.TrimSpace(flags+" -modfile="+modfile)
			set = true
		}
		env = append(env, kv)
	}
	if !set {
		env = append(env, "GOFLAGS=-modfile="+modfile)
	}
	return env, nil
}

func slicesContains(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

// lookGo finds the go command cfg names, past the dispatcher.
func lookGo(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), sandboxVar) {
		// The dispatcher itself: the go command it stands before.
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			c := filepath.Join(d, name)
			if c == p {
				continue
			}
			if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return c, nil
			}
		}
	}
	return p, nil
}

// Prepare does ahead of the first review what its fetch would otherwise
// do then: when modules are fetched, build the fetch's bridge (once per
// machine and version; half a minute on two busy cores). serve calls it
// at start.
func (l *Loader) Prepare(ctx context.Context) error {
	if !l.cfg.fetching() || sandbox.Probe().Bubblewrap == "" {
		return nil
	}
	if _, _, err := l.environment(); err != nil {
		return err
	}
	_, err := l.bridge(ctx)
	return err
}
