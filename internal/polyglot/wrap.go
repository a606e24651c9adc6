package polyglot

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// Wrap returns s reviewing, beside what it does itself, the files of the
// other languages with the analyzers' rules of its kind: the analyzers run
// while s analyses the Go code, and their findings join its own.
func Wrap(s specialist.Specialist, e *Engine) specialist.Specialist {
	if e == nil {
		return s
	}
	return wrapped{s, e}
}

type wrapped struct {
	specialist.Specialist
	e *Engine
}

func (w wrapped) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	type result struct {
		fs  []specialist.Finding
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("analyzers of other languages: panic: %v\n%s", p, debug.Stack())}
			}
		}()
		fs, err := w.e.Findings(ctx, c, w.Name())
		done <- result{fs, err}
	}()
	fs, err := w.Specialist.Review(ctx, c)
	other := <-done
	if err != nil {
		return nil, err
	}
	if other.err != nil {
		return nil, other.err
	}
	return append(fs, other.fs...), nil
}
