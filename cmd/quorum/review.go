package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/llm"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/builtin"
)

const reviewSummary = `Reviews a change in a local git repository with the built-in specialists
(logic, security, performance, tests) and prints the review. The repository's
.quorum.yaml is read from the base commit. Nothing from the repository is run.

The Go modules the changed packages need are fetched first, through
--go-proxy (https://proxy.golang.org by default), checked against the
checksum database, into quorum's own module cache; private modules need
--go-private and a proxy that serves them (--go-netrc for its
credentials); --go-proxy off fetches nothing. A module that cannot be had
is named in the summary with what to configure.

With --llm-base-url, specialists also (or instead, see --llm-mode) review
through an OpenAI-compatible chat-completions endpoint; the change's diff is
then sent to it (docs/llm.md says what exactly).

By default the change is the head's commits since it left the default
branch (its merge-base with origin/HEAD, main or master); --base names
another base, and --uncommitted reviews the work tree's changes that are
not committed yet (staged, unstaged, and untracked files that are not
ignored) against HEAD. The work tree's files are read as they are: no
filter, hook or other program of the repository runs.

Exit status: 1 when the review fails the threshold (by default, when its
verdict is request_changes; see --fail-on); else 3 when changed source was
not analysed (a file skipped as binary, generated, vendored or minified, a
link, a file an analyzer failed on or no engine covers) or a specialist did
not finish: the summary names them, and --fail-on-unanalysed=false lets
such a review pass; 0 when it passes; 2 on errors (including a review that
could not run because too few specialists finished, and a change with no
file to review). --fail-on never with --fail-on-unanalysed=false never
fails.`

// verdictError is a review that fails --fail-on: exit status 1, as linters
// use it, leaving 2 for errors.
type verdictError struct {
	verdict   string
	threshold string
	failing   int
}

func (e verdictError) Error() string {
	return fmt.Sprintf("review fails: %s at or above %s (verdict %s)", plural(e.failing, "finding"), e.threshold, e.verdict)
}

// incompleteError is a review that passes --fail-on but did not analyse
// all of the change's source, or without a specialist that did not
// finish: exit status 3 (--fail-on-unanalysed), so that a CI gate does not
// pass what nobody reviewed.
type incompleteError struct {
	files  int
	failed []string
}

func (e incompleteError) Error() string {
	var what []string
	if e.files > 0 {
		what = append(what, plural(e.files, "file")+" of changed source not analysed")
	}
	if len(e.failed) > 0 {
		what = append(what, strings.Join(e.failed, ", ")+" did not finish")
	}
	return fmt.Sprintf("review incomplete: %s (the summary says why); --fail-on-unanalysed=false lets it pass", strings.Join(what, "; "))
}

// reviewFailure marks an error of quorum review: exit status 2, which the
// command's exit-status convention shares with usage errors.
func reviewFailure(err error) error { return usageError{err} }

func runReview(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// Specialists write progress to stderr from their goroutines.
	stderr = &lockedWriter{w: stderr}
	began := time.Now() // a saved review's duration runs from here to synthesis
	c := newCommand("review", "quorum review [flags]", reviewSummary)
	repoDir := c.String("repo", "", ".", "the git repository to review (a work tree or a git directory)")
	base := c.String("base", "", "", "base revision (default: the merge-base of the head with the default branch)")
	head := c.String("head", "", "HEAD", "head revision")
	uncommitted := c.Bool("uncommitted", "", false, "review the work tree's uncommitted changes (staged, unstaged, and untracked files not ignored) against HEAD, or against --base")
	format := c.String("format", "", "text", "output: text (for people), json (the API's full review) or sarif (SARIF 2.1.0)")
	failOn := c.String("fail-on", "", "", "exit 1 when a finding is at or above this severity (critical, high, medium, low, info), or never (default: the blocking severity, i.e. when the verdict is request_changes); see also --fail-on-unanalysed")
	failUnanalysed := c.Bool("fail-on-unanalysed", "", true, "exit 3 when the review passes --fail-on but changed source was not analysed or a specialist did not finish (false: exit 0)")
	timeout := c.Duration("timeout", "", pipeline.DefaultTimeout, "time limit of each specialist")
	color := c.String("color", "", "auto", "colour severities in text output: auto (when standard output is a terminal and NO_COLOR is unset), always or never")
	save := c.Bool("save", "", false, "store the review (and its events) in the database (see --data-dir), where quorum serve on the same database finds it")
	owner := c.String("owner", "", "local", "repository owner (and account) the review is stored under")
	name := c.String("name", "", "", "repository name the review is stored under (default: the repository directory's name)")
	pr := c.Int("pr", "", 0, "pull request number the review is stored under")
	maxReviews := c.Int("max-reviews", "QUORUM_MAX_REVIEWS", pipeline.DefaultMaxReviews, "with --save: reviews an account may have per rate-limit window")
	window := c.Duration("review-window", "QUORUM_REVIEW_WINDOW", pipeline.DefaultRateWindow, "with --save: length of the review rate-limit window (windows are aligned to the Unix epoch: 1h windows start on the hour, UTC)")
	analyzersDir := addAnalyzersDirFlag(c)
	gf := addGoFlags(c, ownModCacheHelp+", which reads the go command's GOMODCACHE first")
	db := addDBFlags(c, getenv)
	lf := addLLMFlags(c)
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	// quorum review fetches into a cache of its own, reading the
	// developer's module cache first.
	goCfg, err := gf.config(ownModCache(getenv), userModCache())
	if err != nil {
		return err
	}
	llmSet, err := lf.settings(getenv)
	if err != nil {
		return err
	}
	if *maxReviews < 1 || *window <= 0 {
		return usageError{fmt.Errorf("--max-reviews and --review-window must be positive")}
	}
	if !slices.Contains([]string{"text", "json", "sarif"}, *format) {
		return usageError{fmt.Errorf("--format: want text, json or sarif, got %q", *format)}
	}
	if *failOn != "" && *failOn != "never" && specialist.SeverityRank(*failOn) < 0 {
		return usageError{fmt.Errorf("--fail-on: want critical, high, medium, low, info or never, got %q", *failOn)}
	}
	if !slices.Contains([]string{"auto", "always", "never"}, *color) {
		return usageError{fmt.Errorf("--color: want auto, always or never, got %q", *color)}
	}
	if *pr < 0 {
		return usageError{fmt.Errorf("--pr: want 0 or more, got %d", *pr)}
	}
	if err := account.ValidateLogin(*owner); *save && err != nil {
		return usageError{fmt.Errorf("--owner: %w", err)}
	}
	if *name == "" {
		abs, err := filepath.Abs(*repoDir)
		if err != nil {
			return reviewFailure(err)
		}
		*name = filepath.Base(abs)
	}

	ref := change.Ref{Owner: *owner, Repo: *name, PRNumber: *pr, Base: *base, Head: *head}
	var ch *change.Change
	if *uncommitted {
		if *head != "HEAD" {
			return usageError{errors.New("--uncommitted reviews the work tree against HEAD (or --base); it takes no --head")}
		}
		var cleanup func()
		ch, cleanup, err = change.NewLocal(*repoDir).Uncommitted(ctx, ref)
		if err == nil {
			defer cleanup()
		}
	} else {
		ch, err = change.NewLocal(*repoDir).Change(ctx, ref)
	}
	if err != nil {
		return reviewFailure(fmt.Errorf("read the change: %w", err))
	}
	if len(ch.Files) == 0 {
		return reviewFailure(nothingToReview(ch, *base, *head, *uncommitted))
	}
	cfg, problems := repoconfig.Load(ctx, ch)

	// With --save, the account's review rate limit is checked before the
	// specialists run.
	var saver func(pipeline.Result) error
	if *save {
		d, err := db.open(ctx, slog.New(slog.DiscardHandler))
		if err != nil {
			return reviewFailure(err)
		}
		defer d.Close()
		acct, err := account.Ensure(ctx, d.Writer(), account.PlatformGitHub, *owner, "")
		if err != nil {
			return reviewFailure(err)
		}
		repo, err := account.EnsureRepository(ctx, d.Writer(), acct.ID, *owner, *name)
		if err != nil {
			return reviewFailure(err)
		}
		limits := pipeline.RateLimit{Window: *window, MaxReviews: *maxReviews}
		if _, err := pipeline.CheckRateLimit(ctx, d.Reader(), acct.ID, limits, time.Now()); err != nil {
			if errors.Is(err, pipeline.ErrRateLimited) {
				skipped := pipeline.Skipped(*owner, *name, *pr, ch.HeadSHA, event.ReasonRateLimit, time.Now())
				if _, serr := pipeline.Save(ctx, d, acct.ID, repo.ID, skipped, limits); serr != nil {
					return reviewFailure(serr)
				}
			}
			return reviewFailure(err)
		}
		saver = func(res pipeline.Result) error {
			saved, err := pipeline.Save(ctx, d, acct.ID, repo.ID, res, limits)
			if err != nil {
				return err
			}
			if saved.ReviewID != "" {
				fmt.Fprintf(stderr, "quorum: saved review %s of %s/%s#%d in %s; a quorum serve on that database serves it at GET /v1/reviews/%s\n",
					saved.ReviewID, *owner, *name, *pr, db.describe(), saved.ReviewID)
			} else {
				fmt.Fprintf(stderr, "quorum: saved review.failed (%s) for %s/%s#%d in %s\n", res.Reason, *owner, *name, *pr, db.describe())
			}
			return nil
		}
	}

	specs, missing, err := builtin.New(cfg.Specialists, goanalysis.NewLoader(goCfg), polyglot.New(ctx, polyglot.Config{Dir: *analyzersDir, Ran: analyzerPrinter(stderr)}))
	if err != nil {
		return reviewFailure(err)
	}
	if llmSet != nil {
		llmSet.warn(cfg, stderr)
		specs, missing, err = llmSet.wiring(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))).
			Wire(specs, missing, llmInstructions(cfg))
		if err != nil {
			return reviewFailure(err)
		}
	}
	notes := problems
	if len(missing) > 0 {
		notes = append(slices.Clone(problems), fmt.Sprintf("specialists %s are enabled but not available in this build.", strings.Join(missing, ", ")))
	}
	fmt.Fprintf(stderr, "quorum: reviewing %s..%s with %s\n", shortSHA(ch.BaseSHA), shortSHA(ch.HeadSHA), strings.Join(describeSpecialists(specs), ", "))
	res := pipeline.Run(ctx, ch, specs, pipeline.Options{
		Timeout:          *timeout,
		Quorum:           cfg.Quorum,
		BlockingSeverity: cfg.BlockingSeverity,
		MaxFindings:      cfg.MaxFindings,
		Include:          cfg.Includes,
		Notes:            notes,
		Rules:            cfg.Rules,
		Progress:         progressPrinter(stderr),
	})
	if err := ctx.Err(); err != nil {
		return reviewFailure(fmt.Errorf("review interrupted: %w", err))
	}
	if saver != nil {
		res.Review.Duration = res.Review.SynthesizedAt.Sub(began)
		if err := saver(res); err != nil {
			return reviewFailure(err)
		}
	}
	if !res.Completed() {
		fmt.Fprintln(stderr, terminalSafe(res.Review.Summary, "\t\n"))
		return reviewFailure(fmt.Errorf("the review could not run (%s)", res.Reason))
	}

	switch *format {
	case "json":
		err = writeIndentedJSON(stdout, res.Review)
	case "sarif":
		err = writeIndentedJSON(stdout, toSARIF(ctx, ch, res.Review))
	default:
		useColor := *color == "always" || *color == "auto" && getenv("NO_COLOR") == "" && isTerminal(stdout)
		err = writeText(stdout, res.Review, useColor)
	}
	if err != nil {
		return reviewFailure(err)
	}

	threshold := *failOn
	if threshold == "" {
		threshold = cfg.BlockingSeverity
	}
	if threshold != "never" {
		n := 0
		for _, f := range res.Review.Findings {
			if specialist.SeverityRank(f.Severity) <= specialist.SeverityRank(threshold) {
				n++
			}
		}
		if n > 0 {
			return verdictError{verdict: res.Review.Verdict, threshold: threshold, failing: n}
		}
	}
	if *failUnanalysed && (len(res.Unanalysed) > 0 || len(res.Review.SpecialistsFailed) > 0) {
		return incompleteError{files: len(res.Unanalysed), failed: res.Review.SpecialistsFailed}
	}
	return nil
}

// nothingToReview says why a change has no file to review and how to pick
// one that has.
func nothingToReview(ch *change.Change, base, head string, uncommitted bool) error {
	what := fmt.Sprintf("%s..%s changes no file", shortSHA(ch.BaseSHA), shortSHA(ch.HeadSHA))
	switch {
	case len(ch.Skipped) > 0:
		what = fmt.Sprintf("%s quorum reviews (%s changed, all skipped: generated, vendored, lock, binary or minified)",
			what, plural(len(ch.Skipped), "file"))
	case uncommitted:
		what = "the work tree has no uncommitted changes (staged, unstaged or untracked) against " + cmp.Or(base, "HEAD")
	case ch.BaseSHA == ch.HeadSHA && base == "":
		what = fmt.Sprintf("%s (%s) is its own base: it has no commits since it left the default branch (you may be on the default branch)",
			head, shortSHA(ch.HeadSHA))
	case ch.BaseSHA == ch.HeadSHA:
		what = fmt.Sprintf("--base %s and --head %s are the same commit (%s)", base, head, shortSHA(ch.HeadSHA))
	}
	how := "name a base with --base (e.g. --base HEAD~1 or --base origin/main), or review the work tree's uncommitted changes with --uncommitted"
	if uncommitted && len(ch.Skipped) == 0 {
		// It was --uncommitted: what is left is the commits.
		how = "change a file first, or review commits instead: drop --uncommitted and name a base with --base (e.g. --base HEAD~1 or --base origin/main)"
	}
	return fmt.Errorf("nothing to review: %s; %s", what, how)
}

// progressPrinter reports each specialist's start and end on w. Notes and
// errors name files of the repository, so they are printed terminal-safe.
func progressPrinter(w io.Writer) func(pipeline.Progress) {
	var mu sync.Mutex
	return func(p pipeline.Progress) {
		mu.Lock()
		defer mu.Unlock()
		name := oneLine(p.Specialist)
		switch p.Stage {
		case pipeline.StageStarted:
			fmt.Fprintf(w, "quorum: %-11s started\n", name)
		case pipeline.StageFinished:
			fmt.Fprintf(w, "quorum: %-11s finished in %s, %s\n", name, p.Duration.Round(time.Millisecond), plural(p.Findings, "finding"))
			for _, n := range p.Notes {
				fmt.Fprintf(w, "quorum: %-11s %s\n", name, oneLine(n))
			}
		case pipeline.StageFailed:
			why, _, _ := strings.Cut(p.Err.Error(), "\n")
			fmt.Fprintf(w, "quorum: %-11s failed after %s: %s\n", name, p.Duration.Round(time.Millisecond), oneLine(why))
		}
	}
}

// analyzerPrinter reports each analyzer of another language's work on the
// change on w, with the specialists' progress.
func analyzerPrinter(w io.Writer) func(string, int, time.Duration, error) {
	var mu sync.Mutex
	return func(tool string, files int, took time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			why, _, _ := strings.Cut(err.Error(), "\n")
			fmt.Fprintf(w, "quorum: %-11s failed after %s on %s: %s\n", oneLine(tool), took.Round(time.Millisecond), plural(files, "file"), oneLine(why))
			return
		}
		fmt.Fprintf(w, "quorum: %-11s ran in %s on %s\n", oneLine(tool), took.Round(time.Millisecond), plural(files, "file"))
	}
}

func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ANSI colours of the severities.
var severityColor = map[string]string{
	specialist.SeverityCritical: "\x1b[1;31m",
	specialist.SeverityHigh:     "\x1b[31m",
	specialist.SeverityMedium:   "\x1b[33m",
	specialist.SeverityLow:      "\x1b[36m",
	specialist.SeverityInfo:     "\x1b[2m",
}

// writeText prints the review for people: findings grouped by file, files
// in the order of their most severe finding, findings by line, then the
// summary. What comes from the repository is printed terminal-safe.
func writeText(w io.Writer, r review.Full, color bool) error {
	var b strings.Builder
	byFile := map[string][]review.Finding{}
	var files []string
	for _, f := range r.Findings {
		if _, ok := byFile[f.Path]; !ok {
			files = append(files, f.Path)
		}
		byFile[f.Path] = append(byFile[f.Path], f)
	}
	paint := func(sev, s string) string {
		if !color {
			return s
		}
		return severityColor[sev] + s + "\x1b[0m"
	}
	for _, file := range files {
		fs := byFile[file]
		slices.SortStableFunc(fs, func(a, b review.Finding) int { return a.Line - b.Line })
		if color {
			fmt.Fprintf(&b, "\x1b[1m%s\x1b[0m\n", oneLine(file))
		} else {
			fmt.Fprintf(&b, "%s\n", oneLine(file))
		}
		for _, f := range fs {
			loc := oneLine(f.Path)
			if f.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, f.Line)
			}
			fmt.Fprintf(&b, "  %s %s [%s] %s (%s)\n", loc, paint(f.Severity, oneLine(strings.ToUpper(f.Severity))),
				oneLine(f.Specialist), oneLine(f.Headline), oneLine(f.Rule))
			for _, l := range f.Excerpt.Lines {
				if l.Number >= f.Line && l.Number <= max(f.EndLine, f.Line) {
					// A line of code keeps its tabs; a CR ending it is its line end.
					fmt.Fprintf(&b, "      %5d │ %s\n", l.Number, terminalSafe(strings.TrimRight(l.Text, " \t\r"), "\t"))
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(f.Body), "\n") {
				if l = strings.TrimRight(l, " \t\r"); l == "" {
					b.WriteString("\n")
				} else {
					fmt.Fprintf(&b, "      %s\n", terminalSafe(l, "\t"))
				}
			}
			if f.SuggestedPatch != nil {
				b.WriteString("      Suggested fix:\n")
				for _, l := range strings.Split(strings.TrimRight(*f.SuggestedPatch, "\n"), "\n") {
					fmt.Fprintf(&b, "        %s\n", terminalSafe(strings.TrimSuffix(l, "\r"), "\t"))
				}
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "%s\n\nVerdict: %s\n", terminalSafe(r.Summary, "\t\n"), oneLine(strings.ReplaceAll(r.Verdict, "_", " ")))
	_, err := io.WriteString(w, b.String())
	return err
}

// SARIF 2.1.0 (OASIS), the format code-scanning tools read.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	ShortDescription     sarifMessage   `json:"shortDescription"`
	DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Fixes               []sarifFix        `json:"fixes,omitempty"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
}

type sarifFix struct {
	Description     sarifMessage          `json:"description"`
	ArtifactChanges []sarifArtifactChange `json:"artifactChanges"`
}

type sarifArtifactChange struct {
	ArtifactLocation sarifArtifact      `json:"artifactLocation"`
	Replacements     []sarifReplacement `json:"replacements"`
}

type sarifReplacement struct {
	DeletedRegion   sarifRegion   `json:"deletedRegion"`
	InsertedContent *sarifMessage `json:"insertedContent,omitempty"`
}

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(severity string) string {
	switch severity {
	case specialist.SeverityCritical, specialist.SeverityHigh:
		return "error"
	case specialist.SeverityMedium:
		return "warning"
	}
	return "note"
}

// securitySeverity is GitHub code scanning's score for security rules.
var securitySeverity = map[string]string{
	specialist.SeverityCritical: "9.5", specialist.SeverityHigh: "8.0",
	specialist.SeverityMedium: "5.5", specialist.SeverityLow: "3.0", specialist.SeverityInfo: "1.0",
}

// fingerprintKey names quorum's fingerprint among a result's partial
// fingerprints; the version changes if the recipe does.
const fingerprintKey = "quorumFindingHash/v1"

func toSARIF(ctx context.Context, ch *change.Change, r review.Full) sarifLog {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "quorum", Version: buildVersion(),
			InformationURI: "https://github.com/quorum-review/quorum", Rules: []sarifRule{}}},
		Results: []sarifResult{},
	}
	ruleIndex := map[string]int{}
	for _, f := range r.Findings {
		i, ok := ruleIndex[f.Rule]
		if !ok {
			i = len(run.Tool.Driver.Rules)
			ruleIndex[f.Rule] = i
			rule := sarifRule{ID: f.Rule, ShortDescription: sarifMessage{Text: f.Headline},
				DefaultConfiguration: sarifConfig{Level: sarifLevel(f.Severity)},
				Properties:           map[string]any{"tags": []string{f.Category}}}
			if f.Category == specialist.CategorySecurity {
				rule.Properties["security-severity"] = securitySeverity[f.Severity]
			}
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, rule)
		}
		loc := sarifPhysical{ArtifactLocation: sarifArtifact{URI: f.Path}}
		if f.Line > 0 {
			loc.Region = &sarifRegion{StartLine: f.Line, EndLine: max(f.EndLine, f.Line)}
		}
		text := f.Headline
		if body := strings.TrimSpace(f.Body); body != "" {
			text += "\n\n" + body
		}
		res := sarifResult{
			RuleID: f.Rule, RuleIndex: i, Level: sarifLevel(f.Severity),
			Message:             sarifMessage{Text: text},
			Locations:           []sarifLocation{{PhysicalLocation: loc}},
			PartialFingerprints: map[string]string{fingerprintKey: f.Fingerprint},
			Properties:          map[string]any{"severity": f.Severity, "category": f.Category, "specialist": f.Specialist},
		}
		if f.SuggestedPatch != nil {
			if fix, ok := sarifFixOf(ctx, ch, f.Path, *f.SuggestedPatch); ok {
				res.Fixes = []sarifFix{fix}
			}
		}
		run.Results = append(run.Results, res)
	}
	return sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}
}

// sarifFixOf turns a simple suggested patch — one hunk of one file,
// replacing lines inside the file — into a SARIF fix; anything else has
// none (the patch is still in the JSON output).
func sarifFixOf(ctx context.Context, ch *change.Change, filePath, patch string) (sarifFix, bool) {
	if !strings.HasPrefix(patch, "diff --git ") {
		patch = fmt.Sprintf("diff --git a/%s b/%s\n", filePath, filePath) + patch
	}
	files, err := change.ParseDiff(strings.NewReader(patch))
	if err != nil || len(files) != 1 || len(files[0].Hunks) != 1 || files[0].NewPath != filePath || files[0].OldPath != filePath {
		return sarifFix{}, false
	}
	h := files[0].Hunks[0]
	data, err := ch.ReadFile(ctx, filePath)
	if err != nil || h.OldLines == 0 || h.OldStart+h.OldLines > strings.Count(string(data), "\n") {
		return sarifFix{}, false // an insertion, or a hunk that reaches the file's end
	}
	var inserted strings.Builder
	for _, l := range h.Lines {
		if l.Kind != change.KindDeleted {
			inserted.WriteString(l.Text + "\n")
		}
	}
	return sarifFix{
		Description: sarifMessage{Text: "Suggested fix"},
		ArtifactChanges: []sarifArtifactChange{{
			ArtifactLocation: sarifArtifact{URI: filePath},
			Replacements: []sarifReplacement{{
				// Whole lines: from the hunk's first line up to the start
				// of the line after it.
				DeletedRegion:   sarifRegion{StartLine: h.OldStart, StartColumn: 1, EndLine: h.OldStart + h.OldLines, EndColumn: 1},
				InsertedContent: &sarifMessage{Text: inserted.String()},
			}},
		}},
	}, true
}

// describeSpecialists names the specialists with their engines, for the
// progress display.
func describeSpecialists(specs []specialist.Specialist) []string {
	var out []string
	for _, s := range specs {
		switch s.(type) {
		case *llm.Also:
			out = append(out, s.Name()+" (built-in + LLM)")
		case *llm.Engine:
			out = append(out, s.Name()+" (LLM)")
		default:
			out = append(out, s.Name())
		}
	}
	return out
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
