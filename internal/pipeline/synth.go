package pipeline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
)

// excerptContext is how many lines an excerpt shows either side of a finding.
const excerptContext = 3

// maxExcerptLines bounds an excerpt: a finding may span a whole file.
const maxExcerptLines = 40

// synthesis is what synthesize makes of the specialists' findings.
type synthesis struct {
	verdict string
	// gaps are the changed source files no engine analysed.
	gaps []gap
	// langs are the languages of the changed source files, by path.
	langs map[string]string
	// causes says, by finding id, what in the change caused a finding
	// off its added lines.
	causes   map[string]string
	findings []review.Finding // ranked, capped
	total    int              // findings before the cap
	dropped  Dropped
}

// candidate is a finding on its way into the review.
type candidate struct {
	specialist.Finding
	specialist string
	also       []string // "tests (quorum:untested-change)": others that found it
}

func synthesize(ctx context.Context, c *change.Change, outcomes []Outcome, opts Options, now time.Time) synthesis {
	var s synthesis
	var cands []candidate
	for _, o := range outcomes {
		if o.Err != nil {
			continue
		}
		var valid []specialist.Finding
		for _, f := range o.Findings {
			if f.Validate() != nil {
				s.dropped.Invalid++
				continue
			}
			valid = append(valid, f)
		}
		kept := specialist.OnChangedLines(c, valid)
		s.dropped.OffChange += len(valid) - len(kept)
		for _, f := range kept {
			cands = append(cands, candidate{Finding: f, specialist: o.Specialist})
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(
			cmp.Compare(specialist.SeverityRank(a.Severity), specialist.SeverityRank(b.Severity)),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.EndLine, b.EndLine),
		)
	})

	// Merge: the most severe report of a problem is kept (candidates are
	// ranked), and the others that found it are named in its body.
	var merged []*candidate
	byPath := map[string][]*candidate{}
	for i := range cands {
		cd := &cands[i]
		kept := byPath[cd.Path]
		if k := slices.IndexFunc(kept, func(k *candidate) bool { return specialist.SameProblem(k.Finding, cd.Finding) }); k >= 0 {
			s.dropped.Merged++
			keep := kept[k]
			if cd.Engine != keep.Engine {
				// The built-in rule and position stay the finding's
				// identity (and fingerprint); the model that also found it
				// is kept beside it, so the provenance names both engines.
				note := cd.specialist + " (" + cd.Rule + ")"
				if keep.Engine == specialist.EngineLLM {
					note = keep.specialist + " (" + keep.Rule + ")"
					keep.Engine, keep.Rule, keep.Line, keep.EndLine = cd.Engine, cd.Rule, cd.Line, cd.EndLine
				} else {
					keep.Model = cd.Model
				}
				if !slices.Contains(keep.also, note) {
					keep.also = append(keep.also, note)
				}
			} else if cd.specialist != keep.specialist {
				note := cd.specialist
				if cd.Rule != keep.Rule {
					note += " (" + cd.Rule + ")"
				}
				if !slices.Contains(keep.also, note) {
					keep.also = append(keep.also, note)
				}
			}
			continue
		}
		merged = append(merged, cd)
		byPath[cd.Path] = append(byPath[cd.Path], cd)
	}

	src := newSource(ctx, c)
	blocking := specialist.SeverityRank(opts.BlockingSeverity)
	s.verdict = review.VerdictApprove
	seen := map[string]int{}
	for _, cd := range merged {
		if specialist.SeverityRank(cd.Severity) <= blocking {
			s.verdict = review.VerdictRequestChanges
		} else if s.verdict == review.VerdictApprove {
			s.verdict = review.VerdictComment
		}
		lines := src.lines(cd.Path)
		fp := Fingerprint(cd.Rule, cd.Path, lines, cd.Line)
		// Two findings of one rule on one line of identical code would
		// share a fingerprint: number the later ones, in rank order.
		if n := seen[fp]; n > 0 {
			seen[fp]++
			fp = fingerprintHash(fmt.Sprintf("%s#%d", fp, n+1))
		} else {
			seen[fp] = 1
		}
		body := cd.Body
		if len(cd.also) > 0 {
			body = strings.TrimSpace(body + "\n\nAlso found by " + strings.Join(cd.also, ", ") + ".")
		}
		var patch *string
		if cd.SuggestedPatch != "" {
			p := cd.SuggestedPatch
			patch = &p
		}
		fid := id.New(id.Finding, now)
		if cd.Cause != "" {
			if s.causes == nil {
				s.causes = map[string]string{}
			}
			s.causes[fid] = cd.Cause
		}
		s.findings = append(s.findings, review.Finding{
			ID:             fid,
			Specialist:     cd.specialist,
			Category:       cd.Category,
			Severity:       cd.Severity,
			Path:           cd.Path,
			Line:           cd.Line,
			EndLine:        max(cd.EndLine, cd.Line),
			Headline:       cd.Headline,
			Body:           body,
			SuggestedPatch: patch,
			Fingerprint:    fp,
			Engine:         cd.Engine,
			Rule:           cd.Rule,
			Model:          cd.Model,
			DetectedAt:     now,
			Excerpt:        excerptOf(cd.Finding, lines),
		})
	}
	// Source that was not analysed is never approved, nor a change a
	// specialist did not finish reviewing: what it would have found is
	// not known.
	s.langs = sourceLanguages(ctx, c)
	s.gaps = unanalysed(ctx, c, s.langs, outcomes)
	if (len(s.gaps) > 0 || len(failures(outcomes)) > 0) && s.verdict == review.VerdictApprove {
		s.verdict = review.VerdictComment
	}
	s.total = len(s.findings)
	if len(s.findings) > opts.MaxFindings {
		s.dropped.Capped = len(s.findings) - opts.MaxFindings
		s.findings = s.findings[:opts.MaxFindings]
	}
	if s.findings == nil {
		s.findings = []review.Finding{}
	}
	return s
}

// Fingerprint identifies a finding by its content, not its position: the
// rule, the path, and the flagged line with one line either side, each with
// its whitespace collapsed (so re-indenting does not change it). The same
// problem keeps its fingerprint when code above it moves it to another line.
// lines are the file's lines at head; line 0 is the file as a whole.
func Fingerprint(rule, path string, lines []string, line int) string {
	var b strings.Builder
	b.WriteString(rule)
	b.WriteByte(0)
	b.WriteString(path)
	b.WriteByte(0)
	if line > 0 {
		for l := line - 1; l <= line+1; l++ {
			if l >= 1 && l <= len(lines) {
				b.WriteString(strings.Join(strings.Fields(lines[l-1]), " "))
			}
			b.WriteByte('\n')
		}
	}
	return fingerprintHash(b.String())
}

func fingerprintHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// secretRulePrefix marks the secret scanner's findings: their excerpt would
// show the secret that the finding itself is careful to redact, so they
// have none (a private key spans many lines, so blanking the flagged line
// would not be enough).
const secretRulePrefix = "gitleaks:"

func excerptOf(f specialist.Finding, lines []string) review.Excerpt {
	if strings.HasPrefix(f.Rule, secretRulePrefix) {
		return review.Excerpt{Path: f.Path, Lines: []review.Line{}}
	}
	return excerpt(f.Path, lines, f.Line, max(f.EndLine, f.Line))
}

// excerpt is the source around lines [line, end], a few lines either side.
func excerpt(path string, lines []string, line, end int) review.Excerpt {
	e := review.Excerpt{Path: path, Lines: []review.Line{}}
	if line <= 0 || line > len(lines) {
		return e
	}
	e.StartLine = max(1, line-excerptContext)
	e.EndLine = min(len(lines), end+excerptContext, e.StartLine+maxExcerptLines-1)
	for n := e.StartLine; n <= e.EndLine; n++ {
		e.Lines = append(e.Lines, review.Line{Number: n, Text: lines[n-1]})
	}
	return e
}

// source reads files of the change once each, split into lines: at head,
// or at base for a file the change deleted.
type source struct {
	ctx   context.Context
	c     *change.Change
	files map[string][]string
}

func newSource(ctx context.Context, c *change.Change) *source {
	return &source{ctx: ctx, c: c, files: map[string][]string{}}
}

func (s *source) lines(path string) []string {
	if l, ok := s.files[path]; ok {
		return l
	}
	data, err := s.c.ReadFile(s.ctx, path)
	if err != nil {
		data, err = s.c.ReadFileAt(s.ctx, s.c.BaseSHA, path)
	}
	var lines []string
	if err == nil {
		text := strings.TrimSuffix(string(data), "\n")
		if text != "" {
			lines = strings.Split(text, "\n")
		}
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, "\r")
		}
	}
	s.files[path] = lines
	return lines
}
