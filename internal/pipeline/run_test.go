package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/storetest"
)

// fake is a test specialist: it returns its findings, or fails in one of
// the ways a real one can.
type fake struct {
	name     string
	findings []specialist.Finding
	find     func(ctx context.Context, c *change.Change) []specialist.Finding
	err      error
	hang     bool // blocks until its context ends, as a slow specialist honouring ctx does
	panics   bool
	// blind says the fake analysed nothing; by default it says it
	// analysed every changed file, as an engine covering them would.
	blind bool
}

func (f fake) Name() string { return f.name }

func (f fake) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	if !f.blind {
		for _, cf := range c.Files {
			specialist.Analysed(ctx, "fake", cf.NewPath)
		}
	}
	switch {
	case f.hang:
		<-ctx.Done()
		return nil, ctx.Err()
	case f.panics:
		panic("boom")
	case f.err != nil:
		return nil, f.err
	case f.find != nil:
		return f.find(ctx, c), nil
	}
	return f.findings, nil
}

func fnd(rule, severity, path string, line int, headline string) specialist.Finding {
	return specialist.Finding{Rule: rule, Category: specialist.CategoryLogic, Severity: severity, Path: path,
		Line: line, EndLine: line, Headline: headline, Body: "Why it matters.", Engine: specialist.EngineBuiltin}
}

var t0 = time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)

func opts() Options {
	return Options{Now: storetest.NewClock(t0).Now, Timeout: time.Minute}
}

func TestQuorumMetNamesTheFailure(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	specs := []specialist.Specialist{
		fake{name: "logic", findings: []specialist.Finding{fnd("go-vet:printf", "medium", "app.go", 10, "Bad format")}},
		fake{name: "security"},
		fake{name: "performance", err: errors.New("analyzer crashed")},
		fake{name: "tests"},
	}
	res := Run(context.Background(), c, specs, opts())
	if !res.Completed() {
		t.Fatalf("reason %q, want a completed review; summary:\n%s", res.Reason, res.Review.Summary)
	}
	if res.Quorum != 3 {
		t.Errorf("quorum = %d, want 3 of 4 by default", res.Quorum)
	}
	if got := res.Review.SpecialistsFailed; !slices.Equal(got, []string{"performance"}) {
		t.Errorf("failed = %v, want [performance]", got)
	}
	if got := res.Review.SpecialistsSucceeded; !slices.Equal(got, []string{"logic", "security", "tests"}) {
		t.Errorf("succeeded = %v", got)
	}
	for _, want := range []string{"performance (analyzer crashed)", "3 of 4 specialists (quorum 3)", "logic 1, security 0, tests 0"} {
		if !strings.Contains(res.Review.Summary, want) {
			t.Errorf("summary does not say %q:\n%s", want, res.Review.Summary)
		}
	}
	if res.Review.Verdict != review.VerdictComment || len(res.Review.Findings) != 1 {
		t.Errorf("verdict %s with %d findings, want comment with 1", res.Review.Verdict, len(res.Review.Findings))
	}
	if !res.Review.SynthesizedAt.Equal(t0) {
		t.Errorf("synthesized at %v, want the clock's %v", res.Review.SynthesizedAt, t0)
	}
}

func TestQuorumNotMet(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	var mu sync.Mutex
	var progress []string
	o := opts()
	o.Timeout = 50 * time.Millisecond
	o.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, p.Specialist+" "+string(p.Stage))
	}
	specs := []specialist.Specialist{
		fake{name: "logic", findings: []specialist.Finding{fnd("r", "high", "app.go", 10, "x")}},
		fake{name: "security", err: errors.New("no detector")},
		fake{name: "performance", hang: true},
		fake{name: "tests", panics: true},
	}
	res := Run(context.Background(), c, specs, o)
	if res.Reason != event.ReasonQuorumFailure {
		t.Fatalf("reason %q, want quorum_failure", res.Reason)
	}
	if got := res.Review.SpecialistsFailed; !slices.Equal(got, []string{"security", "performance", "tests"}) {
		t.Errorf("failed = %v", got)
	}
	if len(res.Review.Findings) != 0 {
		t.Errorf("a failed run has %d findings", len(res.Review.Findings))
	}
	if err := res.Outcomes[2].Err; !errors.Is(err, ErrTimeout) {
		t.Errorf("hanging specialist's error = %v, want ErrTimeout", err)
	}
	if err := res.Outcomes[3].Err; err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Errorf("panicking specialist's error = %v, want the panic", err)
	}
	for _, want := range []string{"1 of 4 specialists succeeded, and 3 must", "performance (timed out after 50ms)", "tests (panic: boom)"} {
		if !strings.Contains(res.Review.Summary, want) {
			t.Errorf("summary does not say %q:\n%s", want, res.Review.Summary)
		}
	}
	slices.Sort(progress)
	want := []string{"logic finished", "logic started", "performance failed", "performance started",
		"security failed", "security started", "tests failed", "tests started"}
	if !slices.Equal(progress, want) {
		t.Errorf("progress = %v, want %v", progress, want)
	}

	// The same failures meet a quorum of 1.
	o.Quorum = 1
	if res := Run(context.Background(), c, specs, o); !res.Completed() {
		t.Errorf("quorum 1 with 1 success: reason %q", res.Reason)
	}
}

func TestSynthesisDropsInvalidAndUnchanged(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	bad := fnd("", "high", "app.go", 10, "no rule")
	res := Run(context.Background(), c, []specialist.Specialist{fake{name: "logic", findings: []specialist.Finding{
		bad,
		fnd("r1", "high", "app.go", 6, "on an unchanged line"),
		fnd("r2", "high", "other.go", 1, "on a file the change does not touch"),
		fnd("r3", "low", "util.go", 0, "file-level"),
		fnd("r4", "low", "app.go", 11, "kept"),
	}}}, opts())
	var got []string
	for _, f := range res.Review.Findings {
		got = append(got, f.Headline)
	}
	if !slices.Equal(got, []string{"kept", "file-level"}) {
		t.Errorf("findings = %v, want [kept file-level]", got)
	}
	if res.Dropped.Invalid != 1 || res.Dropped.OffChange != 2 {
		t.Errorf("dropped = %+v, want 1 invalid and 2 off the change", res.Dropped)
	}
	if !strings.Contains(res.Review.Summary, "1 finding discarded as malformed") {
		t.Errorf("summary does not count the malformed finding:\n%s", res.Review.Summary)
	}
}

func TestDedupe(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	sec := fnd("gosec:G201", "high", "app.go", 10, "SQL built with fmt.Sprintf")
	sec.Category = specialist.CategorySecurity
	llm := fnd("llm:logic", "medium", "app.go", 9, "SQL query built with fmt.Sprintf!")
	llm.EndLine = 11
	llm.Engine = specialist.EngineLLM
	res := Run(context.Background(), c, []specialist.Specialist{
		fake{name: "logic", findings: []specialist.Finding{
			llm,
			fnd("go-vet:printf", "low", "app.go", 10, "Unrelated problem on the same line"),
			fnd("gosec:G201", "low", "app.go", 13, "Same rule, lines apart"),
		}},
		fake{name: "security", findings: []specialist.Finding{sec}},
		fake{name: "performance", findings: []specialist.Finding{fnd("perf:loop", "low", "app.go", 13, "Same rule, lines apart")}},
	}, opts())
	fs := res.Review.Findings
	if len(fs) != 3 {
		for _, f := range fs {
			t.Logf("%s %s %s:%d %s", f.Specialist, f.Severity, f.Path, f.Line, f.Headline)
		}
		t.Fatalf("%d findings, want 3 (the SQL one merged, the line-13 one merged, the unrelated one apart)", len(fs))
	}
	sql := fs[0]
	if sql.Specialist != "security" || sql.Severity != "high" || sql.Rule != "gosec:G201" {
		t.Errorf("merged finding = %s %s %s, want security's high gosec:G201 (the most severe)", sql.Specialist, sql.Severity, sql.Rule)
	}
	if !strings.Contains(sql.Body, "Also found by logic (llm:logic).") {
		t.Errorf("merged body does not name the other specialist: %q", sql.Body)
	}
	if fs[2].Line != 13 || !strings.Contains(fs[2].Body, "Also found by performance (perf:loop).") {
		t.Errorf("line-13 finding = %+v, want logic's gosec:G201 naming performance", fs[2])
	}
	if res.Dropped.Merged != 2 {
		t.Errorf("merged %d, want 2 (the SQL one and the same rule+headline on line 13)", res.Dropped.Merged)
	}
}

func TestFingerprintStableWhenLineMoves(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"app.go": baseApp})
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "first")
	r.Write(map[string]string{"app.go": headApp})
	r.Commit("first push")
	r.Git("checkout", "-q", "-b", "moved", "main")
	// The same code three lines lower and re-indented.
	r.Write(map[string]string{"app.go": strings.Replace(strings.Replace(headApp, "import \"fmt\"\n", "import \"fmt\"\n\n// One.\n// Two.\n", 1),
		"\tq := fmt.Sprintf", "\t  q  :=   fmt.Sprintf", 1)})
	r.Commit("rebased")
	r.Git("checkout", "-q", "-b", "changed", "main")
	r.Write(map[string]string{"app.go": strings.Replace(headApp, "name = '%s'", "id = '%s'", 1)})
	r.Commit("different code")

	// The specialist finds the line wherever it is.
	finder := fake{name: "security", find: func(ctx context.Context, c *change.Change) []specialist.Finding {
		data, _ := c.ReadFile(ctx, "app.go")
		for i, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, "fmt.Sprintf") {
				return []specialist.Finding{fnd("gosec:G201", "high", "app.go", i+1, "SQL built with fmt.Sprintf")}
			}
		}
		return nil
	}}
	one := func(head string) review.Finding {
		t.Helper()
		res := Run(context.Background(), prChange(t, r, "main", head), []specialist.Specialist{finder}, opts())
		if len(res.Review.Findings) != 1 {
			t.Fatalf("%s: %d findings, want 1", head, len(res.Review.Findings))
		}
		return res.Review.Findings[0]
	}
	first, moved, changed := one("first"), one("moved"), one("changed")
	if first.Line != 10 || moved.Line != 13 {
		t.Fatalf("lines %d and %d, want 10 and 13", first.Line, moved.Line)
	}
	if first.Fingerprint != moved.Fingerprint {
		t.Errorf("fingerprint changed when the line moved: %s → %s", first.Fingerprint, moved.Fingerprint)
	}
	if first.Fingerprint == changed.Fingerprint {
		t.Errorf("fingerprint %s unchanged when the flagged code changed", first.Fingerprint)
	}
	if len(first.Fingerprint) != 32 {
		t.Errorf("fingerprint %q, want 32 hex digits", first.Fingerprint)
	}
}

func TestFingerprintOfDuplicatesDiffers(t *testing.T) {
	t.Parallel()
	a := Fingerprint("r", "a.go", []string{"x", "y", "z"}, 2)
	if b := Fingerprint("r2", "a.go", []string{"x", "y", "z"}, 2); a == b {
		t.Error("rule not in the fingerprint")
	}
	if b := Fingerprint("r", "b.go", []string{"x", "y", "z"}, 2); a == b {
		t.Error("path not in the fingerprint")
	}
	if b := Fingerprint("r", "a.go", []string{"x", "y", "w"}, 2); a == b {
		t.Error("next line not in the fingerprint")
	}
	if b := Fingerprint("r", "a.go", []string{"x", "y", "z", "far away"}, 2); a != b {
		t.Error("a line two away changed the fingerprint")
	}
}

func TestRankingExcerptAndCap(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	o := opts()
	o.MaxFindings = 3
	res := Run(context.Background(), c, []specialist.Specialist{
		fake{name: "logic", findings: []specialist.Finding{
			fnd("a", "low", "app.go", 9, "low"),
			fnd("b", "critical", "util.go", 3, "critical util"),
			fnd("c", "high", "app.go", 14, "high app 14"),
			fnd("d", "high", "app.go", 11, "high app 11"),
			fnd("e", "info", "app.go", 8, "info"),
		}},
	}, o)
	var got []string
	for _, f := range res.Review.Findings {
		got = append(got, f.Headline)
	}
	if want := []string{"critical util", "high app 11", "high app 14"}; !slices.Equal(got, want) {
		t.Errorf("ranked = %v, want %v", got, want)
	}
	if res.Review.FindingsCount != 3 || res.Dropped.Capped != 2 {
		t.Errorf("count %d, capped %d; want 3 and 2", res.Review.FindingsCount, res.Dropped.Capped)
	}
	if !strings.Contains(res.Review.Summary, "Showing the 3 most severe of 5 findings (max_findings 3)") {
		t.Errorf("summary does not mention the cap:\n%s", res.Review.Summary)
	}
	ex := res.Review.Findings[1].Excerpt // app.go:11
	if ex.Path != "app.go" || ex.StartLine != 8 || ex.EndLine != 14 || len(ex.Lines) != 7 ||
		ex.Lines[3].Number != 11 || ex.Lines[3].Text != "\tdb.Query(q)" {
		t.Errorf("excerpt = %+v, want lines 8–14 of app.go with line 11 \"\\tdb.Query(q)\"", ex)
	}
	if ex := res.Review.Findings[0].Excerpt; ex.StartLine != 1 || ex.EndLine != 5 {
		t.Errorf("excerpt of util.go:3 spans %d–%d, want 1–5 (clipped to the file)", ex.StartLine, ex.EndLine)
	}
}

func TestSecretFindingHasNoExcerpt(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	f := fnd("gitleaks:aws-access-token", "critical", "app.go", 10, "AWS key")
	res := Run(context.Background(), c, []specialist.Specialist{fake{name: "security", findings: []specialist.Finding{f}}}, opts())
	if ex := res.Review.Findings[0].Excerpt; len(ex.Lines) != 0 || ex.Path != "app.go" {
		t.Errorf("secret finding's excerpt = %+v, want none: it would show the secret", ex)
	}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	for _, tc := range []struct {
		severities []string
		blocking   string
		want       string
	}{
		{nil, "", review.VerdictApprove},
		{[]string{"low", "info"}, "", review.VerdictComment},
		{[]string{"medium"}, "", review.VerdictComment},
		{[]string{"low", "high"}, "", review.VerdictRequestChanges},
		{[]string{"critical"}, "", review.VerdictRequestChanges},
		{[]string{"medium"}, "medium", review.VerdictRequestChanges},
		{[]string{"high"}, "critical", review.VerdictComment},
		{[]string{"info"}, "info", review.VerdictRequestChanges},
	} {
		var fs []specialist.Finding
		for i, s := range tc.severities {
			fs = append(fs, fnd("r", s, "app.go", 9+i, "finding "+s))
		}
		o := opts()
		o.BlockingSeverity = tc.blocking
		res := Run(context.Background(), c, []specialist.Specialist{fake{name: "logic", findings: fs}}, o)
		if res.Review.Verdict != tc.want {
			t.Errorf("severities %v, blocking %q: verdict %s, want %s", tc.severities, tc.blocking, res.Review.Verdict, tc.want)
		}
	}
}

// Changed source that no engine analysed is never approved, and the
// summary's first lines say what was not analysed and why.
func TestUnanalysedSourceIsNotApproved(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	res := Run(context.Background(), c, []specialist.Specialist{
		fake{name: "logic", blind: true, find: func(ctx context.Context, c *change.Change) []specialist.Finding {
			specialist.NotAnalysed(ctx, "its package did not type-check", "app.go")
			return nil
		}},
		fake{name: "tests", blind: true},
	}, opts())
	if res.Review.Verdict != review.VerdictComment {
		t.Errorf("verdict %s, want comment", res.Review.Verdict)
	}
	lines := strings.Split(res.Review.Summary, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "Not analysed: ") || !strings.Contains(res.Review.Summary, "app.go: its package did not type-check") {
		t.Errorf("summary does not open with what was not analysed:\n%s", res.Review.Summary)
	}

	// A failed specialist's word does not count; another's does. What
	// the failed one would have found is not known: no approval.
	res = Run(context.Background(), c, []specialist.Specialist{
		fake{name: "logic", err: errors.New("down")},
		fake{name: "security"},
		fake{name: "tests", blind: true},
	}, opts())
	if res.Review.Verdict != review.VerdictComment || strings.Contains(res.Review.Summary, "Not analysed") {
		t.Errorf("verdict %s, summary:\n%s", res.Review.Verdict, res.Review.Summary)
	}
}

// A specialist that runs out of time keeps the review from approving,
// whatever the others found: the summary says it did not finish.
func TestUnfinishedSpecialistIsNotApproved(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	o := opts()
	o.Timeout = 50 * time.Millisecond
	o.Quorum = 1
	res := Run(context.Background(), c, []specialist.Specialist{
		fake{name: "logic"},
		fake{name: "security", hang: true},
	}, o)
	if !res.Completed() {
		t.Fatalf("not completed: %s", res.Review.Summary)
	}
	if res.Review.Verdict != review.VerdictComment {
		t.Errorf("verdict %s, want comment", res.Review.Verdict)
	}
	if want := "Did not finish: security (timed out after 50ms)"; !strings.Contains(res.Review.Summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, res.Review.Summary)
	}
}

// A finding that spans a whole file has an excerpt of a few dozen lines,
// not the file.
func TestExcerptIsBounded(t *testing.T) {
	lines := make([]string, 300_000)
	for i := range lines {
		lines[i] = "xx"
	}
	e := excerpt("big.py", lines, 2, 300_000)
	if e.StartLine != 1 || e.EndLine != maxExcerptLines || len(e.Lines) != maxExcerptLines {
		t.Errorf("excerpt spans %d–%d (%d lines), want 1–%d", e.StartLine, e.EndLine, len(e.Lines), maxExcerptLines)
	}
}

// The summary names each language of the change with the engines that
// reviewed it, and a language none reviewed as not analysed.
func TestSummaryNamesTheEnginesOfEachLanguage(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	res := Run(context.Background(), c, []specialist.Specialist{
		fake{name: "logic", blind: true, find: func(ctx context.Context, c *change.Change) []specialist.Finding {
			specialist.Analysed(ctx, "go", "app.go")
			return nil
		}},
		fake{name: "security", blind: true, find: func(ctx context.Context, c *change.Change) []specialist.Finding {
			specialist.Analysed(ctx, "llm", "app.go")
			return nil
		}},
	}, opts())
	if want := "Languages: Go (Go analyzers, LLM)."; !strings.Contains(res.Review.Summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, res.Review.Summary)
	}
	res = Run(context.Background(), c, []specialist.Specialist{fake{name: "logic", blind: true}}, opts())
	if want := "Languages: Go (not analysed)."; !strings.Contains(res.Review.Summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, res.Review.Summary)
	}
}

// A script without an extension is known by its first line (rbenv's
// libexec/rbenv-exec is shell), and one no engine reviews is listed as not
// analysed.
func TestSummaryNamesAScriptWithoutExtension(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(map[string]string{"libexec/tool-exec": "#!/usr/bin/env bash\nexec \"$@\"\n", "bin/deploy": "#!/usr/bin/env ruby\nputs 1\n"})
	r.Commit("feature")
	c := prChange(t, r, "main", "feature")
	res := Run(context.Background(), c, []specialist.Specialist{
		fake{name: "logic", blind: true, find: func(ctx context.Context, c *change.Change) []specialist.Finding {
			specialist.Analysed(ctx, "shellcheck", "libexec/tool-exec")
			return nil
		}},
	}, opts())
	for _, want := range []string{"Languages: Ruby (not analysed), shell (shellcheck).", "- bin/deploy: no engine reviews Ruby"} {
		if !strings.Contains(res.Review.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.Review.Summary)
		}
	}
	if res.Review.Verdict != review.VerdictComment {
		t.Errorf("verdict %s, want comment: the Ruby script was not analysed", res.Review.Verdict)
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	o := opts()
	o.Notes = []string{".quorum.yaml line 3: quorum: want a number"}
	o.Include = func(path string) bool { return path != "util.go" }
	var saw []string
	spy := fake{name: "logic", find: func(_ context.Context, c *change.Change) []specialist.Finding {
		for _, f := range c.Files {
			saw = append(saw, f.Path())
		}
		return []specialist.Finding{
			fnd("a", "high", "app.go", 10, "SQL injection"),
			fnd("b", "high", "util.go", 3, "in an excluded file"),
		}
	}}
	res := Run(context.Background(), c, []specialist.Specialist{spy}, o)
	if !slices.Equal(saw, []string{"app.go"}) {
		t.Errorf("specialist saw %v, want only app.go (util.go is excluded)", saw)
	}
	if len(res.Review.Findings) != 1 {
		t.Errorf("%d findings, want 1: the excluded file's is dropped", len(res.Review.Findings))
	}
	summaryHas(t, res.Review.Summary,
		"Reviewed 1 file (+8 −0) of "+c.HeadSHA[:12]+" against "+c.BaseSHA[:12],
		"Changes requested: 1 finding at or above high severity",
		"- high logic: SQL injection (app.go:10)",
		"Not reviewed: 2 files (1 generated, 1 lock file)",
		"Excluded by the repository's configuration: 1 file",
		"- .quorum.yaml line 3: quorum: want a number",
	)
}

// TestSpecialistNotes: what a specialist notes while it runs is in the
// summary under its name, and Progress carries it; a failed specialist's
// notes give way to its failure.
func TestSpecialistNotes(t *testing.T) {
	t.Parallel()
	c := fixture(t)
	o := opts()
	var mu sync.Mutex
	progressNotes := map[string][]string{}
	o.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if len(p.Notes) > 0 {
			progressNotes[p.Specialist] = p.Notes
		}
	}
	noting := fake{name: "security", find: func(ctx context.Context, _ *change.Change) []specialist.Finding {
		specialist.Note(ctx, "the LLM engine failed (%s); only the built-in engine's findings are reported.", "HTTP 500")
		return nil
	}}
	failing := fake{name: "logic", find: func(ctx context.Context, _ *change.Change) []specialist.Finding {
		specialist.Note(ctx, "a note of a specialist that then panics")
		panic("boom")
	}}
	res := Run(context.Background(), c, []specialist.Specialist{noting, failing, fake{name: "tests"}}, o)
	if !res.Completed() {
		t.Fatalf("not completed: %s", res.Review.Summary)
	}
	want := "Engine notes:\n- security: the LLM engine failed (HTTP 500); only the built-in engine's findings are reported."
	if !strings.Contains(res.Review.Summary, want) {
		t.Errorf("summary does not say %q:\n%s", want, res.Review.Summary)
	}
	if strings.Contains(res.Review.Summary, "then panics") {
		t.Errorf("a failed specialist's note is in the summary:\n%s", res.Review.Summary)
	}
	if got := progressNotes["security"]; len(got) != 1 || !strings.HasPrefix(got[0], "the LLM engine failed") {
		t.Errorf("progress notes %q", got)
	}
}

// Source skipped for its shape is not analysed source: a NUL byte in a
// comment (binary), a link Python imports, a generated marker on a new
// file, vendored, third-party and built code, one long line. The summary
// names each and why, and the review does not approve.
func TestSkippedSourceIsNotApproved(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n", "impl.txt": "import os\n"})
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(map[string]string{
		"run.sh":                "#!/bin/sh\n# \x00\neval \"$1\"\n",
		"Dockerfile":            "FROM debian:12\n# \x00\nUSER root\n",
		"impl.txt":              "import os\nos.system(input())\n",
		"gen.py":                "# @generated\nimport os\nos.system(input())\n",
		"vendor/lib/x.py":       "import os\n",
		"third_party/x.js":      "eval(x)\n",
		"dist/app.js":           "eval(x)\n",
		"web/one.js":            "eval(x); " + strings.Repeat("var a = 1; ", 100) + "\n",
		"bin/tool":              "#!/usr/bin/env python3\n\x00\n",
		"docs/notes.txt":        "notes\n",
		"docs/big.png":          "\x89PNG\x00\x00",
		"hand.py":               "import os\n",
		"README.md":             "y\n",
		"docs/api/reference.md": "# API\n",
	})
	if err := os.Symlink("impl.txt", filepath.Join(r.Dir, "helper.py")); err != nil {
		t.Fatal(err)
	}
	// A link to source the review analyses hides nothing.
	r.Write(map[string]string{"lib/real.py": "import os\n"})
	if err := os.Symlink("real.py", filepath.Join(r.Dir, "lib/alias.py")); err != nil {
		t.Fatal(err)
	}
	r.Commit("feature")
	c := prChange(t, r, "main", "feature")
	res := Run(context.Background(), c, []specialist.Specialist{fake{name: "logic"}, fake{name: "security"}}, opts())
	if res.Review.Verdict != review.VerdictComment {
		t.Errorf("verdict %s, want comment", res.Review.Verdict)
	}
	summaryHas(t, res.Review.Summary,
		"Not analysed: 9 files of changed source, so this review cannot approve it.",
		"- Dockerfile, bin/tool, run.sh: skipped as binary (git found a NUL byte in it)",
		"- helper.py: skipped: a symbolic link (to impl.txt), not followed",
		"- dist/app.js, gen.py: skipped as generated, which only this change says (a new file)",
		"- third_party/x.js, vendor/lib/x.py: skipped as vendored (a new file in a vendored directory)",
		"- web/one.js: skipped as minified",
		"Not reviewed: 11 files (4 binary, 2 generated, 1 minified, 2 symlink, 2 vendored).",
	)
	if strings.Contains(res.Review.Summary, "big.png") || strings.Contains(res.Review.Summary, "notes.txt") || strings.Contains(res.Review.Summary, "alias.py") {
		t.Errorf("a file that is not source is listed as not analysed:\n%s", res.Review.Summary)
	}
}

// summaryHas fails t for each of wants the summary does not say.
func summaryHas(t *testing.T, summary string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(summary, want) {
			t.Errorf("summary does not say %q:\n%s", want, summary)
		}
	}
}

// A path of thousands of characters is shortened in the summary, which
// would otherwise be that path.
func TestGapTextShortensALongPath(t *testing.T) {
	long := strings.Repeat("d/", 7500) + "x.py"
	text := gapText([]gap{{path: long, reason: "its name is too long to copy it"}})
	if len(text) > 500 || !strings.Contains(text, "…") || !strings.HasSuffix(text, "d/x.py: its name is too long to copy it\n") {
		t.Errorf("gap text of %d bytes:\n%.600s", len(text), text)
	}
}
