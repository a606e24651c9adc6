package llm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// noteSink collects a specialist's notes.
type noteSink struct {
	mu    sync.Mutex
	notes []string
}

func (n *noteSink) add(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes = append(n.notes, s)
}

func (n *noteSink) list() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.notes)
}

// stubSpecialist returns fixed findings or an error.
type stubSpecialist struct {
	name     string
	findings []specialist.Finding
	err      error
	panics   bool
	// blocks until the context is done.
	blocks bool
}

func (s stubSpecialist) Name() string { return s.name }

func (s stubSpecialist) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	if s.panics {
		panic("boom")
	}
	if s.blocks {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.findings, s.err
}

// TestAlso: the combinator fails only when both engines fail,
// and notes the failure of one.
func TestAlso(t *testing.T) {
	t.Parallel()
	fb := specialist.Finding{Rule: "builtin:x", Headline: "b"}
	fl := specialist.Finding{Rule: "llm:security", Headline: "l"}
	errB, errL := fmt.Errorf("loader broke"), fmt.Errorf("HTTP 500")
	for _, tc := range []struct {
		name      string
		b, l      stubSpecialist
		wantRules []string
		wantErr   string
		wantNote  string
	}{
		{"both succeed", stubSpecialist{findings: []specialist.Finding{fb}}, stubSpecialist{findings: []specialist.Finding{fl}}, []string{"builtin:x", "llm:security"}, "", ""},
		{"LLM fails", stubSpecialist{findings: []specialist.Finding{fb}}, stubSpecialist{err: errL}, []string{"builtin:x"}, "", "the LLM engine failed (HTTP 500)"},
		{"built-in fails", stubSpecialist{err: errB}, stubSpecialist{findings: []specialist.Finding{fl}}, []string{"llm:security"}, "", "the built-in engine failed (loader broke)"},
		{"built-in panics", stubSpecialist{panics: true}, stubSpecialist{findings: []specialist.Finding{fl}}, []string{"llm:security"}, "", "the built-in engine failed (panic: boom)"},
		{"both fail", stubSpecialist{err: errB}, stubSpecialist{err: errL}, nil, "built-in engine: loader broke; LLM engine: HTTP 500", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.b.name, tc.l.name = "security", "security"
			var notes noteSink
			a := &Also{Builtin: tc.b, LLM: tc.l}
			fs, err := a.Review(specialist.WithNotes(context.Background(), notes.add), &change.Change{})
			var rules []string
			for _, f := range fs {
				rules = append(rules, f.Rule)
			}
			if !slices.Equal(rules, tc.wantRules) {
				t.Errorf("rules %v, want %v", rules, tc.wantRules)
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
				t.Errorf("err %v, want %q", err, tc.wantErr)
			}
			ns := notes.list()
			if tc.wantNote == "" && len(ns) > 0 || tc.wantNote != "" && (len(ns) != 1 || !strings.Contains(ns[0], tc.wantNote)) {
				t.Errorf("notes %q, want %q", ns, tc.wantNote)
			}
		})
	}
}

// TestAlsoDeadline: an LLM engine that runs out of time does not
// take the built-in engine's findings with it: the combinator returns
// before the pipeline's time limit for the specialist.
func TestAlsoDeadline(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var notes noteSink
	a := &Also{
		Builtin: stubSpecialist{name: "logic", findings: []specialist.Finding{{Rule: "go-vet:x"}}},
		LLM:     stubSpecialist{name: "logic", blocks: true},
	}
	fs, err := a.Review(specialist.WithNotes(ctx, notes.add), &change.Change{})
	if ctx.Err() != nil {
		t.Fatalf("returned after the specialist's deadline")
	}
	if err != nil || len(fs) != 1 {
		t.Fatalf("findings %v, err %v; want the built-in finding", fs, err)
	}
	if ns := notes.list(); len(ns) != 1 || !strings.Contains(ns[0], "the LLM engine failed (timed out at the specialist's time limit") {
		t.Errorf("notes %q", ns)
	}
}
