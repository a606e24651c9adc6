package goanalysis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/tools/go/analysis"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// Finding turns a diagnostic into a built-in finding with the given rule,
// category and severity. The headline is the diagnostic's first line; a
// syntax-only program's findings say so in Note.
func (p *Program) Finding(d Diagnostic, rule, category, severity string) specialist.Finding {
	headline, rest, _ := strings.Cut(strings.TrimSpace(d.Message), "\n")
	body := strings.TrimSpace(rest)
	if d.Analyzer != nil && d.Analyzer.URL != "" {
		body = strings.TrimSpace(body + "\n\nSee " + d.Analyzer.URL + ".")
	}
	if d.Patch != "" && d.FixMessage != "" {
		body = strings.TrimSpace(body + "\n\nSuggested fix: " + d.FixMessage + ".")
	}
	f := specialist.Finding{
		Rule:           rule,
		Category:       category,
		Severity:       severity,
		Path:           d.Path,
		Line:           d.Line,
		EndLine:        d.EndLine,
		Headline:       headline,
		Body:           body,
		SuggestedPatch: d.Patch,
		Engine:         specialist.EngineBuiltin,
	}
	if p.SyntaxOnly != "" {
		f.Note = "syntax-only: the Go packages could not be type-checked (" + p.SyntaxOnly + ")"
	}
	return f
}

// GitListFiles returns a Config.ListFiles that lists a change's files with
// git ls-tree in the repository at dir, for a local repository. It reads
// the object database only, with the repository's configuration unable to
// run anything (no pager, no hooks, no fsmonitor, no system or global
// configuration).
func GitListFiles(dir string) func(ctx context.Context, c *change.Change, rev string) ([]string, error) {
	return func(ctx context.Context, _ *change.Change, rev string) ([]string, error) {
		if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, " \n\x00:") {
			return nil, fmt.Errorf("list files at %q: %w", rev, change.ErrInvalidRef)
		}
		ctx, cancel := context.WithTimeout(ctx, change.DefaultGitTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", "--no-pager",
			"-c", "core.fsmonitor=false", "-c", "core.hooksPath="+os.DevNull,
			"-c", "protocol.allow=never",
			"ls-tree", "-r", "-z", "--full-tree", "--name-only", rev)
		cmd.Dir = dir
		cmd.Env = []string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + os.DevNull,
			"XDG_CONFIG_HOME=" + os.DevNull,
			"LC_ALL=C",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + os.DevNull,
			"GIT_NO_REPLACE_OBJECTS=1",
			"GIT_NO_LAZY_FETCH=1",
			"GIT_TERMINAL_PROMPT=0",
			"GIT_OPTIONAL_LOCKS=0",
		}
		cmd.WaitDelay = time.Second
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git ls-tree %s: %w", rev, err)
		}
		var paths []string
		for p := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			if p != "" {
				paths = append(paths, p)
			}
		}
		return paths, nil
	}
}

// Classify names a diagnostic's rule and severity; false drops it.
type Classify func(d Diagnostic) (rule, severity string, ok bool)

// Findings loads the change's Go packages, runs the analyzers (typed, or
// syntax when the packages cannot be type-checked) and returns their
// diagnostics on the change's added or modified lines as findings of
// category, ranked by classify. A change without Go files has none.
func (l *Loader) Findings(ctx context.Context, c *change.Change, category string, typed, syntax []*analysis.Analyzer, classify Classify) ([]specialist.Finding, error) {
	prog, err := l.Load(ctx, c)
	if err != nil || prog == nil {
		return nil, err
	}
	ds, err := prog.Analyze(ctx, typed, syntax)
	if err != nil {
		return nil, err
	}
	var fs []specialist.Finding
	for _, d := range ds {
		rule, severity, ok := classify(d)
		if !ok {
			continue
		}
		fs = append(fs, prog.Finding(d, rule, category, severity))
	}
	return specialist.OnChangedLines(c, fs), nil
}
