// Command review is the benchmark of `quorum review` with the built-in
// engines. In one run it generates, deterministically from a seed, a git
// repository of about 200 Go files in 20 packages of one module (standard
// library only), commits it as the base, applies a change of about 500
// changed lines across 20 files (new functions, edited lines, new tests and
// planted problems for every specialist: a lost context.CancelFunc,
// fmt.Sprintf into db.Query, regexp.MustCompile in a loop, defer and string
// concatenation in loops, an added t.Skip), commits it as the head, builds
// the real quorum binary and runs
//
//	quorum review --repo DIR --base BASE --head HEAD --format json
//
// as a child process --runs times. The first --cold runs start with an
// empty cache directory (XDG_CACHE_HOME, under which quorum's Go analysis
// keeps its private GOCACHE); the others reuse the last one. It prints
// markdown: wall time (p50, p90, max) cold and warm, peak memory, CPU time,
// and each specialist's duration and share of the wall time, parsed from
// the progress lines quorum prints on stderr.
//
//	go run ./bench/review
//	go run ./bench/review --runs 15 --seed 2 --keep
//	go run ./bench/review --polyglot
//	go run ./bench/review --against 1190139   # each run paired with one of quorum at that commit
//	go run ./bench/review --repo ~/src/caddy --base v2.8.0 --head v2.8.1 --runs 3
//
// With --polyglot the change also edits a Python tool, a TypeScript module,
// a shell script and a Dockerfile (about 500 changed lines in all), and
// each run is paired with a baseline run without the analyzers of other
// languages; it reports the ratio and each analyzer's time and share.
//
// With --repo it reviews a real repository's change instead (time and
// memory on a large repository); there are no planted problems then, and
// the Go lines are estimated from the files' sizes (30 bytes a line).
//
// It is a command, not part of go test. See docs/performance.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quorum-review/quorum/bench/internal/machine"
	"github.com/quorum-review/quorum/internal/polyglot"
)

type config struct {
	// repo, base and head name a real repository and change to review
	// instead of the generated one.
	repo, base, head string
	runs             int
	cold             int
	seed             uint64
	keep             bool
	timeout          time.Duration
	profile          string
	// polyglot reviews a change in Go, Python, TypeScript, shell and a
	// Dockerfile; each run also reviews it without the analyzers of other
	// languages, the baseline.
	polyglot bool
	// analyzers is the analyzers' directory the runs are given (the
	// runs' XDG_CACHE_HOME hides the default one).
	analyzers string
	// against is a git revision of quorum each run is paired with.
	against string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.runs, "runs", 7, "runs of quorum review, the first --cold of them cold")
	flag.IntVar(&cfg.cold, "cold", 1, "how many of the runs start with an empty cache directory (each its own)")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated repository and change")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the temporary directory (repository, binary, caches, outputs)")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "time limit of each run")
	flag.StringVar(&cfg.repo, "repo", "", "review this git repository instead of the generated one (with --base and --head): a large real repository for time and memory")
	flag.StringVar(&cfg.base, "base", "", "with --repo: the change's base revision")
	flag.StringVar(&cfg.head, "head", "", "with --repo: the change's head revision")
	flag.StringVar(&cfg.profile, "profile", "", "after the runs, review once more in this process, warm, in phases, and write CPU and heap profiles into this directory")
	flag.BoolVar(&cfg.polyglot, "polyglot", false, "review a change in Go, Python, TypeScript, shell and a Dockerfile (about 500 changed lines); each run is paired with a baseline run without the analyzers of other languages")
	flag.StringVar(&cfg.analyzers, "analyzers-dir", polyglot.DefaultDir(), "the analyzers of other languages, as quorum analyzers install made them")
	flag.StringVar(&cfg.against, "against", "", "pair each run with a run of quorum built at this git revision (e.g. the commit before a change), and report the ratio")
	flag.Parse()
	if cfg.runs < 1 || cfg.cold < 0 || cfg.cold > cfg.runs {
		fmt.Fprintln(os.Stderr, "review: want --runs ≥ 1 and 0 ≤ --cold ≤ --runs")
		os.Exit(2)
	}
	if (cfg.repo == "") != (cfg.base == "" && cfg.head == "") || cfg.repo != "" && (cfg.base == "" || cfg.head == "") {
		fmt.Fprintln(os.Stderr, "review: --repo, --base and --head go together")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "review:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	tmp, err := os.MkdirTemp("", "quorum-bench-review-")
	if err != nil {
		return err
	}
	if cfg.keep {
		fmt.Fprintln(os.Stderr, "review: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	loadStart := machine.LoadAvg()

	// The repository.
	t0 := time.Now()
	var r *repo
	var repoDir, baseSHA, headSHA string
	if cfg.repo != "" {
		r = &repo{base: map[string]string{}}
		repoDir = cfg.repo
		if baseSHA, headSHA, err = resolve(ctx, repoDir, cfg.base, cfg.head); err != nil {
			return err
		}
	} else {
		r = generateWith(cfg.seed, cfg.polyglot)
		repoDir = filepath.Join(tmp, "repo")
		if baseSHA, headSHA, err = commitRepo(ctx, repoDir, r); err != nil {
			return fmt.Errorf("generate the repository: %w", err)
		}
	}
	stats, err := diffStats(ctx, repoDir, baseSHA, headSHA)
	if err != nil {
		return err
	}
	goFiles, goLines := 0, 0
	for p, src := range r.base {
		if strings.HasSuffix(p, ".go") {
			goFiles++
			goLines += strings.Count(src, "\n")
		}
	}
	if cfg.repo != "" {
		if goFiles, goLines, err = countGo(ctx, repoDir, headSHA); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "review: the repository ready in %s\n", time.Since(t0).Round(time.Millisecond))

	// The binary.
	bin := filepath.Join(tmp, "quorum")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/quorum")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/quorum (run from the module's root): %w", err)
	}
	commit, _ := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	var againstBin string
	if cfg.against != "" {
		if againstBin, err = buildAt(ctx, cfg.against, tmp); err != nil {
			return err
		}
	}

	// The runs.
	var results, baselines, against []result
	var cacheDir string
	for i := range cfg.runs {
		cold := i < cfg.cold
		if cold {
			cacheDir = filepath.Join(tmp, fmt.Sprintf("cache-%d", i))
			if err := os.MkdirAll(cacheDir, 0o700); err != nil {
				return err
			}
		} else if cacheDir == "" {
			// No cold run asked for: the user's cache, as it is.
			cacheDir = os.Getenv("XDG_CACHE_HOME")
		}
		if cfg.polyglot {
			// The baseline first, so the pair shares the cache state
			// (cold for the baseline, warm for what follows).
			none := filepath.Join(tmp, "no-analyzers")
			if err := os.MkdirAll(none, 0o700); err != nil {
				return err
			}
			b, err := reviewOnce(ctx, cfg, bin, repoDir, baseSHA, headSHA, cacheDir, none, filepath.Join(tmp, fmt.Sprintf("baseline-%d", i)))
			if err != nil {
				return fmt.Errorf("baseline run %d: %w", i+1, err)
			}
			b.cold = cold
			baselines = append(baselines, b)
		}
		res, err := reviewOnce(ctx, cfg, bin, repoDir, baseSHA, headSHA, cacheDir, cfg.analyzers, filepath.Join(tmp, fmt.Sprintf("run-%d", i)))
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		res.cold = cold
		results = append(results, res)
		if againstBin != "" {
			a, err := reviewOnce(ctx, cfg, againstBin, repoDir, baseSHA, headSHA, cacheDir, cfg.analyzers, filepath.Join(tmp, fmt.Sprintf("against-%d", i)))
			if err != nil {
				return fmt.Errorf("run %d of %s: %w", i+1, cfg.against, err)
			}
			a.cold = cold
			against = append(against, a)
		}
		kind := "warm"
		if cold {
			kind = "cold"
		}
		fmt.Fprintf(os.Stderr, "review: run %d (%s): %s, quorum peak %s, tree peak %s, %d findings\n",
			i+1, kind, res.wall.Round(time.Millisecond), mb(res.selfHWM), mb(res.treePeak), res.findings)
	}
	loadEnd := machine.LoadAvg()

	report(os.Stdout, cfg, reportInfo{
		commit: strings.TrimSpace(string(commit)), loadStart: loadStart, loadEnd: loadEnd,
		goFiles: goFiles, goLines: goLines, pkgs: len(r.pkgs), stats: stats,
		baseSHA: baseSHA, headSHA: headSHA, planted: r.planted,
	}, results)
	if cfg.polyglot {
		reportPolyglot(os.Stdout, results, baselines)
	}
	if againstBin != "" {
		reportAgainst(os.Stdout, cfg.against, results, against)
	}
	if cfg.profile != "" {
		return profileInProcess(ctx, os.Stdout, cfg.profile, repoDir, baseSHA, headSHA, cacheDir)
	}
	return nil
}

// buildAt builds quorum as it was at the git revision rev (git archive
// into tmp) and returns the binary's path.
func buildAt(ctx context.Context, rev, tmp string) (string, error) {
	src := filepath.Join(tmp, "against-src")
	if err := os.MkdirAll(src, 0o700); err != nil {
		return "", err
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git archive --format=tar "$1" | tar -x -C "$2"`, "sh", rev, src)
	archive.Stderr = os.Stderr
	if err := archive.Run(); err != nil {
		return "", fmt.Errorf("git archive %s: %w", rev, err)
	}
	bin := filepath.Join(tmp, "quorum-against")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/quorum")
	build.Dir = src
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build at %s: %w", rev, err)
	}
	return bin, nil
}

// commitRepo writes the base tree, commits it, writes the head tree and
// commits it, with fixed identities and dates so the SHAs depend on the
// seed alone.
func commitRepo(ctx context.Context, dir string, r *repo) (base, head string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	env := append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@example.com",
	)
	git := func(date string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(env, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimSpace(string(out)), nil
	}
	const d1, d2 = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
	if _, err := git(d1, "init", "-q", "-b", "main"); err != nil {
		return "", "", err
	}
	if err := write(dir, r.base); err != nil {
		return "", "", err
	}
	if _, err := git(d1, "add", "-A"); err != nil {
		return "", "", err
	}
	if _, err := git(d1, "commit", "-q", "-m", "base"); err != nil {
		return "", "", err
	}
	if base, err = git(d1, "rev-parse", "HEAD"); err != nil {
		return "", "", err
	}
	if err := write(dir, r.head); err != nil {
		return "", "", err
	}
	if _, err := git(d2, "checkout", "-q", "-b", "change"); err != nil {
		return "", "", err
	}
	if _, err := git(d2, "commit", "-q", "-a", "-m", "change"); err != nil {
		return "", "", err
	}
	if head, err = git(d2, "rev-parse", "HEAD"); err != nil {
		return "", "", err
	}
	return base, head, nil
}

type diffStat struct {
	files, added, deleted int
}

func diffStats(ctx context.Context, dir, base, head string) (diffStat, error) {
	cmd := exec.CommandContext(ctx, "git", "diff", "--numstat", base, head)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return diffStat{}, fmt.Errorf("git diff --numstat: %w", err)
	}
	var s diffStat
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		a, _ := strconv.Atoi(f[0])
		d, _ := strconv.Atoi(f[1])
		s.files++
		s.added += a
		s.deleted += d
	}
	return s, nil
}

// result is one run of quorum review.
type result struct {
	cold     bool
	wall     time.Duration
	exit     int
	findings int
	// bySpec is each specialist's duration, from stderr.
	bySpec map[string]time.Duration
	// byTool is each analyzer of another language's time on the change.
	byTool map[string]time.Duration
	failed []string
	// bySpecCount counts findings by specialist; found holds
	// "specialist path" of each finding.
	bySpecCount map[string]int
	found       map[string]bool
	// syntaxOnly is set when some finding says the analysis fell back
	// to syntax alone.
	syntaxOnly bool
	// rusage of wait4: on Linux, the child and its reaped descendants.
	maxRSS    int64 // bytes
	user, sys time.Duration
	// selfHWM is quorum's own VmHWM, last sampled before it exited;
	// treePeak the highest sampled sum of VmRSS over quorum and its
	// descendants.
	selfHWM, treePeak int64
	// selfCPU is quorum's own user+system time, last sampled.
	selfCPU time.Duration
	samples int
}

// analyzerLine is quorum review's line for an analyzer of another
// language: "quorum: ruff        ran in 120ms on 2 files".
var analyzerLine = regexp.MustCompile(`^quorum: (\S+)\s+ran in ([0-9.]+[a-zµ]+) on`)

var progressLine = regexp.MustCompile(`^quorum: (\S+)\s+(finished in|failed after) ([0-9.]+[a-zµ]+)`)

func reviewOnce(ctx context.Context, cfg config, bin, repoDir, base, head, cacheDir, analyzers, outPrefix string) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "review", "--repo", repoDir, "--base", base, "--head", head, "--format", "json", "--analyzers-dir", analyzers)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "XDG_CACHE_HOME=") })
	if cacheDir != "" {
		env = append(env, "XDG_CACHE_HOME="+cacheDir)
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	samplerDone := make(chan sample)
	stopSampling := make(chan struct{})
	go func() { samplerDone <- sampleTree(cmd.Process.Pid, stopSampling) }()
	werr := cmd.Wait()
	wall := time.Since(start)
	close(stopSampling)
	smp := <-samplerDone
	_ = os.WriteFile(outPrefix+".json", stdout.Bytes(), 0o644)
	_ = os.WriteFile(outPrefix+".stderr", stderr.Bytes(), 0o644)

	res := result{wall: wall, bySpec: map[string]time.Duration{}, byTool: map[string]time.Duration{}, bySpecCount: map[string]int{}, found: map[string]bool{}, selfHWM: smp.selfHWM, treePeak: smp.treePeak, selfCPU: smp.selfCPU, samples: smp.n}
	var exitErr *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &exitErr) && exitErr.ExitCode() == 1:
		// The verdict is request_changes: the planted problems.
		res.exit = 1
	default:
		return res, fmt.Errorf("quorum review: %w\n%s", werr, stderr.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		res.user = time.Duration(ru.Utime.Nano())
		res.sys = time.Duration(ru.Stime.Nano())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if m := analyzerLine.FindStringSubmatch(l); m != nil {
			if d, err := time.ParseDuration(m[2]); err == nil {
				res.byTool[m[1]] = d
			}
			continue
		}
		m := progressLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		d, err := time.ParseDuration(m[3])
		if err != nil {
			continue
		}
		res.bySpec[m[1]] = d
		if m[2] == "failed after" {
			res.failed = append(res.failed, m[1])
		}
	}
	var rv struct {
		Findings []struct {
			Specialist string `json:"specialist"`
			Path       string `json:"path"`
			Line       int    `json:"line"`
			Headline   string `json:"headline"`
			Body       string `json:"body"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rv); err != nil {
		return res, fmt.Errorf("decode the review: %w", err)
	}
	res.findings = len(rv.Findings)
	for _, f := range rv.Findings {
		res.bySpecCount[f.Specialist]++
		if f.Line > 0 {
			res.found[f.Specialist+" "+f.Path] = true
		}
		if strings.Contains(f.Body, "syntax") {
			res.syntaxOnly = true
		}
	}
	return res, nil
}

type sample struct {
	selfHWM, treePeak int64
	selfCPU           time.Duration
	n                 int
}

// ownCPU returns the user+system time of pid itself (not its children),
// from /proc/PID/stat, at the kernel's USER_HZ of 100.
func ownCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	// After the command: state (field 3) … utime (14), stime (15).
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// sampleTree polls /proc until stop: every 10 ms the process's own VmHWM
// (monotonic, so the last reading before it exits is its peak but for the
// last few milliseconds), every 100 ms the sum of VmRSS over it and its
// descendants (a scan of /proc, too dear to do more often on two cores).
func sampleTree(pid int, stop <-chan struct{}) sample {
	var s sample
	if runtime.GOOS != "linux" {
		return s
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if hwm, _, _, ok := statusKB(pid); ok {
			s.selfHWM = max(s.selfHWM, hwm*1024)
		}
		if cpu, ok := ownCPU(pid); ok {
			s.selfCPU = max(s.selfCPU, cpu)
		}
		var sum int64
		if _, rss, name, ok := statusKB(pid); ok && s.n%10 == 0 {
			sum += rss * 1024
			for _, p := range descendants(pid) {
				// A child forked but not yet exec'd shows quorum's
				// pages, which it shares: not counted.
				if _, rss, n, ok := statusKB(p); ok && n != name {
					sum += rss * 1024
				}
			}
		}
		s.treePeak = max(s.treePeak, sum)
		s.n++
		select {
		case <-stop:
			return s
		case <-tick.C:
		}
	}
}

// statusKB returns VmHWM and VmRSS of pid, in kilobytes, and its name.
func statusKB(pid int) (hwm, rss int64, name string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, "", false
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, found := strings.Cut(l, ":")
		if found && k == "Name" {
			name = strings.TrimSpace(v)
		}
		if !found || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if k == "VmHWM" {
			hwm, ok = n, true
		} else {
			rss = n
		}
	}
	return hwm, rss, name, ok
}

// descendants lists the processes below pid, from the parent field of
// /proc/*/stat.
func descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func mb(b int64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MB", float64(b)/1e6)
}

// resolve turns --base and --head into commit ids of the repository.
func resolve(ctx context.Context, dir, base, head string) (string, string, error) {
	var out [2]string
	for i, rev := range []string{base, head} {
		b, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--verify", rev+"^{commit}").Output()
		if err != nil {
			return "", "", fmt.Errorf("%s is not a commit of %s: %w", rev, dir, err)
		}
		out[i] = strings.TrimSpace(string(b))
	}
	return out[0], out[1], nil
}

// countGo counts the Go files and their lines at rev.
func countGo(ctx context.Context, dir, rev string) (files, lines int, err error) {
	list, err := exec.CommandContext(ctx, "git", "-C", dir, "ls-tree", "-r", "-l", rev).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("git ls-tree: %w", err)
	}
	for _, l := range strings.Split(string(list), "\n") {
		if strings.HasSuffix(l, ".go") {
			files++
			// Lines are estimated from the size: ls-tree -l gives bytes.
			if f := strings.Fields(l); len(f) >= 4 {
				if n, err := strconv.Atoi(f[3]); err == nil {
					lines += n / 30
				}
			}
		}
	}
	return files, lines, nil
}
