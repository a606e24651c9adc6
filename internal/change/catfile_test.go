package change

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
)

// Reads share one git process, stay in step after every kind of answer,
// and are safe from several goroutines.
func TestReadsShareOneGit(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	for i := range 30 {
		r.write(fmt.Sprintf("f%02d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	r.write("dir/inner.txt", "inner\n")
	r.write("big.txt", string(make([]byte, 200<<10)))
	head := r.commit("files")
	l := &Local{Dir: r.dir, MaxFileSize: 100 << 10}
	ctx := context.Background()

	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := l.ReadFileAt(ctx, head, fmt.Sprintf("f%02d.txt", i))
			if err != nil || string(got) != fmt.Sprintf("file %d\n", i) {
				errs <- fmt.Errorf("f%02d.txt = %q, %v", i, got, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Answers that are errors leave the process in step.
	if _, err := l.ReadFileAt(ctx, head, "nope.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := l.ReadFileAt(ctx, head, "dir"); err == nil {
		t.Errorf("a directory read as a file")
	}
	if got, err := l.ReadFileAt(ctx, head, "f07.txt"); err != nil || string(got) != "file 7\n" {
		t.Errorf("after error answers: %q, %v", got, err)
	}
	if l.batch.starts != 1 {
		t.Errorf("%d git processes started, want 1 for all reads", l.batch.starts)
	}

	// Too large: refused; skipping 200 KiB is not worth it, so the process
	// is replaced, and the next read still works.
	if _, err := l.ReadFileAt(ctx, head, "big.txt"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big file: %v, want ErrTooLarge", err)
	}
	if got, err := l.ReadFileAt(ctx, head, "dir/inner.txt"); err != nil || string(got) != "inner\n" {
		t.Errorf("after a too-large file: %q, %v", got, err)
	}
	if l.batch.starts != 2 {
		t.Errorf("%d git processes started, want 2", l.batch.starts)
	}

	// A cancelled read fails, and does not break the next one.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.ReadFileAt(cancelled, head, "f01.txt"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: %v", err)
	}
	if got, err := l.ReadFileAt(ctx, head, "f01.txt"); err != nil || string(got) != "file 1\n" {
		t.Errorf("after a cancelled read: %q, %v", got, err)
	}
	l.batch.mu.Lock()
	l.batch.close()
	l.batch.mu.Unlock()
}
