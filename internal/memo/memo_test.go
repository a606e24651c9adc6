package memo_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quorum-review/quorum/internal/memo"
)

func TestConcurrentCallersShareOneComputation(t *testing.T) {
	var m memo.Memo[int]
	var runs atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Go(func() {
			v, err := m.Do(context.Background(), "k", func() (int, error) {
				runs.Add(1)
				<-release
				return 42, nil
			})
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	close(release)
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Errorf("computed %d times, want once", n)
	}
	for _, v := range got {
		if v != 42 {
			t.Fatalf("values %v, want all 42", got)
		}
	}
}

func TestKeepsTheLastKeysAndForgetsFailures(t *testing.T) {
	m := memo.Memo[string]{Keep: 2}
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		if _, err := m.Do(ctx, k, func() (string, error) { return k, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.Keys(); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("kept %v, want [b c]", got)
	}
	boom := errors.New("boom")
	if _, err := m.Do(ctx, "d", func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if got := m.Keys(); slices.Contains(got, "d") {
		t.Errorf("a failure is kept: %v", got)
	}
	v, err := m.Do(ctx, "d", func() (string, error) { return "again", nil })
	if err != nil || v != "again" {
		t.Errorf("after a failure got %q, %v; want a new computation", v, err)
	}
}

func TestAWaiterHonoursItsContext(t *testing.T) {
	var m memo.Memo[int]
	started, release := make(chan struct{}), make(chan struct{})
	go m.Do(context.Background(), "k", func() (int, error) { close(started); <-release; return 1, nil })
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Do(ctx, "k", func() (int, error) { return 2, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	close(release)
}
