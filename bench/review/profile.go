package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/builtin"
)

// profileInProcess reviews the change once more in this process, as
// quorum review does (the same specialists sharing one loader, the same
// cache directory), in phases: the Go packages' load (go list and type
// checking) alone, then the specialists with the load already done. It
// writes a CPU profile of each phase and a heap profile after each into
// dir, and times go list alone with the analysis' environment.
func profileInProcess(ctx context.Context, w io.Writer, dir, repoDir, base, head, cacheDir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := goanalysis.Config{}
	if cacheDir != "" {
		cfg.CacheDir = filepath.Join(cacheDir, "quorum", "go")
	}

	// go list alone, as go/packages runs it, on the head work tree.
	listArgs := []string{"list", "-e", "-json=Name,ImportPath,Error,Dir,GoFiles,CompiledGoFiles,IgnoredGoFiles,CgoFiles,EmbedFiles,Imports,ImportMap,TestGoFiles,XTestGoFiles,ForTest,DepsErrors,Module,Standard", "-compiled=true", "-test=true", "-export=false", "-deps=true", "-find=false", "-pgo=off", "--"}
	ch, err := change.NewLocal(repoDir).Change(ctx, change.Ref{Owner: "local", Repo: "repo", Base: base, Head: head})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, f := range ch.Files {
		if d := filepath.Dir(f.NewPath); strings.HasSuffix(f.NewPath, ".go") && !seen[d] {
			seen[d] = true
			listArgs = append(listArgs, "./"+d)
		}
	}
	list := exec.CommandContext(ctx, "go", listArgs...)
	list.Dir = repoDir
	list.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOWORK=off")
	if cfg.CacheDir != "" {
		list.Env = append(list.Env, "GOCACHE="+filepath.Join(cfg.CacheDir, "build"))
	}
	t := time.Now()
	out, err := list.Output()
	if err != nil {
		return fmt.Errorf("go list: %w", err)
	}
	listTime := time.Since(t)
	pkgs := strings.Count(string(out), "\"ImportPath\":")

	// Reading the head's Go files as the materializer does (one git
	// process per file), against one git cat-file --batch for all.
	tree, err := ch.ListTree(ctx, ch.HeadSHA)
	if err != nil {
		return err
	}
	var goPaths []string
	for _, p := range tree {
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "go.mod") {
			goPaths = append(goPaths, p)
		}
	}
	t = time.Now()
	for _, p := range goPaths {
		if _, err := ch.ReadFile(ctx, p); err != nil {
			return err
		}
	}
	readEach := time.Since(t)
	batch := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	batch.Dir = repoDir
	var in strings.Builder
	for _, p := range goPaths {
		in.WriteString(ch.HeadSHA + ":" + p + "\n")
	}
	batch.Stdin = strings.NewReader(in.String())
	t = time.Now()
	if _, err := batch.Output(); err != nil {
		return fmt.Errorf("git cat-file --batch: %w", err)
	}
	readBatch := time.Since(t)

	loader := goanalysis.NewLoader(cfg)
	specs, _, err := builtin.New([]string{specialist.Logic, specialist.Security, specialist.Performance, specialist.Tests}, loader, polyglot.New(ctx, polyglot.Config{Dir: os.Getenv("QUORUM_ANALYZERS_DIR")}))
	if err != nil {
		return err
	}

	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu1, err := os.Create(filepath.Join(dir, "load.cpu.pprof"))
	if err != nil {
		return err
	}
	pprof.StartCPUProfile(cpu1)
	t = time.Now()
	prog, err := loader.Load(ctx, ch)
	loadTime := time.Since(t)
	pprof.StopCPUProfile()
	cpu1.Close()
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	nPkgs := 0
	if prog != nil {
		for range prog.Packages {
			nPkgs++
		}
	}
	runtime.GC()
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	if f, err := os.Create(filepath.Join(dir, "load.heap.pprof")); err == nil {
		pprof.WriteHeapProfile(f)
		f.Close()
	}

	cpu2, err := os.Create(filepath.Join(dir, "analyze.cpu.pprof"))
	if err != nil {
		return err
	}
	var lines []string
	pprof.StartCPUProfile(cpu2)
	stopPeak := largestLive(filepath.Join(dir, "peak.heap.pprof"))
	t = time.Now()
	res := pipeline.Run(ctx, ch, specs, pipeline.Options{Progress: func(p pipeline.Progress) {
		if p.Stage != pipeline.StageStarted {
			lines = append(lines, fmt.Sprintf("%s %s", p.Specialist, p.Duration.Round(time.Millisecond)))
		}
	}})
	runTime := time.Since(t)
	peakLive, peakProfiled := stopPeak()
	pprof.StopCPUProfile()
	cpu2.Close()
	var ms2 runtime.MemStats
	runtime.ReadMemStats(&ms2)
	if f, err := os.Create(filepath.Join(dir, "analyze.heap.pprof")); err == nil {
		pprof.WriteHeapProfile(f) // in use: the loader keeps the program
		f.Close()
	}

	peakNote := " (its heap profile: peak.heap.pprof)"
	if !peakProfiled {
		peakNote = " (no collection after it: no profile of it, see analyze.heap.pprof)"
	}
	fmt.Fprintf(w, "\nIn-process phases (one warm run, profiles in %s):\n\n", dir)
	fmt.Fprintf(w, "| phase | wall | note |\n|---|---:|---|\n")
	fmt.Fprintf(w, "| read the head's %d Go files, one git cat-file process each (change.Local.ReadFileAt) | %s | |\n", len(goPaths), dur(readEach))
	fmt.Fprintf(w, "| read the same files with one git cat-file --batch | %s | |\n", dur(readBatch))
	fmt.Fprintf(w, "| go list alone (same flags as go/packages, head work tree) | %s | %d packages listed |\n", dur(listTime), pkgs)
	fmt.Fprintf(w, "| Loader.Load: copy the head tree, go list, parse, type-check | %s | %d root packages; live heap after the load %.0f MB (%.0f MB before) |\n", dur(loadTime), nPkgs, float64(ms1.HeapAlloc)/1e6, float64(ms0.HeapAlloc)/1e6)
	fmt.Fprintf(w, "| the specialists, load done (analyzers) | %s | %s; %d findings; heap in use at the end %.0f MB, Go heap peak (Sys) %.0f MB, largest live heap %.0f MB%s |\n", dur(runTime), strings.Join(lines, ", "), len(res.Review.Findings), float64(ms2.HeapAlloc)/1e6, float64(ms2.HeapSys)/1e6, float64(peakLive)/1e6, peakNote)
	return nil
}

// largestLive samples the live heap (what the last collection marked,
// runtime/metrics' /gc/heap/live:bytes) every 20 ms until stop is
// called, which returns the largest: the part of the peak memory that
// was in use, the rest being what the collector's pacing lets grow.
// It writes a heap profile of the largest to peakProfile, when a
// collection followed it, and stop says whether it did.
func largestLive(peakProfile string) (stop func() (uint64, bool)) {
	done := make(chan struct{})
	var largest uint64
	var profiled bool
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		// A heap profile shows the heap as of the collection before
		// the last: the one of the largest is written a cycle later.
		var profileAt uint64
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			live, cycle := sample[0].Value.Uint64(), sample[1].Value.Uint64()
			if live > largest {
				largest, profileAt, profiled = live, cycle+1, false
			}
			if profileAt != 0 && cycle >= profileAt {
				profileAt = 0
				if f, err := os.Create(peakProfile); err == nil {
					profiled = pprof.WriteHeapProfile(f) == nil
					f.Close()
				}
			}
		}
	}()
	return func() (uint64, bool) {
		close(done)
		<-finished
		return largest, profiled
	}
}
