// Command membudget prints, for each Go case of a bench/quality results
// file whose prepared repository is in --work, the Go source the memory
// budget's estimate counts (internal/membudget) beside the case's measured
// peak RSS and time, as tab-separated columns: case, source bytes,
// packages, peak RSS bytes, seconds, estimate bytes. With --repo, --base
// and --head it prints the estimate of that one change.
//
//	go run ./bench/membudget --work /tmp/qwork /tmp/qwork/baseline-main.json
//	go run ./bench/membudget --repo /tmp/mem-caddy --base 0bbda5c72^ --head 0bbda5c72
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/membudget"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "membudget:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("membudget", flag.ContinueOnError)
	work := fs.String("work", "/tmp/qwork", "bench/quality's work directory (a case's repository is CASE/repo.git)")
	repo := fs.String("repo", "", "estimate one change of this repository")
	base := fs.String("base", "", "base revision, with --repo")
	head := fs.String("head", "", "head revision, with --repo")
	serve := fs.String("serve", "", "quorum binary whose serve reviews the --case changes at once")
	memory := fs.String("memory", "", "with --serve: its --review-memory")
	workers := fs.Int("workers", 2, "with --serve: its --review-workers")
	var cases multi
	fs.Var(&cases, "case", "with --serve: a case of --work to review (repeat)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *serve != "" {
		return serveCases(ctx, *serve, *memory, *workers, *work, cases)
	}
	if *repo != "" {
		e, err := estimate(ctx, *repo, *base, *head)
		if err != nil {
			return err
		}
		fmt.Printf("source %d bytes in %d packages, estimate %d bytes (%s)\n", e.SourceBytes, e.Packages, e.Bytes, membudget.FormatSize(e.Bytes))
		return nil
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("want one bench/quality results file (JSON)")
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	var results struct {
		Cases []struct {
			ID      string  `json:"id"`
			Base    string  `json:"base"`
			Head    string  `json:"head"`
			PeakRSS int64   `json:"peak_rss_bytes"`
			Seconds float64 `json:"seconds"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &results); err != nil {
		return err
	}
	for _, c := range results.Cases {
		dir := filepath.Join(*work, c.ID, "repo.git")
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		e, err := estimate(ctx, dir, c.Base, c.Head)
		if err != nil {
			return fmt.Errorf("%s: %w", c.ID, err)
		}
		if e.SourceBytes == 0 {
			continue // no Go
		}
		fmt.Printf("%s\t%d\t%d\t%d\t%.1f\t%d\n", c.ID, e.SourceBytes, e.Packages, c.PeakRSS, c.Seconds, e.Bytes)
	}
	return nil
}

func estimate(ctx context.Context, repo, base, head string) (membudget.Estimate, error) {
	ch, err := change.NewLocal(repo).Change(ctx, change.Ref{Base: base, Head: head})
	if err != nil {
		return membudget.Estimate{}, err
	}
	return membudget.EstimateOf(ctx, ch)
}
