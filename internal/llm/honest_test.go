package llm

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/specialist"
)

// TestQuotedCodeMustMatch: a finding is kept only when the code it quotes
// is in the head file near the lines it names (whitespace aside, the
// prompt's numbers and markers aside), and it is moved to where the code
// really is; the drops are counted in the engine's note.
func TestQuotedCodeMustMatch(t *testing.T) {
	t.Parallel()
	r, c := smallChange(t)
	fix := "\terr := db.QueryRow(\"SELECT name FROM t WHERE name LIKE ?\", pattern).Scan(&name)"
	f := newFakeAPI(t, reply{body: answer(
		finding("store/store.go", 15, 15, "critical", "security", "Quoted exactly", fix),
		quoted(finding("store/store.go", 13, 13, "high", "security", "Misnumbered", fix), smallChangeLines[15]),
		quoted(finding("store/store.go", 16, 16, "low", "logic", "Spaced and numbered", nil), "  16 +     return   name,  err"),
		quoted(finding("store/store.go", 14, 14, "medium", "logic", "Invented code", nil), "rows, err := db.Query(q)"),
		quoted(finding("store/store.go", 14, 14, "medium", "logic", "No quote", nil), ""),
		quoted(finding("store/store.go", 16, 16, "medium", "logic", "Code from far away", nil), "package store"),
		quoted(finding("store/store.go", 12, 12, "medium", "logic", "Code on an unchanged line", nil), smallChangeLines[8]),
		finding("README.md", 0, 0, "info", "maintainability", "File-level remark", nil),
	)})
	e, _, _ := newEngine(t, f, Config{MaxFindingsPerFile: 10}, specialist.Security)
	var notes []string
	ctx := specialist.WithNotes(context.Background(), func(n string) { notes = append(notes, n) })
	got, err := e.Review(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	byHead := map[string]specialist.Finding{}
	var heads []string
	for _, g := range got {
		byHead[g.Headline] = g
		heads = append(heads, g.Headline)
	}
	slices.Sort(heads)
	if want := []string{"File-level remark", "Misnumbered", "Quoted exactly", "Spaced and numbered"}; !slices.Equal(heads, want) {
		t.Fatalf("kept %q, want %q", heads, want)
	}
	if m := byHead["Misnumbered"]; m.Line != 15 || m.EndLine != 15 || m.SuggestedPatch != "" {
		t.Errorf("misnumbered finding at %d-%d with patch %q, want moved to 15 without a patch", m.Line, m.EndLine, m.SuggestedPatch)
	}
	if q := byHead["Quoted exactly"]; q.SuggestedPatch == "" {
		t.Error("the exactly quoted finding lost its patch")
	} else if lines := strings.Split(string(r.apply(q.SuggestedPatch, "store/store.go")), "\n"); lines[14] != fix {
		t.Errorf("line 15 after the patch = %q", lines[14])
	}
	// The request asked for the quote.
	req := f.seen()[0]
	if !strings.Contains(req.system(), `"quote"`) {
		t.Errorf("the prompt does not ask for a quote:\n%s", req.system())
	}
	// "Code on an unchanged line" is dropped by the changed-lines check
	// after being moved, and is not counted among the quote drops.
	if len(notes) != 1 || !strings.Contains(notes[0], "; 3 of the model's findings were dropped: their quoted code is not in the change") {
		t.Errorf("notes %q", notes)
	}
}

func TestLocateQuote(t *testing.T) {
	t.Parallel()
	head := strings.Split("package p\n\nfunc f() {\n\tx := 1\n\n\ty := x + 1\n\treturn\n}\n", "\n")
	for _, tc := range []struct {
		quote       string
		line, end   int
		first, last int
		ok          bool
	}{
		{"x := 1", 4, 4, 4, 4, true},
		{"x := 1\ny := x + 1", 4, 6, 4, 6, true},   // across a blank line
		{"x := 1\n\ny := x + 1", 4, 6, 4, 6, true}, // quoted with it
		{"y := x + 1", 3, 3, 6, 6, true},           // re-anchored
		{"   4 + \tx := 1", 4, 4, 4, 4, true},      // the prompt's number and marker
		{"x := 1 + 1", 4, 4, 0, 0, false},
		{"x :=", 4, 4, 0, 0, false}, // a fragment too short to say
		{"y := x", 6, 6, 0, 0, false},
		{"func f() {\nx := 2", 3, 4, 0, 0, false}, // every line must match
		{"", 4, 4, 0, 0, false},
	} {
		first, last, ok := locateQuote(head, tc.quote, tc.line, tc.end)
		if first != tc.first || last != tc.last || ok != tc.ok {
			t.Errorf("locateQuote(%q, %d, %d) = %d, %d, %v; want %d, %d, %v", tc.quote, tc.line, tc.end, first, last, ok, tc.first, tc.last, tc.ok)
		}
	}
}

// TestCapPerFile: at most MaxFindingsPerFile of the engine's findings per
// file, the most severe kept, and the note says how many were left out.
func TestCapPerFile(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{body: answer(
		finding("store/store.go", 12, 12, "low", "logic", "Low", nil),
		finding("store/store.go", 13, 13, "critical", "logic", "Critical", nil),
		finding("store/store.go", 14, 14, "info", "logic", "Info", nil),
		finding("store/store.go", 15, 15, "high", "logic", "High", nil),
		finding("store/store.go", 16, 16, "medium", "logic", "Medium", nil),
		finding("README.md", 0, 0, "info", "maintainability", "Other file", nil),
	)})
	e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
	got, notes, err := reviewWithNotes(t, e)
	if err != nil {
		t.Fatal(err)
	}
	var heads []string
	for _, g := range got {
		heads = append(heads, g.Headline)
	}
	if want := []string{"Other file", "Critical", "High", "Medium"}; !slices.Equal(heads, want) {
		t.Errorf("kept %q, want %q", heads, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "; 2 findings beyond 3 per file were left out, the most severe kept") {
		t.Errorf("notes %q", notes)
	}
}

// usageReply answers every request with no findings and the usage given.
func usageReply(prompt, completion int) func(http.ResponseWriter, *http.Request, map[string]any) {
	return func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		writeRaw(w, fmt.Sprintf(`{"id": "chatcmpl-1", "object": "chat.completion", "created": 1763865000, "model": "test-model",
			"choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"findings\": []}", "refusal": null}, "logprobs": null, "finish_reason": "stop"}],
			"usage": {"prompt_tokens": %d, "completion_tokens": %d, "total_tokens": %d}}`, prompt, completion, prompt+completion))
	}
}

// TestBudgetSharedByEngines: the engines of one review share its token
// budget, counted from the server's usage; a request that could pass it
// is not sent, and an engine that could send nothing fails with one line.
func TestBudgetSharedByEngines(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.handle = usageReply(2500, 500)
	b := NewBudget(4000)
	first, _, _ := newEngine(t, f, Config{MaxTokens: 500}, specialist.Security, WithBudget(b))
	second, _, _ := newEngine(t, f, Config{MaxTokens: 500}, specialist.Logic, WithBudget(b))
	if _, _, err := reviewWithNotes(t, first); err != nil {
		t.Fatal(err)
	}
	if b.Used() != 3000 {
		t.Errorf("budget used %d, want the server's count of 3000", b.Used())
	}
	_, _, err := reviewWithNotes(t, second)
	if err == nil || err.Error() != "the LLM engine sent nothing: the review's budget of 4,000 tokens was spent (--llm-max-tokens-per-review)" {
		t.Errorf("second engine: %v", err)
	}
	if n := len(f.seen()); n != 1 {
		t.Errorf("%d requests sent, want 1: the second would pass the budget", n)
	}
}

// TestBudgetStopsChunks: a change split into several requests sends those
// the budget has room for; the note says how many were not sent, and only
// the files sent count as analysed.
func TestBudgetStopsChunks(t *testing.T) {
	t.Parallel()
	c := sixFilesChange(t)
	f := newFakeAPI(t)
	// The first answer takes the whole budget.
	f.handle = usageReply(9990, 10)
	e, _, _ := newEngine(t, f, Config{ContextTokens: 3000, MaxTokens: 500, Concurrency: 1}, specialist.Logic, WithBudget(NewBudget(10000)))
	var mu sync.Mutex
	var notes, analysed []string
	ctx := specialist.WithNotes(context.Background(), func(n string) { notes = append(notes, n) })
	ctx = specialist.WithCoverage(ctx, func(cv specialist.Coverage) {
		mu.Lock()
		defer mu.Unlock()
		if cv.Analysed {
			analysed = append(analysed, cv.Path)
		}
	})
	total := len(e.chunks(context.Background(), c, mustPlan(t, e, 3000).budget))
	if _, err := e.Review(ctx, c); err != nil {
		t.Fatal(err)
	}
	if total < 3 {
		t.Fatalf("the change fits %d requests; the test wants several", total)
	}
	if n := len(f.seen()); n != 1 {
		t.Errorf("%d requests sent, want 1", n)
	}
	want := fmt.Sprintf("; %d of %d requests were not sent: the review's budget of 10,000 tokens was spent (--llm-max-tokens-per-review)", total-1, total)
	if len(notes) != 1 || !strings.Contains(notes[0], want) {
		t.Errorf("notes %q, want one with %q", notes, want)
	}
	if len(analysed) == 0 || len(analysed) >= len(c.Files) {
		t.Errorf("analysed %q: want the files of the one request sent", analysed)
	}
}

func mustPlan(t *testing.T, e *Engine, window int) plan {
	t.Helper()
	p, err := e.plan(window, "configured")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWireSharesOneBudgetPerReview: the engines one Wire call makes share
// a budget of MaxTokensPerReview; the next call (the next review) has its
// own.
func TestWireSharesOneBudgetPerReview(t *testing.T) {
	t.Parallel()
	w := Wiring{Config: Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, Mode: ModeInstead, MaxTokensPerReview: 5000}
	budgets := func() []*Budget {
		specs, _, err := w.Wire(nil, []string{specialist.Logic, specialist.Security}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []*Budget
		for _, s := range specs {
			out = append(out, s.(*Engine).budget)
		}
		return out
	}
	one, two := budgets(), budgets()
	if one[0] == nil || one[0] != one[1] || one[0].Limit() != 5000 {
		t.Errorf("one review's engines have budgets %p and %p", one[0], one[1])
	}
	if one[0] == two[0] {
		t.Error("two reviews share a budget")
	}
	w.MaxTokensPerReview = 0
	if b := budgets(); b[0] != nil {
		t.Errorf("no bound configured, but a budget of %d", b[0].Limit())
	}
}

// TestWholeFunctions: a Go function the change touches in the middle is
// shown whole beside the hunks, numbered and marked; a function the change
// does not touch, or that the hunks already show whole, is not; nor is
// anything when the file would no longer fit in one request.
func TestWholeFunctions(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	var long strings.Builder
	long.WriteString("package p\n\n// Sum adds.\nfunc Sum(xs []int) int {\n\ttotal := 0\n")
	for i := range 20 {
		fmt.Fprintf(&long, "\t_ = %d // filler, long enough that the function outgrows a small request\n", i)
	}
	long.WriteString("\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n\nfunc Other() int {\n\treturn 1\n}\n")
	before := long.String()
	after := strings.Replace(before, "\t\ttotal += x\n", "\t\ttotal -= x\n", 1)
	base := r.commit(map[string]string{"p/p.go": before, "notes.txt": "a\n"})
	head := r.commit(map[string]string{"p/p.go": after + "\nfunc New() int {\n\treturn 2\n}\n", "notes.txt": "b\n"})
	c := r.Change(base, head)

	f := newFakeAPI(t, reply{body: answer()})
	e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
	if _, err := e.Review(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	user := f.seen()[0].user()
	for _, want := range []string{
		"The functions the change touches, whole, as they are after it:\n@@ func Sum, lines 4-30, whole @@\n   4   func Sum(xs []int) int {\n",
		"   6   \t_ = 0 // filler, long enough that the function outgrows a small request\n",
		"  27 + \t\ttotal -= x\n",
		"  30   }\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
	for _, not := range []string{"func Other, lines", "func New, lines"} {
		if strings.Contains(user, not) {
			t.Errorf("prompt shows %q, which is untouched or already whole in the hunks:\n%s", not, user)
		}
	}
	if strings.Count(user, "The functions the change touches") != 1 {
		t.Errorf("whole functions shown for a file that is not Go, or twice:\n%s", user)
	}

	// In a context that fits the hunks but not the function, only the
	// hunks go.
	small := newFakeAPI(t, reply{body: answer()})
	es, _, _ := newEngine(t, small, Config{ContextTokens: 1600, MaxTokens: 100}, specialist.Logic)
	budget := mustPlan(t, es, 1600).budget
	if _, err := es.Review(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	hunkSent := false
	for _, req := range small.seen() {
		if strings.Contains(req.user(), "whole @@") {
			t.Errorf("a budget of %d characters, and the whole function is sent:\n%s", budget, req.user())
		}
		hunkSent = hunkSent || strings.Contains(req.user(), "  27 + \t\ttotal -= x\n")
	}
	if !hunkSent {
		t.Error("the changed line was not sent in the small context")
	}
}
