package llm

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// Board is what the built-in engines of one review found, for the LLM
// engines of the same review. Each built-in engine posts its findings (or
// that it failed) when it is done; an LLM engine waits, for a while, until
// all have, tells the model what is already reported on the files it
// asks about, and drops the model's findings that repeat one of them. It
// is one per review, shared by every engine Wire makes, as Budget is. A
// nil *Board knows of nothing and makes no one wait.
type Board struct {
	mu sync.Mutex
	// waiting are the specialists whose built-in engine has not reported.
	waiting  map[string]bool
	findings []specialist.Finding
	// done is closed when waiting is empty.
	done chan struct{}
}

// NewBoard returns a board that is complete once the built-in engines of
// the specialists named have all reported. Name only specialists whose
// built-in engine posts to it (see Also), or the LLM engines wait for one
// that never reports until their wait runs out.
func NewBoard(builtins ...string) *Board {
	b := &Board{waiting: map[string]bool{}, done: make(chan struct{})}
	for _, n := range builtins {
		b.waiting[n] = true
	}
	if len(b.waiting) == 0 {
		close(b.done)
	}
	return b
}

// Post records what the built-in engine of the specialist name found; a
// failed engine (err) found nothing. Only an engine's first report counts,
// and only an engine the board was made to wait for.
func (b *Board) Post(name string, findings []specialist.Finding, err error) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.waiting[name] {
		return
	}
	delete(b.waiting, name)
	if err == nil {
		b.findings = append(b.findings, findings...)
	}
	if len(b.waiting) == 0 {
		close(b.done)
	}
}

// wait returns when every built-in engine has reported, or after bound,
// or when ctx is done, whichever comes first. It returns the specialists
// whose built-in engine had not reported, sorted; none when the board is
// complete.
func (b *Board) wait(ctx context.Context, bound time.Duration) []string {
	if b == nil {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	select {
	case <-b.done:
	case <-wctx.Done():
	}
	return b.unheard()
}

// unheard lists the specialists whose built-in engine has not reported.
func (b *Board) unheard() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for n := range b.waiting {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// on returns the findings reported so far on the files at paths, in path
// and line order, each once.
func (b *Board) on(paths []string) []specialist.Finding {
	return b.matching(func(f specialist.Finding) bool { return slices.Contains(paths, f.Path) })
}

// all returns every finding reported so far, as on does.
func (b *Board) all() []specialist.Finding {
	return b.matching(func(specialist.Finding) bool { return true })
}

func (b *Board) matching(keep func(specialist.Finding) bool) []specialist.Finding {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	var out []specialist.Finding
	for _, f := range b.findings {
		if keep(f) {
			out = append(out, f)
		}
	}
	b.mu.Unlock()
	slices.SortFunc(out, listed)
	// Two specialists may run one analyzer: its finding is listed once.
	return slices.CompactFunc(out, func(x, y specialist.Finding) bool { return listed(x, y) == 0 })
}

// listed orders findings as the board lists them; 0 is the same finding
// as listed (place, rule, headline).
func listed(x, y specialist.Finding) int {
	return cmp.Or(cmp.Compare(x.Path, y.Path), cmp.Compare(x.Line, y.Line), cmp.Compare(x.EndLine, y.EndLine),
		cmp.Compare(x.Rule, y.Rule), cmp.Compare(x.Headline, y.Headline))
}

// boardWaitShare: an LLM engine waits for the built-in engines for at most
// this share of its remaining time (of one request's timeout when the
// review has no deadline), so that the model still has the rest.
const boardWaitShare = 3

// waitShareWords is boardWaitShare as the summary says it.
const waitShareWords = "a third"

// awaitBuiltin waits, within its bound, until the review's built-in
// engines have all reported. It returns the specialists whose built-in
// engine had not, and the bound.
func (e *Engine) awaitBuiltin(ctx context.Context) ([]string, time.Duration) {
	if e.board == nil {
		return nil, 0
	}
	bound := e.cfg.Timeout / boardWaitShare
	if dl, ok := ctx.Deadline(); ok {
		bound = time.Until(dl) / boardWaitShare
	}
	return e.board.wait(ctx, bound), bound
}

// withoutKnown drops the model's findings that repeat one the built-in
// engines report (specialist.SameProblem: the same file and lines, give or
// take one, and the same category or nearly the same headline), and says
// how many it dropped. The model was told of them; one it repeats anyway
// adds nothing but a second comment.
func (e *Engine) withoutKnown(fs []specialist.Finding) ([]specialist.Finding, int) {
	known := e.board.all()
	if len(known) == 0 {
		return fs, 0
	}
	out := fs[:0:0]
	for _, f := range fs {
		if slices.ContainsFunc(known, func(k specialist.Finding) bool { return specialist.SameProblem(k, f) }) {
			continue
		}
		out = append(out, f)
	}
	return out, len(fs) - len(out)
}

// Room for the list of findings already reported, in characters of the
// prompt, taken from the diff's budget (see plan).
const (
	// maxKnownSection bounds the list: about 500 tokens, some twenty
	// findings.
	maxKnownSection = 2000
	// knownShare: the list takes at most this share of a request's room.
	knownShare = 5
	// maxKnownHeadline bounds one finding's headline in the list.
	maxKnownHeadline = 160
	// knownMoreRoom is kept for the line that says how many more there are.
	knownMoreRoom = 32
)

// knownRoom is how much of a request's budget characters of diff the list
// of findings already reported may take: none without a board, and never
// so much that less than the minimum is left for the diff.
func (e *Engine) knownRoom(budget int) int {
	if e.board == nil {
		return 0
	}
	return max(0, min(maxKnownSection, budget/knownShare, budget-minimumPromptBudget))
}

// knownHeader opens the list of findings already reported; the system
// prompt names it.
const knownHeader = "Already reported by quorum's built-in analyzers on these files (do not report these again):\n"

// knownSection lists what the built-in engines report on the files at
// paths, within room characters: path and lines, rule and headline, never
// the body. What does not fit is counted, not listed.
func (e *Engine) knownSection(paths []string, room int) string {
	fs := e.board.on(paths)
	if len(fs) == 0 || len(knownHeader)+knownMoreRoom > room {
		return ""
	}
	var b strings.Builder
	b.WriteString(knownHeader)
	for i, f := range fs {
		line := knownLine(f)
		if b.Len()+len(line)+knownMoreRoom > room {
			fmt.Fprintf(&b, "- %d more, not listed\n", len(fs)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// knownLine is one finding of the list: "- a.go:12-14 gosec:G202: SQL
// string concatenation".
func knownLine(f specialist.Finding) string {
	p := shownPath(f.Path)
	where := p + " (the file as a whole)"
	switch {
	case f.Line > 0 && f.EndLine > f.Line:
		where = fmt.Sprintf("%s:%d-%d", p, f.Line, f.EndLine)
	case f.Line > 0:
		where = fmt.Sprintf("%s:%d", p, f.Line)
	}
	headline := strings.Join(strings.Fields(f.Headline), " ")
	if len(headline) > maxKnownHeadline {
		cut := maxKnownHeadline
		for cut > 0 && !utf8.RuneStart(headline[cut]) {
			cut--
		}
		headline = headline[:cut] + "…"
	}
	return fmt.Sprintf("- %s %s: %s\n", where, strings.Join(strings.Fields(f.Rule), " "), headline)
}

// posting is a built-in specialist the LLM engine does not serve, whose
// findings are still posted to the review's board: the LLM engines of the
// other specialists must not repeat them either.
type posting struct {
	specialist.Specialist
	board *Board
}

// Review runs the specialist and posts what it found, or that it failed
// (a panic too, which goes on to the pipeline).
func (p *posting) Review(ctx context.Context, c *change.Change) (fs []specialist.Finding, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.board.Post(p.Name(), nil, fmt.Errorf("panic: %v", r))
			panic(r)
		}
		p.board.Post(p.Name(), fs, err)
	}()
	return p.Specialist.Review(ctx, c)
}
