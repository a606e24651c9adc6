package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// wrkResult is what one wrk run reports.
type wrkResult struct {
	rps      float64
	p50, p99 time.Duration
	requests int
	sockErrs string
}

var (
	wrkRPS      = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkReqs     = regexp.MustCompile(`(\d+) requests in`)
	wrkPct      = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSockErrs = regexp.MustCompile(`Socket errors:.*`)
)

// wrkCommand is the wrk invocation for a target, as docs/performance.md
// shows it.
func wrkCommand(c config, t target) []string {
	args := []string{"wrk", "-t2", fmt.Sprintf("-c%d", c.conns), fmt.Sprintf("-d%ds", int(c.duration.Seconds())), "--timeout", "30s", "--latency"}
	for k, vs := range t.header {
		for _, v := range vs {
			args = append(args, "-H", k+": "+v)
		}
	}
	return append(args, t.url)
}

func runWrk(ctx context.Context, c config, t target) (wrkResult, error) {
	if err := loopbackOnly(t.url); err != nil {
		return wrkResult{}, err
	}
	args := wrkCommand(c, t)
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %w: %s", err, out)
	}
	s := string(out)
	if m := wrkNon2xx.FindStringSubmatch(s); m != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %s responses were not 2xx", t.url, m[1])
	}
	var r wrkResult
	// Timeouts (over 30 s) and connection errors are reported, not fatal:
	// they are part of what the server did under load.
	r.sockErrs = wrkSockErrs.FindString(s)
	m := wrkRPS.FindStringSubmatch(s)
	if m == nil {
		return wrkResult{}, fmt.Errorf("wrk: no Requests/sec in output:\n%s", s)
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	if m := wrkReqs.FindStringSubmatch(s); m != nil {
		r.requests, _ = strconv.Atoi(m[1])
	}
	for _, m := range wrkPct.FindAllStringSubmatch(s, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[3]]
		d := time.Duration(v * float64(unit))
		if m[1] == "50" {
			r.p50 = d
		} else {
			r.p99 = d
		}
	}
	return r, nil
}

// wrkRuns drives each (quorum, baseline) pair with wrk, interleaved over
// c.rounds, and prints a table: mean requests/s and the median over rounds
// of wrk's p50 and p99.
func wrkRuns(ctx context.Context, c config, backend string, q1, b1 target, e1 string, q2, b2 target, e2 string) error {
	if _, err := exec.LookPath("wrk"); err != nil {
		return fmt.Errorf("--wrk: wrk is not on PATH (apt-get install -y wrk): %w", err)
	}
	type agg struct{ rps, p50, p99 []float64 }
	pairs := []struct {
		endpoint string
		q, b     target
	}{{e1, q1, b1}, {e2, q2, b2}}
	res := make([][2]agg, len(pairs))
	var sockErrs []string
	for r := range c.rounds {
		for i, p := range pairs {
			order := []int{1, 0}
			if r%2 == 1 {
				order = []int{0, 1}
			}
			for _, k := range order {
				t := []target{p.q, p.b}[k]
				w, err := runWrk(ctx, c, t)
				if err != nil {
					return err
				}
				logf("%s: wrk round %d %-40s %-18s %8.0f req/s p50 %-9s p99 %s %s", backend, r+1, p.endpoint, t.name, w.rps, fmtDur(w.p50), fmtDur(w.p99), w.sockErrs)
				if w.sockErrs != "" {
					sockErrs = append(sockErrs, fmt.Sprintf("%s, %s, round %d: %s", t.name, p.endpoint, r+1, w.sockErrs))
				}
				a := &res[i][k]
				a.rps = append(a.rps, w.rps)
				a.p50 = append(a.p50, float64(w.p50))
				a.p99 = append(a.p99, float64(w.p99))
			}
		}
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	median := func(v []float64) time.Duration {
		s := slices.Clone(v)
		slices.Sort(s)
		return time.Duration(s[len(s)/2])
	}
	fmt.Printf("### %s — wrk cross-check, %d connections, 2 threads, %d × %s per target\n\n", backend, c.conns, c.rounds, c.duration)
	fmt.Println("| endpoint | server | requests/s (mean) | p50 (median of runs) | p99 (median of runs) | ratio (req/s) to baseline |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for i, p := range pairs {
		q, b := res[i][0], res[i][1]
		fmt.Printf("| %s | net/http baseline | %.0f | %s | %s | 1 |\n", p.endpoint, mean(b.rps), fmtDur(median(b.p50)), fmtDur(median(b.p99)))
		fmt.Printf("| %s | quorum (%s) | %.0f | %s | %s | **%.2f** |\n", p.endpoint, backend, mean(q.rps), fmtDur(median(q.p50)), fmtDur(median(q.p99)), mean(q.rps)/mean(b.rps))
	}
	cmd := wrkCommand(c, q2)
	for i, a := range cmd {
		switch {
		case strings.HasPrefix(a, "Authorization: "):
			cmd[i] = `"Authorization: Bearer $TOKEN"`
		case strings.HasPrefix(a, "http://"):
			cmd[i] = "'" + a + "'"
		}
	}
	if len(sockErrs) > 0 {
		fmt.Printf("\nwrk socket errors: %s.\n", strings.Join(sockErrs, "; "))
	}
	fmt.Printf("\nwrk invocation (per target): `%s`\n\n", strings.Join(cmd, " "))
	return nil
}
