package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// lineSlack is how far from an expectation's line a finding may start or
// end and still match it: a problem caused by a deleted line is reported
// on a neighbouring one.
const lineSlack = 3

// Finding is one finding of a review, with what the API's JSON hides.
type Finding struct {
	Specialist  string `json:"specialist"`
	Severity    string `json:"severity"`
	Rule        string `json:"rule"`
	Path        string `json:"path"`
	Line        int    `json:"line"`
	EndLine     int    `json:"end_line"`
	Headline    string `json:"headline"`
	Fingerprint string `json:"fingerprint"`
	// Engine is builtin or llm; a problem both engines found is one
	// finding, the built-in engine's, with Model the model that also
	// reported it.
	Engine string `json:"engine,omitempty"`
	Model  string `json:"model,omitempty"`
}

// Engines the report tells apart.
const (
	engineBuiltin = "builtin"
	engineLLM     = "llm"
)

// by reports whether engine found f.
func (f Finding) by(engine string) bool {
	if engine == engineLLM {
		return f.Engine == engineLLM || f.Model != ""
	}
	return f.Engine != engineLLM
}

// matches reports whether f is the finding e expects: same path and
// specialist, its line range within lineSlack lines of e's line.
func (e Expect) matches(f Finding) bool {
	if f.Path != e.Path || f.Specialist != e.Specialist || f.Line < 1 {
		return false
	}
	end := max(f.EndLine, f.Line)
	return e.Line >= f.Line-lineSlack && e.Line <= end+lineSlack
}

// matchExpectations pairs each expectation with the first finding that
// matches it (-1 when none does) and marks the findings that match some
// expectation.
func matchExpectations(expects []Expect, fs []Finding) (by []int, expected []bool) {
	by = make([]int, len(expects))
	expected = make([]bool, len(fs))
	for i, e := range expects {
		by[i] = -1
		for j, f := range fs {
			if e.matches(f) {
				if by[i] < 0 {
					by[i] = j
				}
				expected[j] = true
			}
		}
	}
	return by, expected
}

// Ratio counts labelled findings: the signal ratio is useful over the
// labelled ones; unlabelled ones are counted apart.
type Ratio struct {
	Useful     int `json:"useful"`
	Noise      int `json:"noise"`
	Unlabelled int `json:"unlabelled"`
}

// add counts one finding with label (empty: unlabelled).
func (r *Ratio) add(label string) {
	switch label {
	case labelUseful:
		r.Useful++
	case labelNoise:
		r.Noise++
	default:
		r.Unlabelled++
	}
}

// All is the number of findings counted.
func (r Ratio) All() int { return r.Useful + r.Noise + r.Unlabelled }

// Signal is useful / labelled findings, and false when none is labelled.
func (r Ratio) Signal() (float64, bool) {
	if r.Useful+r.Noise == 0 {
		return 0, false
	}
	return float64(r.Useful) / float64(r.Useful+r.Noise), true
}

// Floor is useful / all findings, as if every unlabelled one were noise.
func (r Ratio) Floor() (float64, bool) {
	if r.All() == 0 {
		return 0, false
	}
	return float64(r.Useful) / float64(r.All()), true
}

// String is the ratio for people.
func (r Ratio) String() string {
	if r.All() == 0 {
		return "no findings"
	}
	s := "no labelled finding"
	if v, ok := r.Signal(); ok {
		s = fmt.Sprintf("%d useful / %d labelled = %.0f %%", r.Useful, r.Useful+r.Noise, 100*v)
	}
	if r.Unlabelled > 0 {
		fl, _ := r.Floor()
		s += fmt.Sprintf("; %d UNLABELLED not counted (%.0f %% if all of them were noise)", r.Unlabelled, 100*fl)
	}
	return s
}

// Count is a recall: matched expectations over all.
type Count struct {
	Matched int `json:"matched"`
	Total   int `json:"total"`
}

// String is the count for people.
func (c Count) String() string {
	if c.Total == 0 {
		return "0/0"
	}
	return fmt.Sprintf("%d/%d = %.0f %%", c.Matched, c.Total, 100*float64(c.Matched)/float64(c.Total))
}

// CaseReport is one case's review, judged.
type CaseReport struct {
	ID      string `json:"id"`
	Repo    string `json:"repo"`
	Kind    string `json:"kind"`
	Commit  string `json:"commit"`
	Title   string `json:"title"`
	Base    string `json:"base"`
	Head    string `json:"head"`
	Error   string `json:"error,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	// Summary is the review's summary, as quorum review prints it.
	Summary string `json:"summary,omitempty"`
	// Reason is why the review could not run, when it could not.
	Reason   string          `json:"reason,omitempty"`
	Failed   []string        `json:"failed_specialists,omitempty"`
	Notes    []string        `json:"notes,omitempty"`
	Capped   int             `json:"capped,omitempty"`
	Seconds  float64         `json:"seconds"`
	PeakRSS  int64           `json:"peak_rss_bytes"`
	Findings []FindingReport `json:"findings"`
	Expects  []ExpectReport  `json:"expects,omitempty"`
}

// FindingReport is a finding with its judgement: the expectation it
// matches, or its label.
type FindingReport struct {
	Finding
	Expected bool   `json:"expected"`
	Label    string `json:"label,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// ExpectReport is an expectation and the finding that met it, if any.
type ExpectReport struct {
	Expect
	Matched     bool   `json:"matched"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Report is the judgement of a run over the corpus.
type Report struct {
	Cases   []CaseReport     `json:"cases"`
	Recall  Count            `json:"recall"`
	ByClass map[string]Count `json:"recall_by_class"`
	// Ordinary counts the findings on ordinary cases; BugOther the
	// findings on bug cases other than the expected ones.
	Ordinary   Ratio   `json:"ordinary"`
	BugOther   Ratio   `json:"bug_other"`
	P50Seconds float64 `json:"review_seconds_p50"`
	MaxSeconds float64 `json:"review_seconds_max"`
	PeakRSS    int64   `json:"peak_rss_bytes_max"`
	Errors     int     `json:"errors"`
	// Unlabelled are template entries for the findings without a label.
	Unlabelled []Label `json:"unlabelled"`
	// LLMModel is the model the LLM engine asked, when the run used it;
	// ByEngine then gives the figures of each engine alone (the ones
	// above are both engines together).
	LLMModel string                   `json:"llm_model,omitempty"`
	ByEngine map[string]EngineFigures `json:"by_engine,omitempty"`
}

// EngineFigures are one engine's figures: the recall of its findings
// alone, and the signal of its findings that no expectation asked for.
type EngineFigures struct {
	Recall   Count `json:"recall"`
	Ordinary Ratio `json:"ordinary"`
	BugOther Ratio `json:"bug_other"`
}

// engineFigures adds up, from a judged report, what engine found.
func engineFigures(r *Report, corpus map[string]Case, engine string) EngineFigures {
	var e EngineFigures
	for _, cr := range r.Cases {
		k := corpus[cr.ID]
		var fs []Finding
		for _, f := range cr.Findings {
			if f.by(engine) {
				fs = append(fs, f.Finding)
			}
		}
		by, _ := matchExpectations(k.Expect, fs)
		for _, j := range by {
			e.Recall.Total++
			if j >= 0 {
				e.Recall.Matched++
			}
		}
		for _, f := range cr.Findings {
			if f.Expected || !f.by(engine) {
				continue
			}
			if k.Kind == kindOrdinary {
				e.Ordinary.add(f.Label)
			} else {
				e.BugOther.add(f.Label)
			}
		}
	}
	return e
}

// judge turns the cases' reviews into a report: it matches the
// expectations, looks up the labels and adds up.
func judge(cases []CaseReport, corpus map[string]Case, labels *Labels) *Report {
	byKey := map[[2]string]Label{}
	for _, l := range labels.Labels {
		byKey[[2]string{l.Case, l.Fingerprint}] = l
	}
	r := &Report{Cases: cases, ByClass: map[string]Count{}, Unlabelled: []Label{}}
	var secs []float64
	for i := range r.Cases {
		cr := &r.Cases[i]
		k := corpus[cr.ID]
		if cr.Error != "" || cr.Reason != "" {
			r.Errors++
		} else {
			secs = append(secs, cr.Seconds)
		}
		r.PeakRSS = max(r.PeakRSS, cr.PeakRSS)
		fs := make([]Finding, len(cr.Findings))
		for j, f := range cr.Findings {
			fs[j] = f.Finding
		}
		by, expected := matchExpectations(k.Expect, fs)
		cr.Expects = make([]ExpectReport, len(k.Expect))
		for j, e := range k.Expect {
			er := ExpectReport{Expect: e, Matched: by[j] >= 0}
			if er.Matched {
				er.Fingerprint = fs[by[j]].Fingerprint
			}
			cr.Expects[j] = er
			c := r.ByClass[e.Class]
			c.Total++
			r.Recall.Total++
			if er.Matched {
				c.Matched++
				r.Recall.Matched++
			}
			r.ByClass[e.Class] = c
		}
		for j := range cr.Findings {
			f := &cr.Findings[j]
			f.Expected = expected[j]
			if f.Expected {
				continue
			}
			l, ok := byKey[[2]string{cr.ID, f.Fingerprint}]
			if ok {
				f.Label, f.Reason = l.Label, l.Reason
			}
			if k.Kind == kindOrdinary {
				r.Ordinary.add(f.Label)
			} else {
				r.BugOther.add(f.Label)
			}
			if f.Label == "" {
				r.Unlabelled = append(r.Unlabelled, Label{
					Case: cr.ID, Fingerprint: f.Fingerprint, Rule: f.Rule, Path: f.Path, Line: f.Line,
					Headline: f.Headline, Specialist: f.Specialist, Severity: f.Severity,
				})
			}
		}
	}
	r.P50Seconds, r.MaxSeconds = median(secs), slices.Max(append(secs, 0))
	return r
}

// median is the middle value of xs (the lower of the two middle ones for
// an even count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// writeText prints the report for people.
func (r *Report) writeText(w io.Writer) error {
	var b strings.Builder
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "## %s (%s, %s@%.12s) %s\n", c.ID, c.Kind, c.Repo, c.Commit, c.Title)
		switch {
		case c.Error != "":
			fmt.Fprintf(&b, "  ERROR: %s\n", c.Error)
		case c.Reason != "":
			fmt.Fprintf(&b, "  the review could not run (%s) after %.1fs\n", c.Reason, c.Seconds)
		default:
			fmt.Fprintf(&b, "  %s, verdict %s, %.1fs, peak RSS %s\n", plural(len(c.Findings), "finding"), c.Verdict, c.Seconds, mb(c.PeakRSS))
		}
		for _, s := range c.Failed {
			fmt.Fprintf(&b, "  failed specialist: %s\n", s)
		}
		if c.Capped > 0 {
			fmt.Fprintf(&b, "  %d findings over the review's cap were dropped\n", c.Capped)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
		for _, f := range c.Findings {
			judged := "UNLABELLED"
			switch {
			case f.Expected:
				judged = "EXPECTED"
			case f.Label != "":
				judged = f.Label
			}
			engine := ""
			if r.LLMModel != "" {
				engine = engineBuiltin + " "
				switch {
				case f.Engine == engineLLM:
					engine = engineLLM + " "
				case f.Model != "":
					engine = "both "
				}
			}
			fmt.Fprintf(&b, "  %-10s %s%-11s %-8s %s %s:%s %q fp %.12s\n", judged, engine, f.Specialist, f.Severity, f.Rule, f.Path, lines(f.Line, f.EndLine), f.Headline, f.Fingerprint)
		}
		for _, e := range c.Expects {
			if e.Matched {
				fmt.Fprintf(&b, "  matched  %s %s %s:%d (fp %.12s)\n", e.Class, e.Specialist, e.Path, e.Line, e.Fingerprint)
			} else {
				fmt.Fprintf(&b, "  MISSED   %s %s %s:%d %s\n", e.Class, e.Specialist, e.Path, e.Line, e.Note)
			}
		}
		b.WriteString("\n")
	}

	b.WriteString("## Summary\n\n")
	fmt.Fprintf(&b, "Recall on bug cases: %s\n", r.Recall)
	var names []string
	for n := range r.ByClass {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-26s %s\n", n, r.ByClass[n])
	}
	var misses []string
	for _, c := range r.Cases {
		for _, e := range c.Expects {
			if !e.Matched {
				misses = append(misses, fmt.Sprintf("  %s: %s %s %s:%d %s", c.ID, e.Class, e.Specialist, e.Path, e.Line, e.Note))
			}
		}
	}
	if len(misses) > 0 {
		fmt.Fprintf(&b, "Missed (%d):\n%s\n", len(misses), strings.Join(misses, "\n"))
	}
	fmt.Fprintf(&b, "Signal ratio on ordinary cases: %s\n", r.Ordinary)
	fmt.Fprintf(&b, "Signal ratio of the other findings on bug cases: %s\n", r.BugOther)
	if r.LLMModel != "" {
		fmt.Fprintf(&b, "By engine (the LLM engine asked %s; a problem both found counts for both):\n", r.LLMModel)
		for _, n := range []string{engineBuiltin, engineLLM} {
			e := r.ByEngine[n]
			fmt.Fprintf(&b, "  %-8s recall %s; signal on ordinary cases: %s; of the other findings on bug cases: %s\n", n, e.Recall, e.Ordinary, e.BugOther)
		}
		fmt.Fprintf(&b, "  %-8s recall %s; signal on ordinary cases: %s; of the other findings on bug cases: %s\n", "both", r.Recall, r.Ordinary, r.BugOther)
	}
	fmt.Fprintf(&b, "Review time: p50 %.1fs, max %.1fs; peak RSS of a review (VmHWM of its process) %s\n", r.P50Seconds, r.MaxSeconds, mb(r.PeakRSS))
	if r.Errors > 0 {
		fmt.Fprintf(&b, "Cases whose review did not run: %d (see ERROR above)\n", r.Errors)
	}
	if len(r.Unlabelled) > 0 {
		fmt.Fprintf(&b, "\nUNLABELLED findings (%d; --label-template FILE writes them as label entries):\n", len(r.Unlabelled))
		for _, l := range r.Unlabelled {
			fmt.Fprintf(&b, "  %s fp %s %s %s %s:%d %q\n", l.Case, l.Fingerprint, l.Specialist, l.Rule, l.Path, l.Line, l.Headline)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJSON writes the report as indented JSON.
func (r *Report) writeJSON(w io.Writer) error { return writeIndented(w, r) }

// writeLabelTemplate writes the unlabelled findings as labels.json entries
// with empty labels and reasons, for a person to fill in.
func (r *Report) writeLabelTemplate(w io.Writer) error {
	return writeIndented(w, Labels{Labels: r.Unlabelled})
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func lines(line, end int) string {
	if end > line {
		return fmt.Sprintf("%d-%d", line, end)
	}
	return fmt.Sprint(line)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func mb(b int64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MB", float64(b)/1e6)
}

func seconds(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }
