package goanalysis

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/quorum-review/quorum/internal/sandbox"
)

// The go command that go/packages starts for a load (go list, go env,
// go version) runs in the analyzers' sandbox (internal/sandbox): as
// nobody, without network unless the operator allows it, seeing only the
// toolchain, the module cache (read-only), the copied tree and private
// directories for its HOME and build cache, with the sandbox's limits.
//
// go/packages starts "go" found on this process's PATH (exec.Command
// resolves a bare name with the process's PATH, not the child's), so a
// dispatcher named go goes first on PATH, once per process: with
// QUORUM_GO_SANDBOX in the child's environment (a load's) it runs that
// load's sandbox script, without it the go command it stands before.

// sandboxVar names, in the go command's environment, the script that
// runs it confined.
const sandboxVar = "QUORUM_GO_SANDBOX"

var (
	dispatchOnce sync.Once
	dispatchErr  error
)

// installDispatcher puts the dispatcher in dir/bin and first on PATH,
// once per process; goPath is the go command it stands before.
func installDispatcher(dir, goPath string) error {
	dispatchOnce.Do(func() {
		bin := filepath.Join(dir, "bin")
		if err := os.MkdirAll(bin, 0o700); err != nil {
			dispatchErr = err
			return
		}
		script := "#!/bin/sh\n# Written by quorum (internal/goanalysis): a load's go command runs in its sandbox.\n" +
			"if [ -n \"${" + sandboxVar + ":-}\" ]; then exec \"$" + sandboxVar + "\" \"$@\"; fi\n" +
			"exec " + shellQuote(goPath) + " \"$@\"\n"
		tmp := filepath.Join(bin, ".go.tmp")
		if err := os.WriteFile(tmp, []byte(script), 0o700); err != nil {
			dispatchErr = err
			return
		}
		if err := os.Rename(tmp, filepath.Join(bin, "go")); err != nil {
			dispatchErr = err
			return
		}
		dispatchErr = os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	})
	return dispatchErr
}

// confine returns env for a load of the tree at dir whose go command runs
// confined, and a function that removes what it made.
func (l *Loader) confine(env []string, dir string) ([]string, func(), error) {
	private, err := os.MkdirTemp("", "quorum-go-")
	if err != nil {
		return nil, nil, err
	}
	release := func() { os.RemoveAll(private) }
	home := filepath.Join(private, "home")
	tmp := filepath.Join(private, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			release()
			return nil, nil, err
		}
	}
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "TMPDIR="):
			continue
		case strings.HasPrefix(kv, "HOME="):
			kv = "HOME=" + home
		case strings.HasPrefix(kv, "XDG_CONFIG_HOME="):
			kv = "XDG_CONFIG_HOME=" + home
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
	out = append(out, "TMPDIR="+tmp)
	spec := sandbox.Spec{
		Exe:      l.goPath,
		Env:      out,
		ReadOnly: []string{l.goRoot},
		Writable: []string{dir, home, tmp, l.sandboxCache},
		Own:      []string{dir, home, tmp},
		Network:  l.cfg.Network,
	}
	if _, err := os.Stat(l.modCache); err == nil {
		if l.cfg.Network {
			// It downloads into the shared cache.
			spec.Writable = append(spec.Writable, l.modCache)
		} else {
			spec.ReadOnly = append(spec.ReadOnly, l.modCache)
		}
	}
	script, err := sandbox.Script(spec, private)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("confine the go command: %w", err)
	}
	path := filepath.Join(private, "go")
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		release()
		return nil, nil, err
	}
	return append(out, sandboxVar+"="+path), release, nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
