package main

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestExpectMatches(t *testing.T) {
	t.Parallel()
	e := Expect{Path: "a.go", Line: 20, Specialist: "logic", Class: "lostcancel"}
	for _, tc := range []struct {
		name string
		f    Finding
		want bool
	}{
		{"same line", Finding{Path: "a.go", Line: 20, Specialist: "logic"}, true},
		{"three lines above", Finding{Path: "a.go", Line: 17, Specialist: "logic"}, true},
		{"four lines above", Finding{Path: "a.go", Line: 16, Specialist: "logic"}, false},
		{"three lines below", Finding{Path: "a.go", Line: 23, Specialist: "logic"}, true},
		{"four lines below", Finding{Path: "a.go", Line: 24, Specialist: "logic"}, false},
		{"a range that ends near", Finding{Path: "a.go", Line: 5, EndLine: 17, Specialist: "logic"}, true},
		{"a range that ends too early", Finding{Path: "a.go", Line: 5, EndLine: 16, Specialist: "logic"}, false},
		{"a range around it", Finding{Path: "a.go", Line: 10, EndLine: 30, Specialist: "logic"}, true},
		{"another specialist", Finding{Path: "a.go", Line: 20, Specialist: "security"}, false},
		{"another file", Finding{Path: "b.go", Line: 20, Specialist: "logic"}, false},
		{"a file-level finding", Finding{Path: "a.go", Line: 0, Specialist: "logic"}, false},
	} {
		if got := e.matches(tc.f); got != tc.want {
			t.Errorf("%s: matches(%+v) = %v, want %v", tc.name, tc.f, got, tc.want)
		}
	}
}

func TestMatchExpectations(t *testing.T) {
	t.Parallel()
	exp := []Expect{
		{Path: "a.go", Line: 10, Specialist: "logic"},
		{Path: "a.go", Line: 12, Specialist: "logic"},
		{Path: "b.go", Line: 5, Specialist: "security"},
	}
	fs := []Finding{
		{Path: "c.go", Line: 1, Specialist: "tests"},
		{Path: "a.go", Line: 11, Specialist: "logic"},
		{Path: "a.go", Line: 13, Specialist: "logic"},
	}
	by, expected := matchExpectations(exp, fs)
	if want := []int{1, 1, -1}; !slices.Equal(by, want) {
		t.Errorf("expectations met by %v, want %v", by, want)
	}
	if want := []bool{false, true, true}; !slices.Equal(expected, want) {
		t.Errorf("findings expected %v, want %v", expected, want)
	}
}

func TestRatio(t *testing.T) {
	t.Parallel()
	var r Ratio
	if _, ok := r.Signal(); ok {
		t.Error("an empty ratio has a signal")
	}
	if got := r.String(); got != "no findings" {
		t.Errorf("empty: %q", got)
	}
	for _, l := range []string{labelUseful, labelUseful, labelUseful, labelNoise, "", ""} {
		r.add(l)
	}
	if r.Useful != 3 || r.Noise != 1 || r.Unlabelled != 2 || r.All() != 6 {
		t.Fatalf("counted %+v", r)
	}
	if v, ok := r.Signal(); !ok || v != 0.75 {
		t.Errorf("signal %v, %v; want 0.75 (useful over labelled, unlabelled apart)", v, ok)
	}
	if v, ok := r.Floor(); !ok || math.Abs(v-0.5) > 1e-9 {
		t.Errorf("floor %v, %v; want 0.5 (unlabelled as noise)", v, ok)
	}
	if got, want := r.String(), "3 useful / 4 labelled = 75 %; 2 UNLABELLED not counted (50 % if all of them were noise)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	only := Ratio{Unlabelled: 1}
	if got := only.String(); !strings.HasPrefix(got, "no labelled finding; 1 UNLABELLED") {
		t.Errorf("only unlabelled: %q", got)
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2}} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// TestJudge adds up a run: recall per class with the misses, the signal
// ratio of ordinary cases and of the other findings on bug cases, the
// unlabelled findings, time and memory.
func TestJudge(t *testing.T) {
	t.Parallel()
	corpus := map[string]Case{
		"bug-1": {ID: "bug-1", Kind: kindBug, Expect: []Expect{
			{Path: "a.go", Line: 10, Class: "lostcancel", Specialist: "logic"},
			{Path: "a.go", Line: 40, Class: "sql-injection", Specialist: "security"},
		}},
		"bug-2": {ID: "bug-2", Kind: kindBug, Expect: []Expect{
			{Path: "b.go", Line: 7, Class: "sql-injection", Specialist: "security"},
		}},
		"ord-1": {ID: "ord-1", Kind: kindOrdinary},
		"ord-2": {ID: "ord-2", Kind: kindOrdinary},
	}
	f := func(path string, line int, spec, fp string) FindingReport {
		return FindingReport{Finding: Finding{Path: path, Line: line, Specialist: spec, Fingerprint: fp}}
	}
	cases := []CaseReport{
		{ID: "bug-1", Kind: kindBug, Seconds: 2, PeakRSS: 300, Findings: []FindingReport{
			f("a.go", 9, "logic", "b1-lost"), f("z.go", 1, "tests", "b1-other")}},
		{ID: "bug-2", Kind: kindBug, Seconds: 4, PeakRSS: 200, Findings: []FindingReport{
			f("b.go", 7, "security", "b2-sql")}},
		{ID: "ord-1", Kind: kindOrdinary, Seconds: 1, PeakRSS: 100, Findings: []FindingReport{
			f("x.go", 3, "tests", "o1-a"), f("x.go", 9, "logic", "o1-b"), f("y.go", 2, "security", "o1-c")}},
		{ID: "ord-2", Kind: kindOrdinary, Error: "not prepared", Findings: []FindingReport{}},
	}
	labels := &Labels{Labels: []Label{
		{Case: "ord-1", Fingerprint: "o1-a", Label: labelNoise, Reason: "r"},
		{Case: "ord-1", Fingerprint: "o1-b", Label: labelUseful, Reason: "r"},
		{Case: "bug-1", Fingerprint: "b1-other", Label: labelNoise, Reason: "r"},
		{Case: "ord-2", Fingerprint: "o1-b", Label: labelUseful, Reason: "another case's"},
	}}
	r := judge(cases, corpus, labels)
	if r.Recall != (Count{2, 3}) {
		t.Errorf("recall %+v, want 2 of 3", r.Recall)
	}
	if r.ByClass["lostcancel"] != (Count{1, 1}) || r.ByClass["sql-injection"] != (Count{1, 2}) {
		t.Errorf("by class %+v", r.ByClass)
	}
	if e := r.Cases[0].Expects; e[0].Fingerprint != "b1-lost" || !e[0].Matched || e[1].Matched {
		t.Errorf("bug-1's expectations %+v", e)
	}
	if r.Ordinary != (Ratio{Useful: 1, Noise: 1, Unlabelled: 1}) {
		t.Errorf("ordinary %+v", r.Ordinary)
	}
	if r.BugOther != (Ratio{Noise: 1}) {
		t.Errorf("other findings on bug cases %+v (the expected ones are not counted)", r.BugOther)
	}
	if len(r.Unlabelled) != 1 || r.Unlabelled[0].Case != "ord-1" || r.Unlabelled[0].Fingerprint != "o1-c" || r.Unlabelled[0].Path != "y.go" {
		t.Errorf("unlabelled %+v", r.Unlabelled)
	}
	if r.P50Seconds != 2 || r.MaxSeconds != 4 || r.PeakRSS != 300 || r.Errors != 1 {
		t.Errorf("p50 %v, max %v, peak %d, errors %d; want 2, 4, 300, 1 (the case in error left out of the times)", r.P50Seconds, r.MaxSeconds, r.PeakRSS, r.Errors)
	}

	var text bytes.Buffer
	if err := r.writeText(&text); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"Recall on bug cases: 2/3 = 67 %",
		"  sql-injection              1/2 = 50 %",
		"Missed (1):\n  bug-1: sql-injection security a.go:40",
		"Signal ratio on ordinary cases: 1 useful / 2 labelled = 50 %; 1 UNLABELLED",
		"Signal ratio of the other findings on bug cases: 0 useful / 1 labelled = 0 %",
		"UNLABELLED findings (1;",
		"ord-1 fp o1-c security",
		"ERROR: not prepared",
	} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("the text report does not say %q:\n%s", w, text.String())
		}
	}
	var tmpl bytes.Buffer
	if err := r.writeLabelTemplate(&tmpl); err != nil {
		t.Fatal(err)
	}
	var back Labels
	if err := json.Unmarshal(tmpl.Bytes(), &back); err != nil || len(back.Labels) != 1 || back.Labels[0].Label != "" || back.Labels[0].Fingerprint != "o1-c" {
		t.Errorf("label template %s (%v)", tmpl.String(), err)
	}
}
