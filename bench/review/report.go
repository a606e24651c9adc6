package main

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"
)

type reportInfo struct {
	commit             string
	loadStart, loadEnd string
	goFiles, goLines   int
	pkgs               int
	stats              diffStat
	baseSHA, headSHA   string
	planted            []plant
}

func report(w io.Writer, cfg config, info reportInfo, results []result) {
	fmt.Fprintf(w, "- machine: %d CPUs (runtime.NumCPU), %s %s/%s, commit %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, info.commit)
	fmt.Fprintf(w, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "- load average at the start: %s; at the end: %s (1, 5, 15 min)\n", info.loadStart, info.loadEnd)
	if cfg.repo != "" {
		fmt.Fprintf(w, "- repository %s: %d Go files, about %d lines\n", cfg.repo, info.goFiles, info.goLines)
	} else {
		fmt.Fprintf(w, "- repository (seed %d): %d Go files, %d lines, in %d packages of one module, standard library only\n", cfg.seed, info.goFiles, info.goLines, info.pkgs)
	}
	fmt.Fprintf(w, "- change %.12s..%.12s: %d files, +%d −%d (%d changed lines)\n", info.baseSHA, info.headSHA, info.stats.files, info.stats.added, info.stats.deleted, info.stats.added+info.stats.deleted)
	fmt.Fprintf(w, "- runs: %d, of which %d cold (empty XDG_CACHE_HOME, so an empty GOCACHE for quorum's go list), the rest warm\n\n", len(results), cfg.cold)

	var cold, warm []result
	for _, r := range results {
		if r.cold {
			cold = append(cold, r)
		} else {
			warm = append(warm, r)
		}
	}
	fmt.Fprintln(w, "| runs | n | wall p50 | wall p90 | wall max | CPU (user+sys, tree) p50 | of which quorum itself p50 | peak RSS, wait4 (largest process of the tree) max | quorum's own VmHWM max | tree RSS (sum, sampled) max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, g := range []struct {
		name string
		rs   []result
	}{{"cold", cold}, {"warm", warm}, {"all", results}} {
		if len(g.rs) == 0 {
			continue
		}
		walls := collect(g.rs, func(r result) time.Duration { return r.wall })
		cpus := collect(g.rs, func(r result) time.Duration { return r.user + r.sys })
		own := collect(g.rs, func(r result) time.Duration { return r.selfCPU })
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", g.name, len(g.rs),
			dur(pct(walls, 50)), dur(pct(walls, 90)), dur(slices.Max(walls)), dur(pct(cpus, 50)), dur(pct(own, 50)),
			mb(maxOf(g.rs, func(r result) int64 { return r.maxRSS })),
			mb(maxOf(g.rs, func(r result) int64 { return r.selfHWM })),
			mb(maxOf(g.rs, func(r result) int64 { return r.treePeak })))
	}

	// Specialists.
	names := map[string]bool{}
	for _, r := range results {
		for n := range r.bySpec {
			names[n] = true
		}
	}
	specs := slices.Sorted(maps.Keys(names))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each specialist's duration as quorum prints it (they run in parallel and the three Go specialists share one package load, so the shares overlap and add up to more than 100 %): p50 over the runs, and its share of the run's wall time.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| specialist | cold p50 | cold share | warm p50 | warm share | warm max | findings (last run) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	last := results[len(results)-1]
	for _, n := range specs {
		row := []string{n}
		for _, rs := range [][]result{cold, warm} {
			if len(rs) == 0 {
				row = append(row, "–", "–")
				continue
			}
			ds := collect(rs, func(r result) time.Duration { return r.bySpec[n] })
			shares := collect(rs, func(r result) time.Duration {
				return time.Duration(float64(r.bySpec[n]) / float64(r.wall) * 1000)
			})
			row = append(row, dur(pct(ds, 50)), fmt.Sprintf("%.0f %%", float64(pct(shares, 50))/10))
		}
		if len(warm) > 0 {
			row = append(row, dur(slices.Max(collect(warm, func(r result) time.Duration { return r.bySpec[n] }))))
		} else {
			row = append(row, "–")
		}
		row = append(row, fmt.Sprint(last.bySpecCount[n]))
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Findings in the last run: %d (exit status %d). Planted problems, found on a line of their file by the expected specialist:", last.findings, last.exit)
	for i, p := range info.planted {
		mark := "missed"
		if last.found[p.specialist+" "+p.path] {
			mark = "found"
		}
		sep := ","
		if i == len(info.planted)-1 {
			sep = "."
		}
		fmt.Fprintf(w, " %s (%s) %s%s", p.what, p.specialist, mark, sep)
	}
	var failed []string
	syntaxOnly := false
	for _, r := range results {
		failed = append(failed, r.failed...)
		syntaxOnly = syntaxOnly || r.syntaxOnly
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, " Specialist failures over all runs: %s.", strings.Join(failed, ", "))
	}
	if syntaxOnly {
		fmt.Fprint(w, " Some findings say the analysis fell back to syntax only.")
	} else {
		fmt.Fprint(w, " No finding says the analysis fell back to syntax only.")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Per run:")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| run | cache | wall | CPU user+sys | quorum's own CPU | wait4 maxrss | quorum VmHWM | tree RSS | %s |\n", strings.Join(specs, " | "))
	fmt.Fprintf(w, "|---:|---|---:|---:|---:|---:|---:|---:|%s\n", strings.Repeat("---:|", len(specs)))
	for i, r := range results {
		kind := "warm"
		if r.cold {
			kind = "cold"
		}
		var ds []string
		for _, n := range specs {
			ds = append(ds, dur(r.bySpec[n]))
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", i+1, kind, dur(r.wall), dur(r.user+r.sys), dur(r.selfCPU), mb(r.maxRSS), mb(r.selfHWM), mb(r.treePeak), strings.Join(ds, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "wait4 maxrss is the rusage the kernel returns when the quorum process is reaped: on Linux that is RUSAGE_BOTH of the child, the largest resident set of quorum or of any process below it that was reaped (go list, which the analysis runs), not a sum. quorum VmHWM is quorum's own peak from /proc/PID/status, sampled every 10 ms (growth in its last 10 ms is missed). Tree RSS is the highest sum of VmRSS over quorum and its descendants (go list and the compilers it runs, git) at one sample, every 100 ms (short-lived peaks are missed; a child forked but not yet exec'd is not counted, as it shares quorum's pages). CPU is user+sys from the same rusage: quorum and every descendant it reaped (git, go list and what go list runs); quorum's own CPU is from /proc/PID/stat, last sampled within 10 ms of its exit.")
}

func collect(rs []result, f func(result) time.Duration) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// pct is the nearest-rank percentile.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func maxOf(rs []result, f func(result) int64) int64 {
	var m int64
	for _, r := range rs {
		m = max(m, f(r))
	}
	return m
}

func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "–"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}

// reportPolyglot compares each run with its baseline (the same change
// without the analyzers of other languages, run just before it), and
// gives each analyzer's time and share of the run's wall time.
func reportPolyglot(w io.Writer, results, baselines []result) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "With and without the analyzers of other languages (each run is paired with a baseline run just before it: same change, same cache state, no analyzers found, so its Python, TypeScript, shell and Dockerfile are not analysed); the ratio is the p50 of the pairs' ratios.")
	fmt.Fprintln(w)
	pairTable(w, results, baselines)
	var warm []result
	for _, r := range results {
		if !r.cold {
			warm = append(warm, r)
		}
	}
	if len(warm) == 0 {
		warm = results
	}
	tools := map[string]bool{}
	for _, r := range results {
		for t := range r.byTool {
			tools[t] = true
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each analyzer's time on the change (its runs on the head's files and on the base's, as quorum review prints it; the analyzers run in parallel with each other and with the Go analysis), warm: p50, and its share of the run's wall time.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| analyzer | warm p50 | share of wall p50 | warm max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, t := range slices.Sorted(maps.Keys(tools)) {
		ds := collect(warm, func(r result) time.Duration { return r.byTool[t] })
		shares := collect(warm, func(r result) time.Duration { return time.Duration(float64(r.byTool[t]) / float64(r.wall) * 1000) })
		fmt.Fprintf(w, "| %s | %s | %.0f %% | %s |\n", t, dur(pct(ds, 50)), float64(pct(shares, 50))/10, dur(slices.Max(ds)))
	}
	for _, b := range baselines {
		if len(b.byTool) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "**The baseline found analyzers** (on PATH?): its figures include them, and the ratio means nothing.")
			break
		}
	}
}

// pairTable prints the wall times of paired runs, cold and warm, and the
// p50 and max of the pairs' ratios; then their CPU time and peak memory
// (wait4's maxrss), p50 and max of each side, and the p50 of the pairs'
// CPU ratios.
func pairTable(w io.Writer, results, baselines []result) {
	fmt.Fprintln(w, "| runs | pairs | wall p50 | baseline wall p50 | ratio p50 | ratio max | CPU p50 | baseline CPU p50 | CPU ratio p50 | peak RSS p50 / max | baseline peak RSS p50 / max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, cold := range []bool{true, false} {
		var rs, bs []result
		var ratios, cpuRatios []time.Duration // ×1000
		for i := range results {
			if results[i].cold != cold || i >= len(baselines) {
				continue
			}
			rs, bs = append(rs, results[i]), append(bs, baselines[i])
			ratios = append(ratios, time.Duration(float64(results[i].wall)/float64(baselines[i].wall)*1000))
			cpuRatios = append(cpuRatios, time.Duration(float64(results[i].user+results[i].sys)/float64(baselines[i].user+baselines[i].sys)*1000))
		}
		if len(rs) == 0 {
			continue
		}
		name := "warm"
		if cold {
			name = "cold"
		}
		walls := collect(rs, func(r result) time.Duration { return r.wall })
		bwalls := collect(bs, func(r result) time.Duration { return r.wall })
		cpu := func(r result) time.Duration { return r.user + r.sys }
		rss := func(rs []result) string {
			m := collect(rs, func(r result) time.Duration { return time.Duration(r.maxRSS) })
			return fmt.Sprintf("%.1f / %.1f MB", float64(pct(m, 50))/1e6, float64(slices.Max(m))/1e6)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %.2f× | %.2f× | %s | %s | %.2f× | %s | %s |\n", name, len(rs), dur(pct(walls, 50)), dur(pct(bwalls, 50)),
			float64(pct(ratios, 50))/1000, float64(slices.Max(ratios))/1000,
			dur(pct(collect(rs, cpu), 50)), dur(pct(collect(bs, cpu), 50)), float64(pct(cpuRatios, 50))/1000, rss(rs), rss(bs))
	}
}

// reportAgainst compares the runs with the paired runs of the binary
// built at rev.
func reportAgainst(w io.Writer, rev string, results, against []result) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Against %s (each run is paired with a run of quorum built at %s just after it: same change, same analyzers, same cache state); the ratio is the p50 of the pairs' ratios.\n", rev, rev)
	fmt.Fprintln(w)
	pairTable(w, results, against)
}
