package specialist

import (
	"context"
	"fmt"
)

// noteKey carries a specialist's note sink in its context.
type noteKey struct{}

// WithNotes returns a context whose specialist notes go to add. The
// pipeline gives each specialist its own, so a note is told apart by the
// specialist that made it; add may be called from any goroutine.
func WithNotes(ctx context.Context, add func(string)) context.Context {
	return context.WithValue(ctx, noteKey{}, add)
}

// Note tells the reader of the review something about how the specialist
// ran that is not a finding: that one of its engines failed and the
// others' findings stand alone, say. The pipeline puts notes in the
// review's summary. Without a sink (a specialist run outside the pipeline)
// the note is dropped.
func Note(ctx context.Context, format string, args ...any) {
	if add, ok := ctx.Value(noteKey{}).(func(string)); ok {
		add(fmt.Sprintf(format, args...))
	}
}
