package polyglot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// maxIsolationRuns bounds the runs that look for the files an analyzer
// failed on: enough to find one file among 256, or a few among dozens.
const maxIsolationRuns = 16

// errDidNotFinish is an analyzer's run that reached its time limit.
var errDidNotFinish = errors.New("did not finish")

// analyseIsolated runs t on contents as analyse does. When the run fails
// (a crash, output over the limit, a report that is not its JSON, a file
// it cannot be given), it finds the files the failure is of by running t
// again on halves of them, at most maxIsolationRuns times and within twice
// its time limit, so that one
// hostile file does not hide the findings of the others: failed says,
// of each file no run could analyse, why. A run that timed out is not
// repeated, its halves would take the time again: its files fail. err is
// the first failure, for the engine's report of what each analyzer did.
func (e *Engine) analyseIsolated(ctx context.Context, t *Tool, dir string, contents map[string][]byte, extra []string) (rep report, failed map[string]string, err error) {
	fail := func(paths []string, rerr error) {
		if failed == nil {
			failed = map[string]string{}
		}
		why := fmt.Sprintf("%s failed: %v", t.Name, rerr)
		if len(paths) > 1 {
			why = fmt.Sprintf("%s failed on it or on one of the %d files run with it: %v", t.Name, len(paths)-1, rerr)
		}
		for _, p := range paths {
			failed[p] = why
		}
	}
	runs := 0
	// The runs that look for the failing files share a budget of twice
	// the time limit of one: a file that makes the analyzer fail slowly
	// costs the review that, not maxIsolationRuns times it.
	deadline := time.Now().Add(2 * e.timeout)
	// try runs t on paths, and on a failure that another run may not
	// repeat, on each half of them; parent is the failure of the run
	// paths were part of, theirs when no run is left.
	var try func(paths []string, parent error)
	try = func(paths []string, parent error) {
		if ctx.Err() != nil {
			fail(paths, ctx.Err())
			return
		}
		if runs > maxIsolationRuns || runs > 0 && time.Now().After(deadline) {
			fail(paths, parent)
			return
		}
		subset := make(map[string][]byte, len(paths))
		for _, p := range paths {
			subset[p] = contents[p]
		}
		r, rerr := e.analyse(ctx, t, filepath.Join(dir, strconv.Itoa(runs)), subset, extra)
		runs++
		if rerr == nil {
			rep.diags = append(rep.diags, r.diags...)
			rep.unparsed = append(rep.unparsed, r.unparsed...)
			return
		}
		if err == nil {
			err = rerr
		}
		if len(paths) == 1 || errors.Is(rerr, errDidNotFinish) {
			fail(paths, rerr)
			return
		}
		half := len(paths) / 2
		try(paths[:half], rerr)
		try(paths[half:], rerr)
	}
	try(slices.Sorted(maps.Keys(contents)), nil)
	return rep, failed, err
}
