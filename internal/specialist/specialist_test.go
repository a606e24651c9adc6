package specialist_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
)

func valid() specialist.Finding {
	return specialist.Finding{Rule: "quorum:x", Category: specialist.CategoryLogic, Severity: specialist.SeverityHigh,
		Path: "a.go", Line: 3, EndLine: 3, Headline: "h", Engine: specialist.EngineBuiltin}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := valid().Validate(); err != nil {
		t.Fatalf("a valid finding: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate func(*specialist.Finding)
		want   string
	}{
		"rule":     {func(f *specialist.Finding) { f.Rule = "" }, "no rule"},
		"category": {func(f *specialist.Finding) { f.Category = "style" }, "unknown category"},
		"severity": {func(f *specialist.Finding) { f.Severity = "urgent" }, "unknown severity"},
		"path":     {func(f *specialist.Finding) { f.Path = "" }, "no path"},
		"range":    {func(f *specialist.Finding) { f.EndLine = 2 }, "bad line range"},
		"negative": {func(f *specialist.Finding) { f.Line, f.EndLine = -1, 0 }, "bad line range"},
		"headline": {func(f *specialist.Finding) { f.Headline = "" }, "no headline"},
		"engine":   {func(f *specialist.Finding) { f.Engine = "magic" }, "unknown engine"},
	} {
		f := valid()
		tc.mutate(&f)
		if err := f.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want %q", name, err, tc.want)
		}
	}
}

func TestSeverityRank(t *testing.T) {
	t.Parallel()
	for i, s := range specialist.Severities {
		if specialist.SeverityRank(s) != i {
			t.Errorf("SeverityRank(%s) = %d, want %d", s, specialist.SeverityRank(s), i)
		}
	}
	if specialist.SeverityRank("urgent") != -1 {
		t.Error("an unknown severity ranks")
	}
}

func TestOnChangedLines(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"a.go": "one\ntwo\nthree\nfour\nfive\n", "gone.go": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.go": "one\ntwo\nTHREE\nfour\nfive\nsix\n"})
	r.Git("rm", "-q", "gone.go")
	c := r.Change(base, r.Commit("head"))

	at := func(path string, line, end int) specialist.Finding {
		f := valid()
		f.Path, f.Line, f.EndLine = path, line, end
		return f
	}
	in := []specialist.Finding{
		at("a.go", 3, 3),    // modified line: kept
		at("a.go", 6, 6),    // added line: kept
		at("a.go", 1, 1),    // unchanged: dropped
		at("a.go", 1, 3),    // a range reaching a changed line: kept
		at("a.go", 0, 0),    // file level on a changed file: kept
		at("b.go", 0, 0),    // a file the change does not touch: dropped
		at("gone.go", 1, 1), // a deleted file has no changed lines: dropped
		at("gone.go", 0, 0), // but is a changed file: kept
	}
	got := specialist.OnChangedLines(c, in)
	var kept []string
	for _, f := range got {
		kept = append(kept, fmt.Sprintf("%s:%d-%d", f.Path, f.Line, f.EndLine))
	}
	want := "a.go:3-3 a.go:6-6 a.go:1-3 a.go:0-0 gone.go:0-0"
	if strings.Join(kept, " ") != want {
		t.Errorf("kept %q, want %q", strings.Join(kept, " "), want)
	}
	if len(in) != 8 || in[2].Line != 1 {
		t.Errorf("OnChangedLines changed its input")
	}
}

type named string

func (n named) Name() string { return string(n) }
func (n named) Review(context.Context, *change.Change) ([]specialist.Finding, error) {
	return nil, nil
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r, err := specialist.NewRegistry(named("tests"), named("logic"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "logic,tests" {
		t.Errorf("Names() = %s", got)
	}
	if s, ok := r.Get("logic"); !ok || s.Name() != "logic" {
		t.Errorf("Get(logic) = %v, %v", s, ok)
	}
	if _, ok := r.Get("security"); ok {
		t.Error("Get of an unregistered specialist succeeded")
	}
	if _, err := specialist.NewRegistry(named("logic"), named("logic")); err == nil {
		t.Error("a name registered twice was accepted")
	}
}
