// Command quality measures the review's quality on real code: a corpus of
// real changes of public Go repositories (bench/quality/corpus.json), bug
// fixes reverted with the findings a good review must make, and ordinary
// commits whose findings are labelled useful or noise by hand
// (bench/quality/labels.json).
//
//	go run ./bench/quality prepare [--corpus FILE] [--mirrors DIR] [--work DIR] [--case ID]…
//	go run ./bench/quality run [--case ID]… [--kind bug|ordinary] [--json] [--label-template FILE] [--fresh-modcache]
//
// prepare materialises each case from a local snapshot of its repository
// (the search tool's fetch puts one under /work/.mirror) into the work
// directory, outside the project: a git bundle of two synthesized commits,
// base and head, and a bare repository made from it; and it downloads the
// Go modules that base and head need, so that the review, offline, can
// type-check. run reviews each case as quorum review does, each in a child
// process, and prints the findings, the recall on bug cases (per class,
// with every miss), the signal ratio on ordinary cases, every unlabelled
// finding, the review time and the peak memory. See bench/quality/README.md.
//
// It is a command, not part of go test.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/quorum-review/quorum/bench/internal/machine"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/llm"
	"github.com/quorum-review/quorum/internal/membudget"
	"github.com/quorum-review/quorum/internal/pipeline"
)

func main() {
	// A case is reviewed as quorum review reviews it, its collector
	// paced the same way.
	membudget.PaceGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quality:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

const usage = `usage: go run ./bench/quality prepare|run [flags]   (-h after either for its flags)`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New(usage)}
	}
	switch args[0] {
	case "prepare":
		return runPrepare(ctx, args[1:], stderr)
	case "run":
		return runRun(ctx, args[1:], stdout, stderr)
	case "review-case":
		return runReviewCase(ctx, args[1:], stdout, stderr)
	}
	return usageError{fmt.Errorf("unknown command %q\n%s", args[0], usage)}
}

// caseList is a repeatable --case flag; each value may list several ids,
// separated by commas.
type caseList []string

func (c *caseList) String() string { return strings.Join(*c, ",") }

func (c *caseList) Set(v string) error {
	for _, id := range strings.Split(v, ",") {
		if id = strings.TrimSpace(id); id != "" {
			*c = append(*c, id)
		}
	}
	return nil
}

// common are the flags prepare and run share.
type common struct {
	corpus string
	work   string
	cases  caseList
	kind   string
}

func (c *common) add(fs *flag.FlagSet) {
	fs.StringVar(&c.corpus, "corpus", filepath.Join("bench", "quality", "corpus.json"), "the corpus manifest")
	fs.StringVar(&c.work, "work", defaultWork(), "the directory the prepared cases are kept in (outside the project)")
	fs.Var(&c.cases, "case", "only this case (repeatable, or ids separated by commas)")
	fs.StringVar(&c.kind, "kind", "", "only the cases of this kind: bug or ordinary")
}

// selected reads the corpus and returns the cases the flags select.
func (c *common) selected() (*Corpus, []Case, error) {
	if c.kind != "" && c.kind != kindBug && c.kind != kindOrdinary {
		return nil, nil, usageError{fmt.Errorf("--kind: want bug or ordinary, got %q", c.kind)}
	}
	corpus, err := readCorpus(c.corpus)
	if err != nil {
		return nil, nil, err
	}
	var out []Case
	for _, id := range c.cases {
		if !slices.ContainsFunc(corpus.Cases, func(k Case) bool { return k.ID == id }) {
			return nil, nil, usageError{fmt.Errorf("--case: no case %q in %s", id, c.corpus)}
		}
	}
	for _, k := range corpus.Cases {
		if (len(c.cases) == 0 || slices.Contains(c.cases, k.ID)) && (c.kind == "" || k.Kind == c.kind) {
			out = append(out, k)
		}
	}
	return corpus, out, nil
}

// defaultWork is the work directory under the user's cache directory.
func defaultWork() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "quorum", "bench-quality")
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return usageError{errors.New("help requested")}
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	return nil
}

func runPrepare(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("prepare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.add(fs)
	mirrors := fs.String("mirrors", "/work/.mirror", "the directory of the repositories' snapshots, <owner>+<name> each")
	if err := parse(fs, args); err != nil {
		return err
	}
	_, cases, err := c.selected()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		return err
	}
	p := &preparer{mirrors: *mirrors, work: c.work, stderr: stderr}
	var failed []string
	for _, k := range cases {
		if err := p.prepare(ctx, k); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(stderr, "quality: %v\n", err)
			failed = append(failed, k.ID)
		}
	}
	fmt.Fprintf(stderr, "quality: %d of %d cases ready in %s\n", len(cases)-len(failed), len(cases), c.work)
	if len(failed) > 0 {
		return fmt.Errorf("%s not ready: %s", plural(len(failed), "case"), strings.Join(failed, ", "))
	}
	return nil
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.add(fs)
	labelsPath := fs.String("labels", filepath.Join("bench", "quality", "labels.json"), "the hand labels of findings")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of text")
	template := fs.String("label-template", "", "write label entries (label empty) for every unlabelled finding into this file")
	timeout := fs.Duration("timeout", pipeline.DefaultTimeout, "time limit of each specialist, as quorum review's --timeout")
	verbose := fs.Bool("v", false, "show each review's progress lines")
	fresh := fs.Bool("fresh-modcache", false, "review as a fresh server would: Go modules fetched through --go-proxy into an empty module cache of the run's own, removed at its end (default: loaded offline from the user's module cache, which prepare filled)")
	goProxy := fs.String("go-proxy", goanalysis.DefaultGoProxy, "with --fresh-modcache: the module proxies to fetch through, as quorum review's --go-proxy")
	goPrivate := fs.String("go-private", "", "with --fresh-modcache: private module patterns, as quorum review's --go-private")
	var lf llmFlags
	lf.add(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := lf.check(); err != nil {
		return err
	}
	corpus, cases, err := c.selected()
	if err != nil {
		return err
	}
	labels, err := readLabels(*labelsPath, corpus)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r := &runner{work: c.work, timeout: *timeout, verbose: *verbose, stderr: stderr, exe: exe, llm: lf}
	if lf.baseURL != "" && os.Getenv(lf.keyEnv) == "" {
		fmt.Fprintf(stderr, "quality: %s is empty: requests to the LLM API carry no key\n", lf.keyEnv)
	}
	if *fresh {
		if r.modCache, err = os.MkdirTemp("", "quorum-bench-modcache-"); err != nil {
			return err
		}
		defer func() {
			fmt.Fprintf(stderr, "quality: the run's module cache held %s\n", mb(dirSize(r.modCache)))
			removeModCache(r.modCache)
		}()
		r.goProxy, r.goPrivate = *goProxy, *goPrivate
	}
	load := machine.LoadAvg()
	var reports []CaseReport
	for i, k := range cases {
		t := time.Now()
		cr := r.review(ctx, k)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		status := fmt.Sprintf("%s in %.1fs", plural(len(cr.Findings), "finding"), cr.Seconds)
		if cr.Error != "" {
			status = "error: " + firstLine(cr.Error)
		}
		fmt.Fprintf(stderr, "quality: [%d/%d] %s: %s (%s wall)\n", i+1, len(cases), k.ID, status, time.Since(t).Round(time.Millisecond))
		reports = append(reports, cr)
	}
	byID := map[string]Case{}
	for _, k := range corpus.Cases {
		byID[k.ID] = k
	}
	rep := judge(reports, byID, labels)
	if lf.baseURL != "" {
		rep.LLMModel = lf.model
		rep.ByEngine = map[string]EngineFigures{
			engineBuiltin: engineFigures(rep, byID, engineBuiltin),
			engineLLM:     engineFigures(rep, byID, engineLLM),
		}
	}
	if *template != "" {
		f, err := os.Create(*template)
		if err != nil {
			return err
		}
		if err := rep.writeLabelTemplate(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "quality: wrote %s for %s\n", *template, plural(len(rep.Unlabelled), "unlabelled finding"))
	}
	if *asJSON {
		err = rep.writeJSON(stdout)
	} else {
		fmt.Fprintf(stdout, "# bench/quality: %s, load average %s before, %s after\n\n", plural(len(cases), "case"), load, machine.LoadAvg())
		err = rep.writeText(stdout)
	}
	if err != nil {
		return err
	}
	if rep.Errors > 0 {
		return fmt.Errorf("the review of %s did not run", plural(rep.Errors, "case"))
	}
	return nil
}

// runReviewCase is the child a run starts for each case: it reviews and
// prints the Outcome as JSON.
func runReviewCase(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("review-case", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", "", "the case's repository")
	name := fs.String("name", "repo", "the repository's name")
	base := fs.String("base", "", "base commit")
	head := fs.String("head", "", "head commit")
	timeout := fs.Duration("timeout", pipeline.DefaultTimeout, "time limit of each specialist")
	modCache := fs.String("modcache", "", "fetch Go modules through --go-proxy into this module cache (default: offline, the user's module cache)")
	goProxy := fs.String("go-proxy", goanalysis.DefaultGoProxy, "with --modcache: the module proxies to fetch through")
	goPrivate := fs.String("go-private", "", "with --modcache: private module patterns")
	var lf llmFlags
	lf.add(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := lf.check(); err != nil {
		return err
	}
	if *repo == "" || *base == "" || *head == "" {
		return usageError{errors.New("review-case: --repo, --base and --head are required")}
	}
	var goCfg goanalysis.Config
	if *modCache != "" {
		goCfg = goanalysis.Config{GoProxy: *goProxy, GoPrivate: *goPrivate, ModCache: *modCache}
	}
	var wiring *llm.Wiring
	if lf.baseURL != "" {
		log := slog.New(slog.NewTextHandler(stderr, nil))
		wiring = &llm.Wiring{
			Config:  lf.config(os.Getenv(lf.keyEnv)),
			Mode:    llm.ModeAlso,
			Options: []llm.Option{llm.WithLogger(log), llm.WithServers(llm.NewServers())},
		}
	}
	o, err := reviewCase(ctx, *repo, *name, *base, *head, *timeout, goCfg, wiring)
	if err != nil {
		return err
	}
	return writeIndented(stdout, o)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
