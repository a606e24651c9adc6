package llm

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/llmcache"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// cacheSetup is the real cache, in a SQLite database, of two repositories
// of one account.
type cacheSetup struct {
	db          *store.DB
	repo, other *llmcache.Scope
}

func newCacheSetup(t *testing.T) cacheSetup {
	t.Helper()
	db := storetest.SQLite(t)
	s := llmcache.New(db, func() time.Time { return testNow })
	a := storetest.Repo(t, db, "acme", "acme", "store")
	b := storetest.Repo(t, db, "acme", "acme", "other")
	return cacheSetup{db: db, repo: s.For(a.AccountID, a.ID), other: s.For(b.AccountID, b.ID)}
}

// cachedReview is what one review by a new engine with the cache brought.
type cachedReview struct {
	findings []specialist.Finding
	notes    []string
	analysed []string
	// requests are the prompts sent.
	requests []string
	err      error
}

// reviewCached reviews c with a new engine (as serve makes one per review)
// that answers from f and keeps its results in rc.
func reviewCached(t *testing.T, f *fakeAPI, rc ResultCache, c *change.Change) cachedReview {
	t.Helper()
	return reviewCachedAs(t, f, Config{}, specialist.Security, rc, c)
}

// reviewCachedAs is reviewCached by an engine of cfg reviewing as the
// specialist name.
func reviewCachedAs(t *testing.T, f *fakeAPI, cfg Config, name string, rc ResultCache, c *change.Change) cachedReview {
	t.Helper()
	before := len(f.seen())
	e, _, _ := newEngine(t, f, cfg, name, WithResultCache(rc))
	var out cachedReview
	var mu sync.Mutex
	ctx := specialist.WithNotes(context.Background(), func(n string) {
		mu.Lock()
		defer mu.Unlock()
		out.notes = append(out.notes, n)
	})
	ctx = specialist.WithCoverage(ctx, func(cv specialist.Coverage) {
		mu.Lock()
		defer mu.Unlock()
		if cv.Analysed && cv.Engine == "llm" {
			out.analysed = append(out.analysed, cv.Path)
		}
	})
	out.findings, out.err = e.Review(ctx, c)
	for _, r := range f.seen()[before:] {
		out.requests = append(out.requests, r.user())
	}
	return out
}

// sqlFinding is the model's finding on smallChange's query.
func sqlFinding() map[string]any {
	return finding("store/store.go", 15, 15, "critical", "security", "SQL built from the pattern", nil)
}

// TestCacheSecondReviewSendsNothing: the same change reviewed again (a
// second review of the same head, or a push that changed nothing the
// model saw) sends no request and has the same findings, on every file,
// including the one the model found nothing in; the note says so.
func TestCacheSecondReviewSendsNothing(t *testing.T) {
	t.Parallel()
	cs := newCacheSetup(t)
	_, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer(sqlFinding())})
	first := reviewCached(t, f, cs.repo, c)
	if first.err != nil || len(first.requests) != 1 || len(first.findings) != 1 {
		t.Fatalf("first review: %d requests, findings %+v, err %v", len(first.requests), first.findings, first.err)
	}
	second := reviewCached(t, f, cs.repo, c)
	if second.err != nil {
		t.Fatal(second.err)
	}
	if len(second.requests) != 0 {
		t.Errorf("the second review sent %d requests:\n%s", len(second.requests), second.requests)
	}
	if len(second.findings) != 1 || second.findings[0] != first.findings[0] {
		t.Errorf("second review's findings %+v, want the first's %+v", second.findings, first.findings)
	}
	if len(second.analysed) != 2 {
		t.Errorf("analysed %q, want both files", second.analysed)
	}
	want := "the LLM engine sent test-model nothing: its findings on the 2 files were reused from an earlier review that showed it the same lines."
	if len(second.notes) != 1 || second.notes[0] != want {
		t.Errorf("notes %q, want %q", second.notes, want)
	}
}

// TestCachePushSendsOnlyWhatChanged: a push that changes one of two files
// sends only that file; the other's findings come from the cache.
func TestCachePushSendsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	cs := newCacheSetup(t)
	r, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer(sqlFinding())})
	if first := reviewCached(t, f, cs.repo, c); first.err != nil || len(first.requests) != 1 {
		t.Fatalf("first review: %d requests, err %v", len(first.requests), first.err)
	}
	head := r.commit(map[string]string{"README.md": "# store\n\nReads names by id or by pattern.\n"})
	f.mu.Lock()
	f.replies = []reply{{body: answer(finding("README.md", 0, 0, "info", "maintainability", "File-level remark", nil))}}
	f.mu.Unlock()
	second := reviewCached(t, f, cs.repo, r.Change(c.BaseSHA, head))
	if second.err != nil {
		t.Fatal(second.err)
	}
	if len(second.requests) != 1 || !strings.Contains(second.requests[0], "File: README.md") || strings.Contains(second.requests[0], "store/store.go") {
		t.Fatalf("requests %q, want one with README.md alone", second.requests)
	}
	var heads []string
	for _, g := range second.findings {
		heads = append(heads, g.Path+": "+g.Headline)
	}
	if strings.Join(heads, "; ") != "README.md: File-level remark; store/store.go: SQL built from the pattern" {
		t.Errorf("findings %q", heads)
	}
	if len(second.notes) != 1 || !strings.Contains(second.notes[0], "; it sent 1 file and reused its findings on 1 other file from an earlier review that showed it the same lines") {
		t.Errorf("notes %q", second.notes)
	}
	if len(second.analysed) != 2 {
		t.Errorf("analysed %q, want both files", second.analysed)
	}
}

// TestCacheShiftedHunkIsSentAgain: the same edit, rebased onto a base
// that added a line above it, has other line numbers: it is sent again,
// and the finding is where the new answer puts it.
func TestCacheShiftedHunkIsSentAgain(t *testing.T) {
	t.Parallel()
	cs := newCacheSetup(t)
	r, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer(sqlFinding())})
	if first := reviewCached(t, f, cs.repo, c); first.err != nil {
		t.Fatal(first.err)
	}
	shift := func(rev string) string {
		var files = map[string]string{}
		for _, p := range []string{"store/store.go", "README.md"} {
			data, err := c.ReadFileAt(context.Background(), rev, p)
			if err != nil {
				t.Fatal(err)
			}
			files[p] = string(data)
		}
		files["store/store.go"] = strings.Replace(files["store/store.go"], "package store\n", "package store\n\n// Package store reads names.\n", 1)
		return r.commit(files)
	}
	base, head := shift(c.BaseSHA), shift(c.HeadSHA)
	moved := finding("store/store.go", 17, 17, "critical", "security", "SQL built from the pattern", nil)
	moved["quote"] = smallChangeLines[15]
	f.mu.Lock()
	f.replies = []reply{{body: answer(moved)}}
	f.mu.Unlock()
	second := reviewCached(t, f, cs.repo, r.Change(base, head))
	if second.err != nil {
		t.Fatal(second.err)
	}
	if len(second.requests) != 1 || !strings.Contains(second.requests[0], "  17 + \terr := db.QueryRow(") {
		t.Fatalf("requests %q, want the shifted hunk sent again", second.requests)
	}
	if len(second.findings) != 1 || second.findings[0].Line != 17 {
		t.Errorf("findings %+v, want the one on line 17", second.findings)
	}
}

// TestCacheKeepsOnlyWholeAnswers: a failed review and an answer cut off
// at the token limit (whose complete findings were kept) store nothing:
// the next review asks again.
func TestCacheKeepsOnlyWholeAnswers(t *testing.T) {
	t.Parallel()
	cut := `{"findings": [{"path": "store/store.go", "line": 15, "end_line": 15, "severity": "high", "category": "security", "headline": "Query built by concatenation", "body": "Use a placeholder.", "quote": "db.QueryRow(\"SELECT name FROM t WHERE name LIKE '\" + pattern", "suggested_replacement": null}, {"path": "README.md", "li`
	for _, tc := range []struct {
		name  string
		reply reply
	}{
		{"truncated", reply{body: completion(cut, "length")}},
		{"failed", reply{status: 400, body: apiErrorJSON("bad request", "invalid_request_error", nil)}},
		{"malformed", reply{body: completion("not json", "stop")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cs := newCacheSetup(t)
			_, c := smallChange(t)
			f := newFakeAPI(t, tc.reply)
			first := reviewCached(t, f, cs.repo, c)
			if len(first.requests) == 0 || (tc.name == "truncated") != (first.err == nil) {
				t.Fatalf("first review: %d requests, err %v", len(first.requests), first.err)
			}
			f.mu.Lock()
			f.replies = []reply{{body: answer(sqlFinding())}}
			f.mu.Unlock()
			second := reviewCached(t, f, cs.repo, c)
			if second.err != nil || len(second.requests) != 1 || !strings.Contains(second.requests[0], "File: store/store.go") || !strings.Contains(second.requests[0], "File: README.md") {
				t.Errorf("second review: err %v, requests %q; want both files sent again", second.err, second.requests)
			}
		})
	}
}

// TestCacheIsPerRepository: what one repository's review stored, another
// repository's review of the very same change does not read; nor does
// another model or another specialist in the same repository.
func TestCacheIsPerRepository(t *testing.T) {
	t.Parallel()
	cs := newCacheSetup(t)
	_, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer(sqlFinding())})
	if first := reviewCached(t, f, cs.repo, c); first.err != nil || len(first.requests) != 1 {
		t.Fatalf("first review: %d requests, err %v", len(first.requests), first.err)
	}
	if other := reviewCached(t, f, cs.other, c); other.err != nil || len(other.requests) != 1 {
		t.Errorf("the other repository's review: %d requests (want 1), err %v", len(other.requests), other.err)
	}
	if other := reviewCachedAs(t, f, Config{Model: "other-model"}, specialist.Security, cs.repo, c); other.err != nil || len(other.requests) != 1 {
		t.Errorf("another model's review: %d requests (want 1), err %v", len(other.requests), other.err)
	}
	if other := reviewCachedAs(t, f, Config{}, specialist.Logic, cs.repo, c); other.err != nil || len(other.requests) != 1 {
		t.Errorf("another specialist's review: %d requests (want 1), err %v", len(other.requests), other.err)
	}
}

// TestCacheResultStaysOnItsFile plays an attacker who could write a stored
// result (or steer what is stored): its findings name another file, and
// quote code that is not where they point. Reused, they land on the file
// the result was stored for, or nowhere: the quote is checked again
// against the change, as an answer's is.
func TestCacheResultStaysOnItsFile(t *testing.T) {
	t.Parallel()
	cs := newCacheSetup(t)
	_, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer(sqlFinding())})
	if first := reviewCached(t, f, cs.repo, c); first.err != nil {
		t.Fatal(first.err)
	}
	ctx := context.Background()
	forged := `{"findings": [` +
		`{"path": "README.md", "line": 3, "end_line": 3, "severity": "critical", "category": "security", "headline": "Moved to README", "body": "x", "quote": "Reads names by id or pattern.", "suggested_replacement": null},` +
		`{"path": "store/store.go", "line": 15, "end_line": 15, "severity": "critical", "category": "security", "headline": "Quote not in the file", "body": "x", "quote": "os.RemoveAll(\"/\")", "suggested_replacement": null},` +
		`{"path": "store/store.go", "line": 13, "end_line": 13, "severity": "high", "category": "security", "headline": "Still checked", "body": "x", "quote": "func Find(db *sql.DB, pattern string) (string, error) {", "suggested_replacement": null}]}`
	n, err := cs.db.Writer().Exec(ctx, `UPDATE llm_file_results SET result = $1 WHERE result LIKE '%SQL built from the pattern%'`, forged)
	if err != nil || n != 1 {
		t.Fatalf("forge the stored result: %d rows, %v", n, err)
	}
	second := reviewCached(t, f, cs.repo, c)
	if second.err != nil || len(second.requests) != 0 {
		t.Fatalf("second review: err %v, %d requests", second.err, len(second.requests))
	}
	if len(second.findings) != 1 || second.findings[0].Path != "store/store.go" || second.findings[0].Headline != "Still checked" {
		t.Errorf("findings %+v, want only the one whose quote is on its line of store/store.go", second.findings)
	}
	if len(second.notes) != 1 || !strings.Contains(second.notes[0], "2 of the model's findings were dropped") {
		t.Errorf("notes %q", second.notes)
	}
}

// TestCacheReusedRepeatOfBuiltinIsDropped: a reused finding that repeats
// what a built-in engine reports (the model, told of it, repeated it
// anyway) is dropped and counted as a fresh one is; nothing is sent.
func TestCacheReusedRepeatOfBuiltinIsDropped(t *testing.T) {
	t.Parallel()
	cs := newCacheSetup(t)
	_, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer(sqlFinding())})
	review := func() ([]specialist.Finding, []string, int) {
		t.Helper()
		board := NewBoard(specialist.Security)
		board.Post(specialist.Security, []specialist.Finding{builtinFinding("store/store.go", 15, "gosec:G202", "security", "SQL string concatenation")}, nil)
		e, _, _ := newEngine(t, f, Config{}, specialist.Security, WithResultCache(cs.repo), WithBoard(board))
		var notes noteSink
		before := len(f.seen())
		got, err := e.Review(specialist.WithNotes(context.Background(), notes.add), c)
		if err != nil {
			t.Fatal(err)
		}
		return got, notes.list(), len(f.seen()) - before
	}
	if got, _, sent := review(); sent != 1 || len(got) != 0 {
		t.Fatalf("first review: %d requests, findings %+v", sent, got)
	}
	got, notes, sent := review()
	if sent != 0 || len(got) != 0 {
		t.Errorf("second review: %d requests, findings %+v; want none of either", sent, got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "sent test-model nothing") || !strings.Contains(notes[0], "1 of the model's findings was dropped: the built-in engines already report them") {
		t.Errorf("notes %q", notes)
	}
}

// TestCacheAllReusedNoteOfUnheardBuiltins: when every file's results are
// reused and a built-in engine has not reported, the note does not say
// the model was not told what it reports (the model was not asked), but
// that the reused findings may repeat it.
func TestCacheAllReusedNoteOfUnheardBuiltins(t *testing.T) {
	t.Parallel()
	cs := newCacheSetup(t)
	_, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer(sqlFinding())})
	review := func(board *Board) []string {
		t.Helper()
		e, _, _ := newEngine(t, f, Config{}, specialist.Security, WithResultCache(cs.repo), WithBoard(board))
		// The engine waits a third of the specialist's time, less a tenth.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var notes noteSink
		if _, err := e.Review(specialist.WithNotes(ctx, notes.add), c); err != nil {
			t.Fatal(err)
		}
		return notes.list()
	}
	done := NewBoard(specialist.Tests)
	done.Post(specialist.Tests, nil, nil)
	review(done)
	before := len(f.seen())
	notes := review(NewBoard(specialist.Tests))
	if sent := len(f.seen()) - before; sent != 0 {
		t.Fatalf("the second review sent %d requests", sent)
	}
	if len(notes) != 1 || strings.Contains(notes[0], "the model was not told") || !strings.Contains(notes[0], "had not finished after 0.") || !strings.Contains(notes[0], "so the reused findings may repeat what they report") {
		t.Errorf("notes %q", notes)
	}
}

// TestCacheKeyHasWhatIsAlreadyReported: a file's results made while the
// model was told a built-in engine reports a problem are not reused when
// none reports it any more (the engine was turned off, or failed): the
// model, told not to repeat it, said nothing of it, and reused results
// would lose it. The file is sent again.
func TestCacheKeyHasWhatIsAlreadyReported(t *testing.T) {
	t.Parallel()
	cs := newCacheSetup(t)
	_, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer()}, reply{body: answer(sqlFinding())})
	review := func(builtin []specialist.Finding) ([]specialist.Finding, int) {
		t.Helper()
		board := NewBoard(specialist.Security)
		board.Post(specialist.Security, builtin, nil)
		e, _, _ := newEngine(t, f, Config{}, specialist.Security, WithResultCache(cs.repo), WithBoard(board))
		before := len(f.seen())
		got, err := e.Review(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		return got, len(f.seen()) - before
	}
	if _, sent := review([]specialist.Finding{builtinFinding("store/store.go", 15, "gosec:G202", "security", "SQL string concatenation")}); sent != 1 {
		t.Fatalf("first review sent %d requests", sent)
	}
	got, sent := review(nil)
	if sent != 1 || len(got) != 1 {
		t.Errorf("with nothing reported any more: %d requests, findings %+v; want the file sent again and the model's finding", sent, got)
	}
}
