package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
)

// topFindings is how many headlines the summary lists under what matters most.
const topFindings = 3

// summarize writes the review's summary for a person: what changed, the
// verdict and what matters most, each specialist's count, who failed, and
// what was not looked at and why.
func summarize(c, reviewed *change.Change, excluded int, res Result, s synthesis, opts Options) string {
	var b strings.Builder
	files, added, deleted := size(reviewed)
	fmt.Fprintf(&b, "Reviewed %s (+%d −%d) of %s against %s.\n", plural(files, "file"), added, deleted, short(c.HeadSHA), short(c.BaseSHA))
	if len(s.gaps) > 0 {
		b.WriteString(gapText(s.gaps))
	}

	switch s.verdict {
	case review.VerdictRequestChanges:
		blocking := 0
		rank := specialist.SeverityRank(opts.BlockingSeverity)
		for _, f := range s.findings {
			if specialist.SeverityRank(f.Severity) <= rank {
				blocking++
			}
		}
		if s.dropped.Capped == 0 {
			fmt.Fprintf(&b, "Changes requested: %s at or above %s severity, of %d in all.\n", plural(blocking, "finding"), opts.BlockingSeverity, s.total)
		} else {
			fmt.Fprintf(&b, "Changes requested: findings at or above %s severity.\n", opts.BlockingSeverity)
		}
	case review.VerdictComment:
		if s.total == 0 {
			b.WriteString("No findings on what was analysed.\n")
			break
		}
		fmt.Fprintf(&b, "%s, none at or above %s severity.\n", capital(plural(s.total, "finding")), opts.BlockingSeverity)
	default:
		b.WriteString("No findings on the changed lines.\n")
	}

	if len(s.findings) > 0 {
		b.WriteString("\nWhat matters most:\n")
		for _, f := range s.findings[:min(topFindings, len(s.findings))] {
			cause := ""
			if c := s.causes[f.ID]; c != "" {
				cause = "; " + c
			}
			fmt.Fprintf(&b, "- %s %s: %s (%s%s)\n", f.Severity, f.Category, f.Headline, location(f.Path, f.Line), cause)
		}
	}

	b.WriteString("\n")
	counts := map[string]int{}
	for _, f := range s.findings {
		counts[f.Specialist]++
	}
	var parts []string
	for _, o := range res.Outcomes {
		if o.Err == nil {
			parts = append(parts, fmt.Sprintf("%s %d", o.Specialist, counts[o.Specialist]))
		}
	}
	fmt.Fprintf(&b, "Findings by specialist: %s.\n", strings.Join(parts, ", "))
	if l := languagesText(reviewed, s.langs, res.Outcomes); l != "" {
		b.WriteString(l + "\n")
	}
	if failed := failures(res.Outcomes); len(failed) > 0 {
		fmt.Fprintf(&b, "Did not finish: %s. The review went ahead with %d of %d specialists (quorum %d); it may miss what they would have found, so it does not approve the change.\n",
			strings.Join(failed, "; "), len(res.Review.SpecialistsSucceeded), len(res.Outcomes), res.Quorum)
	}
	if s.dropped.Capped > 0 {
		fmt.Fprintf(&b, "Showing the %d most severe of %d findings (max_findings %d).\n", len(s.findings), s.total, opts.MaxFindings)
	}
	if s.dropped.Invalid > 0 {
		fmt.Fprintf(&b, "%s discarded as malformed.\n", capital(plural(s.dropped.Invalid, "finding")))
	}
	if skipped := skippedText(c); skipped != "" {
		fmt.Fprintf(&b, "Not reviewed: %s.\n", skipped)
	}
	if excluded > 0 {
		fmt.Fprintf(&b, "Excluded by the repository's configuration: %s.\n", plural(excluded, "file"))
	}
	if len(opts.Notes) > 0 {
		b.WriteString("\nConfiguration problems:\n")
		for _, n := range opts.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	if ns := specialistNotes(res.Outcomes); len(ns) > 0 {
		b.WriteString("\nEngine notes:\n")
		for _, n := range ns {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// specialistNotes are the notes of the specialists that succeeded, each
// prefixed with its specialist's name, in the specialists' order. A failed
// specialist's notes are left out: its failure says more.
func specialistNotes(outcomes []Outcome) []string {
	var out []string
	for _, o := range outcomes {
		if o.Err != nil {
			continue
		}
		for _, n := range o.Notes {
			out = append(out, o.Specialist+": "+n)
		}
	}
	return out
}

// failureSummary says why a run produced no review.
func failureSummary(res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The review could not run: %d of %d specialists succeeded, and %d must (quorum).",
		len(res.Review.SpecialistsSucceeded), len(res.Outcomes), res.Quorum)
	if failed := failures(res.Outcomes); len(failed) > 0 {
		fmt.Fprintf(&b, "\nDid not finish: %s.", strings.Join(failed, "; "))
	}
	return b.String()
}

// failures describes each failed specialist: its name and, briefly, why.
func failures(outcomes []Outcome) []string {
	var out []string
	for _, o := range outcomes {
		if o.Err == nil {
			continue
		}
		why, _, _ := strings.Cut(o.Err.Error(), "\n")
		if r := []rune(why); len(r) > 160 {
			why = string(r[:160]) + "…"
		}
		out = append(out, fmt.Sprintf("%s (%s)", o.Specialist, why))
	}
	return out
}

// size counts a change's files and its added and deleted lines.
func size(c *change.Change) (files, added, deleted int) {
	for _, f := range c.Files {
		files++
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				switch l.Kind {
				case change.KindAdded:
					added++
				case change.KindDeleted:
					deleted++
				}
			}
		}
	}
	return files, added, deleted
}

func skippedText(c *change.Change) string {
	counts := c.SkippedCounts()
	reasons := make([]string, 0, len(counts))
	for r := range counts {
		reasons = append(reasons, string(r))
	}
	slices.Sort(reasons)
	var parts []string
	total := 0
	for _, r := range reasons {
		n := counts[change.Reason(r)]
		total += n
		parts = append(parts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(r, "_", " ")))
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("%s (%s)", plural(total, "file"), strings.Join(parts, ", "))
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func location(path string, line int) string {
	if line == 0 {
		return path
	}
	return fmt.Sprintf("%s:%d", path, line)
}
