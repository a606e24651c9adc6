package pipeline

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/llm"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/logic"
)

// sameApp adds, on line 4, a comparison of a value with itself:
// staticcheck's SA4000.
const sameApp = `package app

func Same(a int) bool {
	return a == a
}
`

// sameAppChange is a pull request that adds sameApp to a Go module.
func sameAppChange(t *testing.T) *change.Change {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/app"), "app.go": "package app\n"})
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(map[string]string{"app.go": sameApp})
	r.Commit("feature")
	return prChange(t, r, "main", "feature")
}

// chatServer is an OpenAI-compatible chat-completions endpoint on loopback
// whose every answer is content.
func chatServer(t *testing.T, content string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// The real logic specialist (staticcheck's SA4000) and the LLM engine, on
// a loopback double, report `a == a` in their own words on the same line:
// synthesis makes one finding of it, at the higher severity, with both
// engines in its provenance. A model's finding of another category on the
// line stays apart. The LLM engine here was not told of the built-in
// finding (an llm.Also without a board, as when the engine's wait for the
// built-in engines runs out); Wire's engines drop such a repeat themselves
// (TestLLMRepeatOfBuiltinDropped).
func TestBuiltinAndLLMFindingMerge(t *testing.T) {
	t.Parallel()
	c := sameAppChange(t)

	for _, tc := range []struct {
		name     string
		llmLine  int
		quote    string // the code the model quotes
		category string
		want     int // findings
	}{
		{"same line", 4, "return a == a", "logic", 1},
		{"a line off", 5, "}", "logic", 1},
		{"other category", 4, "return a == a", "security", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer, _ := json.Marshal(map[string]any{"findings": []any{map[string]any{
				"path": "app.go", "line": tc.llmLine, "end_line": tc.llmLine, "severity": "high", "category": tc.category,
				"headline": "compares a with itself", "body": "a == a is always true.", "quote": tc.quote, "suggested_replacement": nil,
			}}})
			e, err := llm.New(llm.Config{BaseURL: chatServer(t, string(answer)), Model: "test-model"}, specialist.Logic)
			if err != nil {
				t.Fatal(err)
			}
			specs := []specialist.Specialist{&llm.Also{Builtin: logic.New(goanalysistest.Loader()), LLM: e}}
			o := opts()
			o.Quorum = 1
			res := Run(context.Background(), c, specs, o)
			if !res.Completed() {
				t.Fatalf("review failed: %s", res.Reason)
			}
			fs := res.Review.Findings
			for _, f := range fs {
				t.Logf("%s %s %s:%d %s [%s %s %s]", f.Specialist, f.Severity, f.Path, f.Line, f.Headline, f.Engine, f.Rule, f.Model)
			}
			if len(fs) != tc.want {
				t.Fatalf("%d findings, want %d", len(fs), tc.want)
			}
			if tc.want == 2 {
				return
			}
			f := fs[0]
			if f.Severity != "high" || f.Line != 4 || f.Engine != review.EngineBuiltin || f.Rule != "staticcheck:SA4000" || f.Model != "test-model" {
				t.Errorf("merged finding %+v: want high (the model's), on line 4, builtin staticcheck:SA4000 with model test-model", f)
			}
			if got := review.EnginesOf(f); !slices.Equal(got, []string{review.EngineBuiltin, review.EngineLLM}) {
				t.Errorf("engines %v, want both", got)
			}
			if !strings.Contains(f.Body, "Also found by logic (llm:logic).") {
				t.Errorf("body does not name the other engine: %q", f.Body)
			}
		})
	}
}

// TestLLMRepeatOfBuiltinDropped: wired by Wire, the LLM engine is told of
// staticcheck's SA4000 on `a == a` and drops its own report of it: the
// review has the built-in finding alone, and the engine's note counts the
// repeat.
func TestLLMRepeatOfBuiltinDropped(t *testing.T) {
	t.Parallel()
	c := sameAppChange(t)
	answer, _ := json.Marshal(map[string]any{"findings": []any{map[string]any{
		"path": "app.go", "line": 4, "end_line": 4, "severity": "high", "category": "logic",
		"headline": "compares a with itself", "body": "a == a is always true.", "quote": "return a == a", "suggested_replacement": nil,
	}}})
	w := llm.Wiring{Config: llm.Config{BaseURL: chatServer(t, string(answer)), Model: "test-model"}}
	specs, _, err := w.Wire([]specialist.Specialist{logic.New(goanalysistest.Loader())}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := opts()
	o.Quorum = 1
	res := Run(context.Background(), c, specs, o)
	if !res.Completed() {
		t.Fatalf("review failed: %s", res.Reason)
	}
	fs := res.Review.Findings
	if len(fs) != 1 || fs[0].Rule != "staticcheck:SA4000" || fs[0].Model != "" || strings.Contains(fs[0].Body, "Also found by") {
		t.Fatalf("findings %+v, want staticcheck's alone", fs)
	}
	if !strings.Contains(res.Review.Summary, "1 of the model's findings was dropped: the built-in engines already report them") {
		t.Errorf("summary does not count the dropped repeat:\n%s", res.Review.Summary)
	}
}
