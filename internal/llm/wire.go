package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// Modes: what the LLM engine does to a specialist it serves.
const (
	// ModeAlso runs the LLM engine beside the built-in one, as one
	// specialist (see Also).
	ModeAlso = "also"
	// ModeInstead replaces the built-in engine with the LLM engine.
	ModeInstead = "instead"
)

// Wiring says which specialists the LLM engine serves and how, for every
// review a process runs.
type Wiring struct {
	Config Config
	// Specialists are the specialists the engine serves; nil means every
	// enabled one.
	Specialists []string
	// Mode is ModeAlso (the default) or ModeInstead.
	Mode string
	// Options are given to every engine (a logger, an HTTP client).
	Options []Option
	// MaxTokensPerReview bounds the tokens, prompt and answer, of all the
	// requests of one review (see Budget); 0 bounds nothing.
	MaxTokensPerReview int
}

// Serves reports whether the engine serves the specialist name.
func (w Wiring) Serves(name string) bool {
	return w.Specialists == nil || slices.Contains(w.Specialists, name)
}

// Wire gives the LLM engine to the specialists it serves: beside their
// built-in engine (ModeAlso) or in its place (ModeInstead). An enabled
// specialist without a built-in engine (missing) is served by the LLM
// engine alone. The repository's per-path instructions go into every
// prompt. It returns the specialists and those still missing. Call it once
// per review: its engines share one token budget, and one Board of the
// review's built-in engines' findings, to which every built-in engine
// posts (those the LLM engine does not serve too).
func (w Wiring) Wire(specs []specialist.Specialist, missing []string, instructions []Instruction) ([]specialist.Specialist, []string, error) {
	budget := NewBudget(w.MaxTokensPerReview)
	// The built-in engines that will run beside an LLM engine: those of
	// the specialists it serves in ModeAlso, and those it does not serve.
	// A specialist the LLM engine serves alone has none to wait for.
	var builtins []string
	llmUsed := slices.ContainsFunc(missing, w.Serves)
	for _, sp := range specs {
		served := w.Serves(sp.Name())
		llmUsed = llmUsed || served
		if !served || w.Mode != ModeInstead {
			builtins = append(builtins, sp.Name())
		}
	}
	var board *Board
	if llmUsed && len(builtins) > 0 {
		board = NewBoard(builtins...)
	}
	engine := func(name string) (*Engine, error) {
		opts := append([]Option{WithInstructions(instructions), WithBudget(budget), WithBoard(board)}, w.Options...)
		e, err := New(w.Config, name, opts...)
		if err != nil {
			return nil, fmt.Errorf("LLM engine for %s: %w", name, err)
		}
		return e, nil
	}
	out := make([]specialist.Specialist, 0, len(specs)+len(missing))
	for _, sp := range specs {
		if !w.Serves(sp.Name()) {
			if board != nil {
				sp = &posting{Specialist: sp, board: board}
			}
			out = append(out, sp)
			continue
		}
		e, err := engine(sp.Name())
		if err != nil {
			return nil, nil, err
		}
		if w.Mode == ModeInstead {
			out = append(out, e)
		} else {
			out = append(out, &Also{Builtin: sp, LLM: e, board: board})
		}
	}
	var still []string
	for _, n := range missing {
		if !w.Serves(n) {
			still = append(still, n)
			continue
		}
		e, err := engine(n)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, e)
	}
	return out, still, nil
}

// Also is one specialist with two engines, the built-in one and the LLM
// one (ModeAlso). The pipeline sees one specialist: it is counted once for
// the quorum, and its findings are both engines', under its name
// (synthesis merges a problem both found into one finding).
//
// It fails only when both engines fail. When one fails, the other's
// findings are its result, and the failure is a note (specialist.Note)
// for the review's summary: an LLM API that is down or answers badly must
// not cost a review the built-in engine's findings, nor fail the quorum,
// but the reader must know that half of the specialist did not look.
//
// Both engines run at once, and both stop a little before the pipeline's
// time limit for the specialist, so that one engine's findings are not lost
// because the other ran out of time. When the built-in engine is done, its
// findings go to the review's Board (from Wire), for the LLM engines.
type Also struct {
	Builtin, LLM specialist.Specialist
	board        *Board
}

// Name is the built-in engine's name.
func (a *Also) Name() string { return a.Builtin.Name() }

// Review runs both engines.
func (a *Also) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	rctx := ctx
	if dl, ok := ctx.Deadline(); ok {
		margin := min(time.Until(dl)/10, 2*time.Second)
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(ctx, dl.Add(-margin))
		defer cancel()
	}
	type half struct {
		findings []specialist.Finding
		err      error
	}
	var b, l half
	run := func(s specialist.Specialist, h *half) {
		defer func() {
			if p := recover(); p != nil {
				h.findings, h.err = nil, fmt.Errorf("panic: %v", p)
			}
		}()
		h.findings, h.err = s.Review(rctx, c)
		if h.err != nil && errors.Is(h.err, context.DeadlineExceeded) && rctx.Err() != nil {
			h.err = fmt.Errorf("timed out at the specialist's time limit: %w", h.err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		run(a.Builtin, &b)
		a.board.Post(a.Name(), b.findings, b.err)
	})
	wg.Go(func() { run(a.LLM, &l) })
	wg.Wait()
	switch {
	case b.err != nil && l.err != nil:
		return nil, fmt.Errorf("built-in engine: %v; LLM engine: %v", firstLine(b.err), firstLine(l.err))
	case l.err != nil:
		// The engine's own Failure is already one line for the reader.
		var f *Failure
		if errors.As(l.err, &f) {
			specialist.Note(ctx, "%s; only the built-in engine's findings are reported.", f.Summary)
		} else {
			specialist.Note(ctx, "the LLM engine failed (%s); only the built-in engine's findings are reported.", firstLine(l.err))
		}
		return b.findings, nil
	case b.err != nil:
		specialist.Note(ctx, "the built-in engine failed (%s); only the LLM engine's findings are reported.", firstLine(b.err))
		return l.findings, nil
	}
	return append(slices.Clip(b.findings), l.findings...), nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
