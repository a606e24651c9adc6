// Package pipeline runs a review: the specialists in parallel, each with its
// own timeout, then synthesis — findings validated, kept to changed lines,
// merged when two specialists found the same problem, fingerprinted, ranked,
// capped — into one review with a verdict and a summary, or a quorum
// failure. Save stores the outcome with its events in one transaction.
//
// Decisions:
//   - Same problem: two findings on the same path whose line ranges overlap
//     (or both on the file as a whole) with the same rule, or with headlines
//     sharing at least 80% of their words, case and punctuation aside. The
//     most severe is kept, under its own specialist; the others that found
//     it are named at the end of its body ("Also found by logic (llm:logic).").
//   - Fingerprint: see Fingerprint. The rule, the path and the flagged line
//     with one neighbour either side, whitespace collapsed; never the line
//     number, so a finding keeps its identity when code above it moves.
//   - Ranking: severity, then path, then line.
//   - Review rate limit: fixed windows aligned to the Unix epoch; see
//     RateLimit.
//   - A secret's finding has no excerpt: it would show the secret.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
)

// Defaults for Options left zero.
const (
	DefaultTimeout          = 2 * time.Minute
	DefaultMaxFindings      = 50
	DefaultBlockingSeverity = specialist.SeverityHigh
)

// Options tunes one run.
type Options struct {
	// Timeout bounds each specialist separately; DefaultTimeout when 0.
	Timeout time.Duration
	// Quorum is how many specialists must succeed; 0 means a majority of
	// those given (3 of 4). More than were given means all of them.
	Quorum int
	// BlockingSeverity is the severity at and above which a finding makes
	// the verdict request_changes; DefaultBlockingSeverity when empty.
	BlockingSeverity string
	// MaxFindings caps the findings of the review, the most severe kept;
	// DefaultMaxFindings when 0.
	MaxFindings int
	// Include, when set, says which files are reviewed (the repository
	// configuration's paths); the others are hidden from the specialists
	// and counted in the summary.
	Include func(path string) bool
	// Notes are problems to report in the summary, such as what was wrong
	// in the repository's configuration.
	Notes []string
	// Rules is the repository's choice of analyzer rules, given to every
	// specialist (specialist.RulesOf).
	Rules specialist.Rules
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Progress, when set, is told as each specialist starts and ends. It
	// is called from the specialists' goroutines, concurrently.
	Progress func(Progress)
}

func (o Options) withDefaults(n int) Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Quorum <= 0 {
		o.Quorum = n/2 + 1
	}
	if o.Quorum > n && n > 0 {
		o.Quorum = n
	}
	if specialist.SeverityRank(o.BlockingSeverity) < 0 {
		o.BlockingSeverity = DefaultBlockingSeverity
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultMaxFindings
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Stage is where a specialist is in its run.
type Stage string

// Stages Progress reports.
const (
	StageStarted  Stage = "started"
	StageFinished Stage = "finished"
	StageFailed   Stage = "failed"
)

// Progress is one step of one specialist, for a progress display.
type Progress struct {
	Specialist string
	Stage      Stage
	// Duration, Findings, Err and Notes are set when the specialist has
	// ended.
	Duration time.Duration
	Findings int
	Err      error
	Notes    []string
}

// Outcome is what one specialist did.
type Outcome struct {
	Specialist string
	// Findings are as the specialist returned them, before synthesis.
	Findings []specialist.Finding
	// Err is why the specialist failed; nil when it succeeded.
	Err      error
	Duration time.Duration
	// Notes are what the specialist told the reader beside its findings
	// (specialist.Note), in the order it told them.
	Notes []string
	// Coverage is what its engines said they analysed and could not
	// (specialist.Analysed, specialist.NotAnalysed).
	Coverage []specialist.Coverage
}

// ErrTimeout is the error of a specialist that ran past its timeout.
var ErrTimeout = errors.New("timed out")

// Dropped counts the findings synthesis left out, by why.
type Dropped struct {
	// Invalid findings failed Finding.Validate.
	Invalid int
	// OffChange findings were on lines the change did not touch, or on
	// files excluded from the review.
	OffChange int
	// Merged findings were the same problem as a finding kept.
	Merged int
	// Capped findings were beyond MaxFindings.
	Capped int
}

// Result is the outcome of a run: a review ready to store, or a failure.
type Result struct {
	// Review is the synthesized review when Reason is empty. On failure
	// it still names the pull request, the head, the time and the
	// specialists that succeeded and failed.
	Review review.Full
	// Reason is empty for a review, else review.failed's reason.
	Reason string
	// Outcomes are the specialists', in the order they were given.
	Outcomes []Outcome
	// Quorum is the number of specialists that had to succeed.
	Quorum  int
	Dropped Dropped
	// Unanalysed are the changed source files no engine analysed (the
	// summary says why), which keep the review from approving.
	Unanalysed []string
}

// Completed reports whether the run produced a review.
func (r Result) Completed() bool { return r.Reason == "" }

// Run reviews c with the specialists in parallel and synthesizes one review.
// It does not fail: a specialist's error, timeout or panic is that
// specialist's failure, and too many failures make a quorum_failure result.
func Run(ctx context.Context, c *change.Change, specialists []specialist.Specialist, opts Options) Result {
	opts = opts.withDefaults(len(specialists))
	rc, excluded := c, 0
	if opts.Include != nil {
		rc, excluded = included(c, opts.Include)
	}

	outcomes := make([]Outcome, len(specialists))
	var wg sync.WaitGroup
	for i, s := range specialists {
		wg.Go(func() { outcomes[i] = runOne(ctx, rc, s, opts) })
	}
	wg.Wait()

	res := Result{Outcomes: outcomes, Quorum: opts.Quorum}
	now := opts.Now().UTC().Truncate(time.Microsecond)
	res.Review.Review = review.Review{
		Owner:                c.Owner,
		Repo:                 c.Repo,
		PRNumber:             c.PRNumber,
		HeadSHA:              c.HeadSHA,
		BaseSHA:              c.BaseSHA,
		SynthesizedAt:        now,
		SpecialistsSucceeded: []string{},
		SpecialistsFailed:    []string{},
	}
	for _, o := range outcomes {
		if o.Err != nil {
			res.Review.SpecialistsFailed = append(res.Review.SpecialistsFailed, o.Specialist)
		} else {
			res.Review.SpecialistsSucceeded = append(res.Review.SpecialistsSucceeded, o.Specialist)
		}
	}
	res.Review.Findings = []review.Finding{}
	if len(res.Review.SpecialistsSucceeded) < opts.Quorum || len(specialists) == 0 {
		res.Reason = event.ReasonQuorumFailure
		res.Review.Summary = failureSummary(res)
		return res
	}
	s := synthesize(ctx, rc, outcomes, opts, now)
	res.Review.ID = id.New(id.Review, now)
	res.Dropped = s.dropped
	res.Review.Verdict = s.verdict
	for _, g := range s.gaps {
		res.Unanalysed = append(res.Unanalysed, g.path)
	}
	res.Review.Findings = s.findings
	res.Review.FindingsCount = len(s.findings)
	res.Review.Summary = summarize(c, rc, excluded, res, s, opts)
	return res
}

// included returns a copy of c without the files include refuses, and how
// many it left out. Skipped files stay as they are.
func included(c *change.Change, include func(string) bool) (*change.Change, int) {
	cc := *c
	cc.Files = nil
	for _, f := range c.Files {
		if include(f.Path()) {
			cc.Files = append(cc.Files, f)
		}
	}
	return &cc, len(c.Files) - len(cc.Files)
}

// runOne runs one specialist under its own timeout. A specialist that does
// not return when its context ends is abandoned: it is reported as timed
// out and its goroutine's result, if it ever comes, is dropped.
func runOne(ctx context.Context, c *change.Change, s specialist.Specialist, opts Options) Outcome {
	o := Outcome{Specialist: s.Name()}
	report := func(p Progress) {
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	report(Progress{Specialist: o.Specialist, Stage: StageStarted})
	start := opts.Now()
	tctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	var (
		notesMu sync.Mutex
		notes   []string
	)
	var coverage []specialist.Coverage
	tctx = specialist.WithNotes(tctx, func(n string) {
		notesMu.Lock()
		defer notesMu.Unlock()
		notes = append(notes, n)
	})
	tctx = specialist.WithRules(tctx, opts.Rules)
	tctx = specialist.WithCoverage(tctx, func(cv specialist.Coverage) {
		notesMu.Lock()
		defer notesMu.Unlock()
		coverage = append(coverage, cv)
	})

	type result struct {
		findings []specialist.Finding
		err      error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
			}
		}()
		fs, err := s.Review(tctx, c)
		done <- result{fs, err}
	}()
	select {
	case r := <-done:
		o.Findings, o.Err = r.findings, r.err
	case <-tctx.Done():
		// A specialist that finished as its time ran out has finished.
		select {
		case r := <-done:
			o.Findings, o.Err = r.findings, r.err
		default:
			o.Err = tctx.Err()
		}
	}
	if o.Err != nil && errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		o.Err = fmt.Errorf("%w after %s", ErrTimeout, opts.Timeout)
	}
	if o.Err != nil {
		o.Findings = nil
	}
	o.Duration = opts.Now().Sub(start)
	notesMu.Lock()
	o.Notes = slices.Clone(notes)
	o.Coverage = slices.Clone(coverage)
	notesMu.Unlock()
	p := Progress{Specialist: o.Specialist, Stage: StageFinished, Duration: o.Duration, Findings: len(o.Findings), Err: o.Err, Notes: o.Notes}
	if o.Err != nil {
		p.Stage = StageFailed
	}
	report(p)
	return o
}
