package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/llm"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/specialist/builtin"
)

// others runs the analyzers of other languages that `quorum analyzers
// install` put in place ($QUORUM_ANALYZERS_DIR or the user's cache).
var others = sync.OnceValue(func() *polyglot.Engine {
	return polyglot.New(context.Background(), polyglot.Config{Dir: os.Getenv("QUORUM_ANALYZERS_DIR")})
})

// childEnv marks the process a run starts for each case; the tests' main
// looks for it, since their executable is the test binary.
const childEnv = "QUORUM_BENCH_QUALITY_CHILD"

// Outcome is what the review of one case reports to the run, as JSON on
// the child's standard output.
type Outcome struct {
	Findings []Finding `json:"findings"`
	Verdict  string    `json:"verdict"`
	Summary  string    `json:"summary"`
	Reason   string    `json:"reason,omitempty"`
	Failed   []string  `json:"failed,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
	Capped   int       `json:"capped,omitempty"`
	Seconds  float64   `json:"seconds"`
	// PeakRSS is the reviewing process's VmHWM after the review.
	PeakRSS int64 `json:"peak_rss_bytes"`
}

// reviewCase reviews base..head of the repository at repo as quorum
// review does (cmd/quorum/review.go): the change, the repository's
// configuration at base, the built-in specialists sharing one loader with
// goCfg (the zero value: offline, the user's module cache), and
// pipeline.Run with the configuration's options.
//
// With wiring set, the LLM engine reviews beside the built-in engines, as
// quorum review --llm-base-url does.
func reviewCase(ctx context.Context, repo, name, base, head string, timeout time.Duration, goCfg goanalysis.Config, wiring *llm.Wiring) (Outcome, error) {
	start := time.Now()
	ch, err := change.NewLocal(repo).Change(ctx, change.Ref{Owner: "bench", Repo: name, Base: base, Head: head})
	if err != nil {
		return Outcome{}, fmt.Errorf("read the change: %w", err)
	}
	cfg, problems := repoconfig.Load(ctx, ch)
	specs, missing, err := builtin.New(cfg.Specialists, goanalysis.NewLoader(goCfg), others())
	if err != nil {
		return Outcome{}, err
	}
	if wiring != nil {
		var ins []llm.Instruction
		for _, i := range cfg.Instructions {
			ins = append(ins, llm.Instruction{PathGlob: i.Path, Text: i.Text})
		}
		if specs, missing, err = wiring.Wire(specs, missing, ins); err != nil {
			return Outcome{}, err
		}
	}
	notes := problems
	if len(missing) > 0 {
		notes = append(slices.Clone(problems), fmt.Sprintf("specialists %s are enabled but not available in this build.", strings.Join(missing, ", ")))
	}
	res := pipeline.Run(ctx, ch, specs, pipeline.Options{
		Timeout:          timeout,
		Quorum:           cfg.Quorum,
		BlockingSeverity: cfg.BlockingSeverity,
		MaxFindings:      cfg.MaxFindings,
		Include:          cfg.Includes,
		Notes:            notes,
		Rules:            cfg.Rules,
	})
	if err := ctx.Err(); err != nil {
		return Outcome{}, fmt.Errorf("review interrupted: %w", err)
	}
	out := Outcome{
		Findings: []Finding{}, Verdict: res.Review.Verdict, Summary: res.Review.Summary, Reason: res.Reason, Notes: notes,
		Capped: res.Dropped.Capped, Seconds: seconds(time.Since(start)),
	}
	for _, o := range res.Outcomes {
		if o.Err != nil {
			why, _, _ := strings.Cut(o.Err.Error(), "\n")
			out.Failed = append(out.Failed, o.Specialist+": "+why)
		}
		for _, n := range o.Notes {
			out.Notes = append(out.Notes, o.Specialist+": "+n)
		}
	}
	for _, f := range res.Review.Findings {
		out.Findings = append(out.Findings, Finding{
			Specialist: f.Specialist, Severity: f.Severity, Rule: f.Rule, Path: f.Path,
			Line: f.Line, EndLine: f.EndLine, Headline: f.Headline, Fingerprint: f.Fingerprint,
			Engine: f.Engine, Model: f.Model,
		})
	}
	out.PeakRSS = vmHWM()
	return out, nil
}

// vmHWM is this process's peak resident set size, in bytes, from
// /proc/self/status; 0 where there is none.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n * 1024
		}
	}
	return 0
}

// runner reviews prepared cases, each in a child process of its own, so
// that each case's peak memory is its own and a crash is one case's.
type runner struct {
	work    string
	timeout time.Duration
	verbose bool
	stderr  io.Writer
	// exe is the executable to start for a case: this one.
	exe string
	// modCache, when set, is the run's own module cache, which the
	// reviews fetch into through goProxy (--fresh-modcache), goPrivate
	// the private module patterns.
	modCache, goProxy, goPrivate string
	// llm are the LLM engine's flags, given to each child.
	llm llmFlags
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// removeModCache removes a module cache, whose trees the go command made
// read-only.
func removeModCache(dir string) {
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
}

// review reviews case k in a child process.
func (r *runner) review(ctx context.Context, k Case) CaseReport {
	cr := CaseReport{ID: k.ID, Repo: k.Repo, Kind: k.Kind, Commit: k.Commit, Title: k.Title, Findings: []FindingReport{}}
	dir := caseDir(r.work, k.ID)
	m, err := readMeta(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		cr.Error = fmt.Sprintf("not prepared: run go run ./bench/quality prepare --work %s", r.work)
		return cr
	case err != nil:
		cr.Error = err.Error()
		return cr
	case m.Spec != spec(k):
		cr.Error = "prepared from another version of its corpus entry: run prepare again"
		return cr
	}
	cr.Base, cr.Head = m.Base, m.Head
	if m.Modules != "ok" {
		cr.Notes = append(cr.Notes, "modules not ready ("+m.Modules+"); the review may fall back to syntax-only")
	}
	cmd := exec.CommandContext(ctx, r.exe, "review-case",
		"--repo", filepath.Join(dir, "repo.git"), "--name", k.Repo[strings.IndexByte(k.Repo, '/')+1:],
		"--base", m.Base, "--head", m.Head, "--timeout", r.timeout.String())
	if r.modCache != "" {
		cmd.Args = append(cmd.Args, "--modcache", r.modCache, "--go-proxy", r.goProxy, "--go-private", r.goPrivate)
	}
	cmd.Args = append(cmd.Args, r.llm.args()...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if r.verbose {
		cmd.Stderr = io.MultiWriter(&stderr, r.stderr)
	}
	if err := cmd.Run(); err != nil {
		cr.Error = fmt.Sprintf("review: %v: %s", err, lastLines(stderr.String(), 5))
		return cr
	}
	var o Outcome
	if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
		cr.Error = fmt.Sprintf("decode the review's outcome: %v", err)
		return cr
	}
	cr.Verdict, cr.Summary, cr.Reason, cr.Failed, cr.Capped = o.Verdict, o.Summary, o.Reason, o.Failed, o.Capped
	cr.Notes = append(cr.Notes, o.Notes...)
	cr.Seconds, cr.PeakRSS = o.Seconds, o.PeakRSS
	for _, f := range o.Findings {
		cr.Findings = append(cr.Findings, FindingReport{Finding: f})
	}
	return cr
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
