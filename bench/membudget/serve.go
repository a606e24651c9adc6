package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// serveCases queues a review of each case, runs serve until they have all
// ended, and prints what it took: wall time, the CPU time of serve and
// the children it waited for, and serve's peak RSS.
func serveCases(ctx context.Context, bin, memory string, workers int, work string, cases []string) error {
	dir, err := os.MkdirTemp("", "membudget-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	a, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, "bench", "Organization")
	if err != nil {
		return err
	}
	repo, err := account.EnsureRepository(ctx, db.Writer(), a.ID, "bench", "cases")
	if err != nil {
		return err
	}
	for i, id := range cases {
		var c struct{ Base, Head string }
		b, err := os.ReadFile(filepath.Join(work, id, "case.json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		args := pipeline.ReviewArgs{AccountID: a.ID, RepositoryID: repo.ID, Owner: "bench", Repo: id, PR: i + 1,
			Head: c.Head, Base: c.Base, Source: "local", Location: filepath.Join(work, id, "repo.git")}
		if err := db.InTx(ctx, func(tx store.Tx) error { return pipeline.Enqueue(ctx, tx, args, time.Now()) }); err != nil {
			return err
		}
	}

	var log bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--go-proxy", "off",
		"--metrics-addr", "off", "--review-workers", strconv.Itoa(workers), "--review-memory", memory)
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	var hwm int64
	for {
		time.Sleep(200 * time.Millisecond)
		if v := vmHWM(cmd.Process.Pid); v > hwm {
			hwm = v
		}
		var ended int
		err := db.Reader().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'review.run' AND state IN ('completed', 'cancelled', 'discarded')`).Scan(&ended)
		if err != nil {
			return err
		}
		if ended == len(cases) {
			break
		}
		if time.Since(start) > 20*time.Minute {
			return fmt.Errorf("the reviews did not end in 20 minutes; log:\n%s", log.String())
		}
	}
	took := time.Since(start)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var states []string
	rows, err := db.Reader().Query(ctx, `SELECT state FROM river_job WHERE kind = 'review.run' ORDER BY id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		states = append(states, s)
	}
	rows.Close()
	fmt.Printf("--review-memory %q --review-workers %d: %d reviews (%s) in %.1f s, serve's CPU %.1f s (with its children), peak RSS %d MB, %d waited for memory\n",
		memory, workers, len(cases), strings.Join(states, ", "), took.Seconds(), cpu.Seconds(), hwm/1e6,
		strings.Count(log.String(), `"msg":"review waiting for memory"`))
	return nil
}

// vmHWM is the process's peak resident set in bytes, 0 when unreadable.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
