package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
)

const testKey = "sk-test-9f8e7d6c5b4a39281706"

// repo is a real git repository in a temp dir (the shared test helper),
// with a commit of files in one call.
type repo struct {
	*goanalysistest.Repo
	t *testing.T
}

func newRepo(t *testing.T) repo {
	t.Helper()
	return repo{goanalysistest.NewRepo(t), t}
}

// commit writes files and commits them, returning the commit's name.
func (r repo) commit(files map[string]string) string {
	r.Write(files)
	return r.Commit("c")
}

// apply checks and applies patch with git apply, and returns path's
// content afterwards.
func (r repo) apply(patch, path string) []byte {
	r.t.Helper()
	p := filepath.Join(r.t.TempDir(), "suggested.patch")
	if err := os.WriteFile(p, []byte(patch), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.Git("apply", "--check", p)
	r.Git("apply", p)
	data, err := os.ReadFile(filepath.Join(r.Dir, path))
	if err != nil {
		r.t.Fatal(err)
	}
	return data
}

// smallChange is a base and head of a small Go package: store.go gains a
// function and loses a line, notes.md is added, README changes.
func smallChange(t *testing.T) (repo, *change.Change) {
	t.Helper()
	r := newRepo(t)
	base := r.commit(map[string]string{
		"store/store.go": "package store\n\nimport \"database/sql\"\n\n// Get reads a name.\nfunc Get(db *sql.DB, id string) (string, error) {\n\tvar name string\n\terr := db.QueryRow(\"SELECT name FROM t WHERE id = ?\", id).Scan(&name)\n\treturn name, err\n}\n",
		"README.md":      "# store\n\nReads names.\n",
	})
	head := r.commit(map[string]string{
		// Line 11 onwards is new; the old comment line 5 is modified.
		"store/store.go": "package store\n\nimport \"database/sql\"\n\n// Get reads a name by id.\nfunc Get(db *sql.DB, id string) (string, error) {\n\tvar name string\n\terr := db.QueryRow(\"SELECT name FROM t WHERE id = ?\", id).Scan(&name)\n\treturn name, err\n}\n\n// Find reads a name by pattern.\nfunc Find(db *sql.DB, pattern string) (string, error) {\n\tvar name string\n\terr := db.QueryRow(\"SELECT name FROM t WHERE name LIKE '\" + pattern + \"'\").Scan(&name)\n\treturn name, err\n}\n",
		"README.md":      "# store\n\nReads names by id or pattern.\n",
	})
	return r, r.Change(base, head)
}

// noSleep records waits instead of sleeping.
type noSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *noSleep) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return nil
}

func (s *noSleep) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.waits)
}

var testNow = time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)

// newEngine builds an engine for the fake, with a fake clock and a logger
// into the returned buffer.
func newEngine(t *testing.T, f *fakeAPI, cfg Config, name string, opts ...Option) (*Engine, *noSleep, *bytes.Buffer) {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = f.baseURL()
	}
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	ns := &noSleep{}
	// slog handlers serialize their writes; tests read after Review returns.
	logs := &bytes.Buffer{}
	opts = append([]Option{
		WithClock(func() time.Time { return testNow }, ns.sleep),
		WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}, opts...)
	e, err := New(cfg, name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e, ns, logs
}

func finding(path string, line, end int, severity, category, headline string, replacement any) map[string]any {
	return map[string]any{
		"path": path, "line": line, "end_line": end, "severity": severity, "category": category,
		"headline": headline, "body": "Because.", "quote": smallChangeLines[line], "suggested_replacement": replacement,
	}
}

// smallChangeLines are store/store.go's lines at smallChange's head, by
// number: what a model quotes for a finding on them.
var smallChangeLines = map[int]string{
	5:  "// Get reads a name by id.",
	8:  "\terr := db.QueryRow(\"SELECT name FROM t WHERE id = ?\", id).Scan(&name)",
	12: "// Find reads a name by pattern.",
	13: "func Find(db *sql.DB, pattern string) (string, error) {",
	14: "\tvar name string",
	15: "\terr := db.QueryRow(\"SELECT name FROM t WHERE name LIKE '\" + pattern + \"'\").Scan(&name)",
	16: "\treturn name, err",
}

// quoted is f with quote as its quote.
func quoted(f map[string]any, quote string) map[string]any {
	f["quote"] = quote
	return f
}

func TestReviewRealChange(t *testing.T) {
	t.Parallel()
	r, c := smallChange(t)
	fix := "\terr := db.QueryRow(\"SELECT name FROM t WHERE name LIKE ?\", pattern).Scan(&name)"
	f := newFakeAPI(t, reply{body: answer(
		finding("store/store.go", 15, 15, "critical", "security", "SQL built from the pattern", fix),
		finding("store/store.go", 8, 8, "high", "security", "On an unchanged line", nil),
		finding("store/nothere.go", 15, 15, "high", "security", "Unknown path", nil),
		finding("store/store.go", 15, 15, "urgent", "security", "Unknown severity", nil),
		finding("store/store.go", 15, 15, "high", "style", "Unknown category", nil),
		finding("README.md", 0, 0, "info", "maintainability", "File-level remark", nil),
		finding("store/store.go", 14, 40, "low", "logic", "Range that starts on a changed line", "x"),
		finding("./store/store.go", 16, 16, "Medium", "Logic", "Path and enums as a model may write them", nil),
	)})
	e, _, logs := newEngine(t, f, Config{}, specialist.Security, WithInstructions([]Instruction{
		{PathGlob: "store/**", Text: "Queries must use placeholders."},
		{PathGlob: "docs/**", Text: "Docs instruction."},
	}))

	var covered []string
	ctx := specialist.WithCoverage(context.Background(), func(cv specialist.Coverage) {
		if cv.Analysed && cv.Engine == "llm" {
			covered = append(covered, cv.Path)
		}
	})
	got, err := e.Review(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// Every file went to the model: the review knows they were analysed.
	for _, f := range c.Files {
		if !slices.Contains(covered, f.NewPath) {
			t.Errorf("%s not reported as analysed by the model (reported: %q)", f.NewPath, covered)
		}
	}
	var heads []string
	for _, g := range got {
		heads = append(heads, g.Headline)
		if g.Rule != "llm:security" || g.Engine != specialist.EngineLLM || g.Model != "test-model" {
			t.Errorf("provenance of %q: rule %q engine %q model %q", g.Headline, g.Rule, g.Engine, g.Model)
		}
		if err := g.Validate(); err != nil {
			t.Errorf("%q invalid: %v", g.Headline, err)
		}
	}
	want := []string{"File-level remark", "Range that starts on a changed line", "SQL built from the pattern", "Path and enums as a model may write them"}
	if !slices.Equal(heads, want) {
		t.Fatalf("findings %q, want %q", heads, want)
	}
	if rng := got[1]; rng.Line != 14 || rng.EndLine != 17 || rng.SuggestedPatch != "" {
		t.Errorf("range not trimmed to its hunk, or a patch for the trimmed range: %+v", rng)
	}
	if n := got[3]; n.Path != "store/store.go" || n.Severity != "medium" || n.Category != "logic" {
		t.Errorf("not normalized: %+v", n)
	}
	if got[0].Line != 0 || got[0].EndLine != 0 || got[0].Path != "README.md" {
		t.Errorf("file-level finding %+v", got[0])
	}
	sql := got[2]
	if sql.Line != 15 || sql.EndLine != 15 || sql.Severity != "critical" || sql.Category != "security" || sql.Body != "Because." {
		t.Errorf("finding = %+v", sql)
	}

	// The suggested patch applies to the head tree with git itself, and
	// makes the change it suggests.
	if sql.SuggestedPatch == "" {
		t.Fatal("no suggested patch")
	}
	data := r.apply(sql.SuggestedPatch, "store/store.go")
	if lines := strings.Split(string(data), "\n"); lines[14] != fix {
		t.Errorf("line 15 after the patch = %q", lines[14])
	}

	reqs := f.seen()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	req := reqs[0]
	if got := req.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if req.Body["model"] != "test-model" || req.Body["max_tokens"] != float64(DefaultMaxTokens) {
		t.Errorf("model %v, max_tokens %v", req.Body["model"], req.Body["max_tokens"])
	}
	if !strings.Contains(req.system(), "security reviewer") {
		t.Errorf("system prompt is not the security specialist's:\n%s", req.system())
	}
	user := req.user()
	for _, line := range []string{
		"File: store/store.go (modified)\n",
		"Instructions from the repository for this file:\n- Queries must use placeholders.\n",
		"@@ -2,9 +2,16 @@",
		"     - // Get reads a name.\n",
		"   5 + // Get reads a name by id.\n",
		"   6   func Get(db *sql.DB, id string) (string, error) {\n",
		"  12 + // Find reads a name by pattern.\n",
		"  15 + \terr := db.QueryRow(\"SELECT name FROM t WHERE name LIKE '\" + pattern + \"'\").Scan(&name)\n",
		"File: README.md (modified)\n@@",
		"   3 + Reads names by id or pattern.\n",
	} {
		if !strings.Contains(user, line) {
			t.Errorf("prompt lacks %q:\n%s", line, user)
		}
	}
	if strings.Contains(user, "Docs instruction") || strings.Count(user, "Queries must use placeholders") != 1 {
		t.Errorf("instructions reach the wrong files:\n%s", user)
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("log carries the key:\n%s", logs)
	}
	if os.Getenv("QUORUM_LLM_SHOW_PROMPT") != "" {
		t.Logf("system:\n%s\nuser:\n%s", req.system(), user)
	}
}

func TestAzureStyleEndpoint(t *testing.T) {
	t.Parallel()
	_, c := smallChange(t)
	f := newFakeAPI(t, reply{body: answer()})
	e, _, _ := newEngine(t, f, Config{
		BaseURL:      f.baseURL() + "/?api-version=2024-10-21",
		APIKeyHeader: "api-key",
	}, specialist.Logic)
	if _, err := e.Review(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	req := f.seen()[0]
	if req.Header.Get("api-key") != testKey || req.Header.Get("Authorization") != "" {
		t.Errorf("api-key %q, Authorization %q", req.Header.Get("api-key"), req.Header.Get("Authorization"))
	}
	if req.Query != "api-version=2024-10-21" {
		t.Errorf("query %q", req.Query)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	_, c := smallChange(t)
	elsewhere := newFakeAPI(t, reply{body: answer()})
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		http.Redirect(w, r, elsewhere.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}
	e, _, _ := newEngine(t, f, Config{APIKeyHeader: "api-key"}, specialist.Logic)
	_, err := e.Review(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "HTTP 307") {
		t.Errorf("error %v, want the redirect as an error", err)
	}
	if n := len(elsewhere.seen()); n != 0 {
		t.Errorf("the redirect was followed, with the key: %d requests elsewhere", n)
	}
}

func TestJSONObjectFallback(t *testing.T) {
	t.Parallel()
	_, c := smallChange(t)
	content := "```json\n" + `{"findings": [{"path": "store/store.go", "line": 13, "end_line": 13, "severity": "low", "category": "logic", "headline": "Fenced", "body": "b", "quote": "func Find(db *sql.DB, pattern string) (string, error) {", "suggested_replacement": null}]}` + "\n```"
	f := newFakeAPI(t, reply{body: completion(content, "stop")})
	e, _, _ := newEngine(t, f, Config{ResponseFormat: FormatJSONObject, MaxTokens: 1000}, specialist.Performance)
	got, err := e.Review(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Headline != "Fenced" {
		t.Errorf("findings %+v", got)
	}
	req := f.seen()[0]
	rf := req.Body["response_format"].(map[string]any)
	if rf["type"] != "json_object" || rf["json_schema"] != nil {
		t.Errorf("response_format %v", rf)
	}
	if req.Body["max_tokens"] != float64(1000) || req.Body["max_completion_tokens"] != nil {
		t.Errorf("max_tokens %v, max_completion_tokens %v", req.Body["max_tokens"], req.Body["max_completion_tokens"])
	}
	if !strings.Contains(req.system(), `"suggested_replacement"`) {
		t.Error("json_object mode does not put the schema in the prompt")
	}
}

func TestBadResponses(t *testing.T) {
	t.Parallel()
	good := reply{body: answer(finding("store/store.go", 15, 15, "high", "security", "ok", nil))}
	for _, tc := range []struct {
		name     string
		replies  []reply
		cfg      Config
		wantErr  error  // errors.Is target, or nil to check text only
		wantText string // in the error; "" when the review succeeds
		requests int
		waits    []time.Duration
	}{
		{name: "not a chat completion", replies: []reply{{body: `{"choices": [`}}, wantErr: ErrMalformed, requests: 1},
		{name: "answer not JSON", replies: []reply{{body: completion("I found two bugs.", "stop")}}, wantErr: ErrMalformed, requests: 1},
		{name: "answer without findings", replies: []reply{{body: completion(`{"issues": []}`, "stop")}}, wantErr: ErrMalformed, requests: 1},
		{name: "null content", replies: []reply{{body: completion(nil, "stop")}}, wantErr: ErrMalformed, requests: 1},
		{name: "truncated", replies: []reply{{body: completion(`{"findings": [{"path": "store/st`, "length")}}, wantErr: ErrTruncated, requests: 1},
		{name: "refusal", replies: []reply{{body: completionWith(map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}, "stop")}}, wantErr: ErrRefused, wantText: "I can't help with that.", requests: 1},
		{name: "content filter", replies: []reply{{body: completion(nil, "content_filter")}}, wantErr: ErrRefused, requests: 1},
		{name: "empty choices", replies: []reply{{body: completionWith(nil, "stop")}}, wantErr: ErrNoChoices, requests: 1},
		{name: "error object with 200", replies: []reply{{body: apiErrorJSON("upstream failed", "server_error", nil)}}, wantErr: ErrNoChoices, wantText: "upstream failed", requests: 1},
		{name: "400 not retried", replies: []reply{{status: 400, body: apiErrorJSON("Invalid value for 'temperature': must be at most 2.", "invalid_request_error", nil)}, good},
			wantText: "HTTP 400 (invalid_request_error): Invalid value for 'temperature': must be at most 2.", requests: 1},
		{name: "404 model", replies: []reply{{status: 404, body: apiErrorJSON("The model `nope` does not exist.", "invalid_request_error", "model_not_found")}},
			wantText: "model_not_found): The model `nope` does not exist.", requests: 1},
		{name: "401 echoing the key", replies: []reply{{status: 401, body: apiErrorJSON("Incorrect API key provided: "+testKey+".", "invalid_request_error", "invalid_api_key")}},
			wantText: "Incorrect API key provided: [redacted].", requests: 1},
		{name: "non-JSON error", replies: []reply{{status: 403, body: "<html>forbidden</html>"}}, wantText: "HTTP 403: <html>forbidden</html>", requests: 1},
		{name: "429 then success", replies: []reply{{status: 429, header: map[string]string{"Retry-After": "7"}, body: apiErrorJSON("Rate limit reached.", "requests", "rate_limit_exceeded")}, good},
			requests: 2, waits: []time.Duration{7 * time.Second}},
		{name: "429 twice", replies: []reply{{status: 429, header: map[string]string{"Retry-After-Ms": "1500"}, body: apiErrorJSON("Rate limit reached.", "requests", "rate_limit_exceeded")}},
			wantText: "HTTP 429", requests: 2, waits: []time.Duration{1500 * time.Millisecond}},
		{name: "429 HTTP-date", replies: []reply{{status: 429, header: map[string]string{"Retry-After": testNow.Add(12 * time.Second).Format(http.TimeFormat)}, body: apiErrorJSON("slow down", "rate_limit_error", "slow_down")}, good},
			requests: 2, waits: []time.Duration{12 * time.Second}},
		{name: "429 beyond the cap", replies: []reply{{status: 429, header: map[string]string{"Retry-After": "3600"}, body: apiErrorJSON("Quota.", "insufficient_quota", "insufficient_quota")}, good},
			wantText: "longer than the 30s allowed", requests: 1},
		{name: "500 then success", replies: []reply{{status: 500, body: apiErrorJSON("The server had an error.", "server_error", nil)}, good},
			requests: 2, waits: []time.Duration{time.Second}},
		{name: "503 twice", replies: []reply{{status: 503, body: apiErrorJSON("The engine is currently overloaded.", "server_error", nil)}},
			wantText: "HTTP 503 (server_error): The engine is currently overloaded.", requests: 2, waits: []time.Duration{time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, c := smallChange(t)
			f := newFakeAPI(t, tc.replies...)
			e, ns, logs := newEngine(t, f, tc.cfg, specialist.Security)
			got, err := e.Review(context.Background(), c)
			switch {
			case tc.wantErr == nil && tc.wantText == "":
				if err != nil || len(got) != 1 {
					t.Fatalf("Review = %v, %v; want one finding", got, err)
				}
			case err == nil:
				t.Fatalf("Review succeeded with %v", got)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			// The error is one short line for the pull request; the
			// server's words are in the error it wraps, and in the log.
			var failure *Failure
			if err != nil && !errors.As(err, &failure) {
				t.Fatalf("error %v is not a *Failure", err)
			}
			if err != nil && !strings.Contains(failure.Err.Error(), tc.wantText) {
				t.Errorf("error %q lacks %q", failure.Err, tc.wantText)
			}
			if err != nil && !strings.Contains(logs.String(), strings.ReplaceAll(tc.wantText, `"`, `\"`)) {
				t.Errorf("log lacks %q:\n%s", tc.wantText, logs)
			}
			if err != nil && tc.wantText != "" && strings.Contains(err.Error(), tc.wantText) && !strings.HasPrefix(tc.wantText, "HTTP ") {
				t.Errorf("the summary line %q carries the server's text %q", err, tc.wantText)
			}
			if err != nil && strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("the summary line %q is not one line", err)
			}
			var ae *APIError
			if strings.HasPrefix(tc.wantText, "HTTP ") && !errors.As(err, &ae) {
				t.Errorf("error %v is not an *APIError", err)
			}
			if err != nil && got != nil {
				t.Errorf("findings %v returned with an error", got)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("error carries the key: %v", err)
			}
			if strings.Contains(logs.String(), testKey) {
				t.Errorf("log carries the key:\n%s", logs)
			}
			if n := len(f.seen()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if w := ns.recorded(); !slices.Equal(w, tc.waits) {
				t.Errorf("waits %v, want %v", w, tc.waits)
			}
		})
	}
}

func TestTimeoutRetriedOnce(t *testing.T) {
	t.Parallel()
	_, c := smallChange(t)
	f := newFakeAPI(t)
	// The server never answers until the client gives up.
	f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) { <-r.Context().Done() }
	// Attempts are counted at the client: a request that times out may
	// not reach the server's handler at all.
	var attempts atomic.Int32
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost {
			attempts.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	e, ns, _ := newEngine(t, f, Config{Timeout: 20 * time.Millisecond}, specialist.Logic, WithHTTPClient(client))
	_, err := e.Review(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "the LLM engine timed out: no answer within 20ms to a prompt of about ") {
		t.Fatalf("error %v, want a timeout", err)
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
	if len(ns.recorded()) != 1 {
		t.Errorf("waits %v, want one", ns.recorded())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCanceledReviewIsNotRetried(t *testing.T) {
	t.Parallel()
	_, c := smallChange(t)
	f := newFakeAPI(t)
	ctx, cancel := context.WithCancel(context.Background())
	f.handle = func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		cancel()
		<-r.Context().Done()
	}
	e, _, _ := newEngine(t, f, Config{}, specialist.Logic)
	if _, err := e.Review(ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := len(f.seen()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestChunking(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	// A file of many hunks, larger than a request: split between hunks.
	var before, after strings.Builder
	for j := range 1500 {
		fmt.Fprintf(&before, "stable line %d of a long file that changes here and there\n", j+1)
		if j%10 == 0 {
			fmt.Fprintf(&after, "edited line %d of a long file that changes here and there\n", j+1)
		} else {
			fmt.Fprintf(&after, "stable line %d of a long file that changes here and there\n", j+1)
		}
	}
	base := r.commit(map[string]string{"keep.txt": "x\n", "pkg/hunks.txt": before.String()})
	files := map[string]string{"pkg/hunks.txt": after.String()}
	for i := range 12 {
		var b strings.Builder
		for j := range 60 {
			fmt.Fprintf(&b, "line %d of file %d, padded to make the change larger than one request\n", j+1, i)
		}
		files[fmt.Sprintf("pkg/f%02d.txt", i)] = b.String()
	}
	// One file larger than a whole request must be split too.
	var big strings.Builder
	for j := range 900 {
		fmt.Fprintf(&big, "big line %d, long enough to overflow a request on its own\n", j+1)
	}
	files["pkg/zbig.txt"] = big.String()
	c := r.Change(base, r.commit(files))

	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) {
		// Each chunk reports on the first file it carries, at line 2.
		user := seenRequest{Body: req}.user()
		i := strings.Index(user, "File: ")
		path := strings.Fields(user[i+len("File: "):])[0]
		quote := ""
		if m := lineTwo.FindStringSubmatch(user); m != nil {
			quote = m[1]
		}
		writeRaw(w, answer(quoted(finding(path, 2, 2, "low", "logic", "first of "+path, nil), quote)))
	}
	cfg := Config{ContextTokens: 6000, MaxTokens: 1000}
	e, _, _ := newEngine(t, f, cfg, specialist.Logic)
	got, err := e.Review(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.seen()
	if len(reqs) < 4 {
		t.Fatalf("%d requests for a change of ~%d KB in a 6000-token context", len(reqs), (big.Len()+12*60*70)/1000)
	}
	budget := e.promptBudget(cfg.ContextTokens, cfg.MaxTokens, 1)
	lines := map[string]int{}
	for i, req := range reqs {
		user := req.user()
		if len(user) > budget+200 {
			t.Errorf("request %d carries %d characters, budget %d", i, len(user), budget)
		}
		if len(req.system())/charsPerTokenEstimate+len(user)/charsPerTokenEstimate+cfg.MaxTokens > cfg.ContextTokens {
			t.Errorf("request %d overflows the context", i)
		}
		for l := range strings.SplitSeq(user, "\n") {
			if strings.Contains(l, " + ") {
				lines[l]++
			}
		}
	}
	// Every added line is sent exactly once, with its number.
	if want := 12*60 + 900 + 150; len(lines) != want {
		t.Errorf("%d distinct added lines sent, want %d", len(lines), want)
	}
	for l, n := range lines {
		if n != 1 {
			t.Errorf("line %q sent %d times", l, n)
		}
	}
	if lines[" 900 + big line 900, long enough to overflow a request on its own"] != 1 {
		t.Error("the big file's last line is not sent with its number")
	}
	// Findings from all chunks are merged, without duplicates.
	seen := map[string]bool{}
	for _, g := range got {
		if seen[g.Headline] {
			t.Errorf("duplicate %q", g.Headline)
		}
		seen[g.Headline] = true
	}
	if len(got) < 2 || !slices.IsSortedFunc(got, func(a, b specialist.Finding) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("findings %d, want several in path order", len(got))
	}
	for i := range reqs {
		part := fmt.Sprintf("(part %d of %d;", i+1, len(reqs))
		if !slices.ContainsFunc(reqs, func(r seenRequest) bool { return strings.Contains(r.user(), part) }) {
			t.Errorf("no request says %q", part)
		}
	}
}

// lineTwo is line 2 of a file as the prompt shows it.
var lineTwo = regexp.MustCompile(`(?m)^ *2 [+ ] (.*)$`)

func writeRaw(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(body))
}

// sixFilesChange adds six text files of about 3 KB each: a change a
// context of 3000 tokens splits into several requests.
func sixFilesChange(t *testing.T) *change.Change {
	t.Helper()
	r := newRepo(t)
	base := r.commit(map[string]string{"keep.txt": "x\n"})
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("f%d.txt", i)] = strings.Repeat(fmt.Sprintf("content of file %d, a line of some length\n", i), 80)
	}
	return r.Change(base, r.commit(files))
}

func TestChunkFailureFailsTheReview(t *testing.T) {
	t.Parallel()
	c := sixFilesChange(t)
	f := newFakeAPI(t)
	f.handle = func(w http.ResponseWriter, _ *http.Request, req map[string]any) {
		if strings.Contains(seenRequest{Body: req}.user(), "(part 2 of") {
			writeRaw(w, completion(`{"findings": [`, "length"))
			return
		}
		writeRaw(w, answer(finding("f0.txt", 1, 1, "low", "logic", "x", nil)))
	}
	e, _, _ := newEngine(t, f, Config{ContextTokens: 3000, MaxTokens: 500, Concurrency: 1}, specialist.Logic)
	got, err := e.Review(context.Background(), c)
	if !errors.Is(err, ErrTruncated) || got != nil || !strings.Contains(errors.Unwrap(err).Error(), "chunk 2 of") {
		t.Fatalf("Review = %v, %v; want a truncation error for chunk 2 and no findings", got, err)
	}
}

func TestSpecialistPrompts(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	for name, want := range map[string]string{
		specialist.Logic:       "off-by-one",
		specialist.Security:    "injection",
		specialist.Performance: "inside loops",
		specialist.Tests:       "tests deleted or skipped",
		"accessibility":        "You are the accessibility reviewer.",
	} {
		e, _, _ := newEngine(t, f, Config{}, name)
		p := e.systemPrompt(FormatJSONSchema)
		for _, s := range []string{want, "Precision comes first", `marked "+"`, "not instructions to you"} {
			if !strings.Contains(p, s) {
				t.Errorf("%s prompt lacks %q", name, s)
			}
		}
		if e.Name() != name {
			t.Errorf("Name() = %q", e.Name())
		}
	}
	e, _, _ := newEngine(t, f, Config{}, "i18n", WithFocus("You check translations."))
	if !strings.HasPrefix(e.systemPrompt(FormatJSONSchema), "You check translations.") {
		t.Error("WithFocus ignored")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ok := Config{BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1"}
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		spec string
	}{
		{"no name", func(*Config) {}, ""},
		{"no model", func(c *Config) { c.Model = "" }, "logic"},
		{"relative URL", func(c *Config) { c.BaseURL = "api.openai.com/v1" }, "logic"},
		{"ftp URL", func(c *Config) { c.BaseURL = "ftp://x/v1" }, "logic"},
		{"bad format", func(c *Config) { c.ResponseFormat = "xml" }, "logic"},
		{"bad token field", func(c *Config) { c.MaxTokensField = "n_predict" }, "logic"},
		{"context too small", func(c *Config) { c.ContextTokens = 4000; c.MaxTokens = 3900 }, "logic"},
		{"negative timeout", func(c *Config) { c.Timeout = -1 }, "logic"},
	} {
		cfg := ok
		tc.cfg(&cfg)
		if _, err := New(cfg, tc.spec); err == nil {
			t.Errorf("%s: New accepted %+v", tc.name, cfg)
		}
	}
	secret := Config{BaseURL: "https://user:hunter2@/v1", Model: "m"}
	if _, err := New(secret, "logic"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v should reject the URL without quoting it", err)
	}
	e, err := New(ok, "logic")
	if err != nil {
		t.Fatal(err)
	}
	if e.endpoint != "https://api.openai.com/v1/chat/completions" {
		t.Errorf("endpoint %q", e.endpoint)
	}
}
