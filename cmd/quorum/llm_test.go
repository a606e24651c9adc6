package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/llm"
	"github.com/quorum-review/quorum/internal/specialist"
)

func init() {
	// The engine waits a second before retrying a 5xx; tests never sleep.
	// Set once, before any test runs, and only read afterwards.
	llmTestOptions = []llm.Option{llm.WithClock(time.Now, func(ctx context.Context, _ time.Duration) error { return ctx.Err() })}
}

// chatDouble is an in-process server speaking OpenAI's chat-completions
// protocol as far as quorum uses it: POST {base}/chat/completions with a
// JSON body, answered by a chat completion object or by the error object
// {"error": {"message", "type", "param", "code"}}.
type chatDouble struct {
	srv *httptest.Server
	// answer says how to answer a request of the named specialist: an
	// HTTP status, and for 200 the message's content.
	answer func(specialist string) (status int, content string)

	mu   sync.Mutex
	seen []chatSeen
}

// chatSeen is one request the double received.
type chatSeen struct {
	Path, Auth, APIKey string
	Body               map[string]any
	System, User       string
	Specialist         string
}

var reviewerRe = regexp.MustCompile(`^You are the (\w+) reviewer`)

func newChatDouble(t *testing.T, answer func(specialist string) (int, string)) *chatDouble {
	t.Helper()
	d := &chatDouble{answer: answer}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *chatDouble) baseURL() string { return d.srv.URL + "/v1" }

func (d *chatDouble) requests() []chatSeen {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

func (d *chatDouble) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	s := chatSeen{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), APIKey: r.Header.Get("api-key")}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeAPIError(w, http.StatusNotFound, "invalid_request_error", "no such endpoint")
		return
	}
	if err := json.Unmarshal(data, &s.Body); err != nil {
		writeAPIError(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON")
		return
	}
	msgs, _ := s.Body["messages"].([]any)
	text := func(i int) string {
		if i >= len(msgs) {
			return ""
		}
		m, _ := msgs[i].(map[string]any)
		c, _ := m["content"].(string)
		return c
	}
	s.System, s.User = text(0), text(1)
	if m := reviewerRe.FindStringSubmatch(s.System); m != nil {
		s.Specialist = m[1]
		if s.Specialist == "test" { // "You are the test reviewer."
			s.Specialist = specialist.Tests
		}
	}
	d.mu.Lock()
	d.seen = append(d.seen, s)
	d.mu.Unlock()

	status, content := d.answer(s.Specialist)
	if status != http.StatusOK {
		writeAPIError(w, status, "server_error", content)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": s.Body["model"],
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content, "refusal": nil},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

func writeAPIError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

// findingsAnswer is the answer the findings schema asks for, with one
// finding.
func findingsAnswer(path string, line int, severity, category, headline string) string {
	b, _ := json.Marshal(map[string]any{"findings": []any{map[string]any{
		"path": path, "line": line, "end_line": line, "severity": severity, "category": category,
		"headline": headline, "body": "Use a placeholder.", "quote": llmRepoLines[path+":"+strconv.Itoa(line)], "suggested_replacement": nil,
	}}})
	return string(b)
}

const noFindings = `{"findings": []}`

// llmRepo's change adds an AWS key to a config file (the built-in security
// engine finds it on line 3) and a Python query built by concatenation on
// line 4 of db/users.py (which ruff's S608 finds too; the LLM double
// reports there what no built-in engine does, llmOnlyHeadline). The base's
// .quorum.yaml gives an instruction for db/**; the head's changes it, which
// must not count.
func llmRepo(t *testing.T) string {
	t.Helper()
	return gitRepo(t,
		map[string]string{
			"README.md":    "# demo\n",
			".quorum.yaml": "version: 1\ninstructions:\n  - path: \"db/**\"\n    text: \"Queries must use placeholders (base instruction).\"\n",
		},
		map[string]string{
			".quorum.yaml":   "version: 1\ninstructions:\n  - path: \"db/**\"\n    text: \"Anything goes (head instruction).\"\n",
			"config/app.ini": "[aws]\nregion = eu-west-1\naccess_key_id = AKIAIOSFODNN7EXAMPLA\n",
			"db/users.py":    "import sqlite3\n\ndef find(conn, name):\n    return conn.execute(\"SELECT * FROM users WHERE name = '\" + name + \"'\")\n",
		})
}

// llmRepoLines are the lines of llmRepo's head a model quotes, by
// path:line.
var llmRepoLines = map[string]string{
	"db/users.py:4": `    return conn.execute("SELECT * FROM users WHERE name = '" + name + "'")`,
}

// llmOnlyHeadline is the LLM double's finding on db/users.py:4 that no
// built-in engine reports: a model's repeat of a built-in finding would be
// dropped.
const llmOnlyHeadline = "find returns a cursor, not the user it looks for"

const llmKey = "sk-test-0123456789abcdefSECRET"

func reviewRunEnv(t *testing.T, getenv func(string) string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"review"}, args...), getenv, &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

type jsonFinding struct {
	Specialist, Severity, Category, Path, Headline string
	Line                                           int
}

func reviewFindings(t *testing.T, out string) (summary string, fs []jsonFinding) {
	t.Helper()
	var r struct {
		Summary  string
		Findings []jsonFinding
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return r.Summary, r.Findings
}

// TestReviewLLMFinding: with --llm-base-url, the security specialist also
// asks the endpoint; the double's finding lands on its changed line beside
// the built-in engine's, under one specialist. The key from the named
// variable reaches the server as a Bearer token and is never printed; the
// base's instructions reach the prompt, the head's do not.
func TestReviewLLMFinding(t *testing.T) {
	t.Parallel()
	dir := llmRepo(t)
	for _, tc := range []struct {
		name       string
		args       []string
		wantFormat string
		wantField  string
		fenced     bool
		wantStream bool
	}{
		{"json_schema", nil, llm.FormatJSONSchema, llm.MaxTokens, false, true},
		{"json_object", []string{"--llm-response-format", "json_object", "--llm-max-tokens-field", "max_completion_tokens", "--llm-stream=false"}, llm.FormatJSONObject, llm.MaxCompletionTokens, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newChatDouble(t, func(sp string) (int, string) {
				if sp != specialist.Security {
					return 200, noFindings
				}
				a := findingsAnswer("db/users.py", 4, "high", "logic", llmOnlyHeadline)
				if tc.fenced {
					a = "```json\n" + a + "\n```"
				}
				return 200, a
			})
			getenv := env("MY_LLM_KEY", llmKey, "QUORUM_LLM_MODEL", "test-model")
			args := append([]string{"--repo", dir, "--format", "json", "--fail-on", "never",
				"--llm-base-url", d.baseURL(), "--llm-api-key-env", "MY_LLM_KEY", "--llm-specialists", "security"}, tc.args...)
			out, errOut, code := reviewRunEnv(t, getenv, args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, errOut)
			}
			summary, fs := reviewFindings(t, out)
			var llmF, builtinF *jsonFinding
			for i, f := range fs {
				switch f.Headline {
				case llmOnlyHeadline:
					llmF = &fs[i]
				default:
					if f.Path == "config/app.ini" {
						builtinF = &fs[i]
					}
				}
			}
			if llmF == nil || llmF.Specialist != "security" || llmF.Path != "db/users.py" || llmF.Line != 4 || llmF.Severity != "high" {
				t.Errorf("LLM finding = %+v, want security high at db/users.py:4; findings %+v", llmF, fs)
			}
			if builtinF == nil || builtinF.Specialist != "security" || builtinF.Line != 3 {
				t.Errorf("built-in finding = %+v, want the AWS key at config/app.ini:3; findings %+v", builtinF, fs)
			}
			// The AWS key, ruff's S608 and the model's finding.
			if !strings.Contains(summary, "security 3") {
				t.Errorf("summary does not count both engines' findings under security once:\n%s", summary)
			}
			if !strings.Contains(errOut, "security (built-in + LLM)") {
				t.Errorf("stderr does not say security uses both engines:\n%s", errOut)
			}

			reqs := d.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1 (only security uses the LLM): %+v", len(reqs), reqs)
			}
			r := reqs[0]
			if r.Auth != "Bearer "+llmKey {
				t.Errorf("Authorization = %q, want the key from MY_LLM_KEY as Bearer", r.Auth)
			}
			if r.Specialist != "security" || r.Body["model"] != "test-model" {
				t.Errorf("request for %q with model %v, want security and test-model (from QUORUM_LLM_MODEL)", r.Specialist, r.Body["model"])
			}
			rf, _ := r.Body["response_format"].(map[string]any)
			if rf["type"] != tc.wantFormat {
				t.Errorf("response_format = %v, want type %s", rf, tc.wantFormat)
			}
			if _, ok := r.Body[tc.wantField]; !ok {
				t.Errorf("request has no %s: %v", tc.wantField, r.Body)
			}
			if streamed := r.Body["stream"] == true; streamed != tc.wantStream {
				t.Errorf("request streamed %v, want %v", streamed, tc.wantStream)
			}
			// The head's .quorum.yaml is in the diff, as any changed file,
			// but only the base's instruction is given as one.
			if !strings.Contains(r.User, "File: db/users.py (added)\nInstructions from the repository for this file:\n- Queries must use placeholders (base instruction).\n@@") {
				t.Errorf("prompt lacks the base's instruction for db/users.py:\n%s", r.User)
			}
			if regexp.MustCompile(`(?m)^- Anything goes`).MatchString(r.User) {
				t.Errorf("prompt has the head's instruction:\n%s", r.User)
			}
			if strings.Contains(out+errOut, llmKey) || strings.Contains(out+errOut, "SECRET") {
				t.Errorf("the API key is printed:\nstdout:\n%s\nstderr:\n%s", out, errOut)
			}
		})
	}
}

// TestReviewLLMDefaultServesEveryEnabled: without --llm-specialists, every
// specialist the repository enables uses the LLM, and the base URL can
// come from the environment.
func TestReviewLLMDefaultServesEveryEnabled(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t,
		map[string]string{"README.md": "# demo\n", ".quorum.yaml": "version: 1\nspecialists: [logic, tests]\n"},
		map[string]string{"docs/guide.md": "# Guide\n"})
	d := newChatDouble(t, func(string) (int, string) { return 200, noFindings })
	_, errOut, code := reviewRunEnv(t, env("QUORUM_LLM_BASE_URL", d.baseURL(), "QUORUM_LLM_MODEL", "m", "QUORUM_LLM_MODE", "instead"), "--repo", dir)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var got []string
	for _, r := range d.requests() {
		got = append(got, r.Specialist)
		if r.Auth != "" {
			t.Errorf("Authorization %q sent without a key", r.Auth)
		}
	}
	slices.Sort(got)
	if strings.Join(got, ",") != "logic,tests" {
		t.Errorf("specialists that asked the LLM: %v, want logic and tests", got)
	}
	if !strings.Contains(errOut, "with logic (LLM), tests (LLM)") || !strings.Contains(errOut, "QUORUM_LLM_API_KEY is empty") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestReviewLLMKnownFindings: the security model is told, under the
// change, what the built-in engines report (the AWS key, ruff's S608); its
// repeats of them are dropped, and --llm-max-findings-per-file caps what is
// left; the engine's note counts both.
func TestReviewLLMKnownFindings(t *testing.T) {
	t.Parallel()
	dir := llmRepo(t)
	d := newChatDouble(t, func(sp string) (int, string) {
		if sp != specialist.Security {
			return 200, noFindings
		}
		f := func(path string, line int, severity, category, headline, quote string) map[string]any {
			return map[string]any{"path": path, "line": line, "end_line": line, "severity": severity, "category": category,
				"headline": headline, "body": "Fix it.", "quote": quote, "suggested_replacement": nil}
		}
		b, _ := json.Marshal(map[string]any{"findings": []any{
			f("config/app.ini", 3, "critical", "security", "AWS access key committed to the repository", "access_key_id = AKIAIOSFODNN7EXAMPLA"),
			f("db/users.py", 4, "high", "security", "SQL query built by string concatenation", llmRepoLines["db/users.py:4"]),
			f("db/users.py", 4, "high", "logic", llmOnlyHeadline, llmRepoLines["db/users.py:4"]),
			f("db/users.py", 3, "low", "logic", "find takes any name", "def find(conn, name):"),
		}})
		return 200, string(b)
	})
	out, errOut, code := reviewRunEnv(t, env(), "--repo", dir, "--format", "json", "--fail-on", "never",
		"--llm-base-url", d.baseURL(), "--llm-model", "m", "--llm-specialists", "security", "--llm-max-findings-per-file", "1")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	reqs := d.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	list := regexp.MustCompile(`(?m)^Already reported by quorum's built-in analyzers on these files \(do not report these again\):\n- config/app\.ini:3 gitleaks:\S+: .+\n- db/users\.py:4 ruff:S608: .+$`)
	if !list.MatchString(reqs[0].User) || !strings.Contains(reqs[0].System, "do not report them again") {
		t.Errorf("the model is not told of the built-in findings:\nsystem:\n%s\nuser:\n%s", reqs[0].System, reqs[0].User)
	}
	summary, fs := reviewFindings(t, out)
	var got []string
	for _, f := range fs {
		got = append(got, f.Path+":"+strconv.Itoa(f.Line)+" "+f.Headline)
	}
	if len(got) != 3 || !slices.Contains(got, "db/users.py:4 "+llmOnlyHeadline) || !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, "config/app.ini:3 ") }) ||
		slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, "concatenation") || strings.Contains(g, "any name") }) {
		t.Errorf("findings %q, want the built-in AWS key and S608 and the model's one finding of its own", got)
	}
	for _, want := range []string{
		"2 of the model's findings were dropped: the built-in engines already report them",
		"1 finding beyond 1 per file was left out, the most severe kept (--llm-max-findings-per-file)",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary does not say %q:\n%s", want, summary)
		}
	}
	if strings.Contains(summary, "Also found by") {
		t.Errorf("the model's repeat reached synthesis:\n%s", summary)
	}
}

// TestReviewLLMFailsAlso: the LLM endpoint answers 500 (twice: one retry);
// with mode also the built-in findings stand, security still counts as
// succeeded, and the summary says the LLM engine failed.
func TestReviewLLMFailsAlso(t *testing.T) {
	t.Parallel()
	dir := leakRepo(t)
	d := newChatDouble(t, func(string) (int, string) { return 500, "the server had an error" })
	out, errOut, code := reviewRunEnv(t, env(llm.APIKeyEnv, llmKey), "--repo", dir, "--format", "json",
		"--llm-base-url", d.baseURL(), "--llm-model", "m", "--llm-specialists", "security")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the built-in critical finding); stderr:\n%s", code, errOut)
	}
	if n := len(d.requests()); n != 2 {
		t.Errorf("%d requests, want 2 (a 500 is retried once)", n)
	}
	summary, fs := reviewFindings(t, out)
	if len(fs) != 1 || fs[0].Specialist != "security" || fs[0].Path != "config/app.ini" || fs[0].Line != 3 {
		t.Errorf("findings = %+v, want the built-in AWS key finding", fs)
	}
	for _, want := range []string{
		"Findings by specialist: logic 0, security 1, performance 0, tests 0.",
		"Engine notes:\n- security: the LLM engine was unavailable: HTTP 500; only the built-in engine's findings are reported.",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary does not contain %q:\n%s", want, summary)
		}
	}
	if strings.Contains(summary, "Did not finish") {
		t.Errorf("security counted as failed:\n%s", summary)
	}
	if !strings.Contains(errOut, "quorum: security    the LLM engine was unavailable: HTTP 500") {
		t.Errorf("stderr does not report the LLM failure:\n%s", errOut)
	}
	// The server's words are in the log (stderr), not in the summary.
	if strings.Contains(summary, "the server had an error") || !strings.Contains(errOut, "the server had an error") {
		t.Errorf("the server's text is in the summary or not in the log; summary:\n%s\nstderr:\n%s", summary, errOut)
	}
	if strings.Contains(out+errOut, llmKey) {
		t.Errorf("the API key is printed")
	}
}

// TestReviewLLMBudget: --llm-max-tokens-per-review bounds what one review's
// specialists send together: with too small a budget nothing is sent, and
// the summary says why in one line per specialist.
func TestReviewLLMBudget(t *testing.T) {
	t.Parallel()
	dir := leakRepo(t)
	d := newChatDouble(t, func(string) (int, string) { return 200, noFindings })
	out, errOut, code := reviewRunEnv(t, env(), "--repo", dir, "--format", "json", "--fail-on", "never",
		"--llm-base-url", d.baseURL(), "--llm-model", "m", "--llm-specialists", "security,logic", "--llm-max-tokens-per-review", "3000")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	if n := len(d.requests()); n != 0 {
		t.Errorf("%d requests sent, want none: each could take more than the budget", n)
	}
	summary, _ := reviewFindings(t, out)
	for _, sp := range []string{"logic", "security"} {
		want := "- " + sp + ": the LLM engine sent nothing: the review's budget of 3,000 tokens was spent (--llm-max-tokens-per-review); only the built-in engine's findings are reported."
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}

	// With the default budget the same review sends its requests.
	d = newChatDouble(t, func(string) (int, string) { return 200, noFindings })
	if _, errOut, code := reviewRunEnv(t, env(), "--repo", dir, "--format", "json", "--fail-on", "never",
		"--llm-base-url", d.baseURL(), "--llm-model", "m", "--llm-specialists", "security,logic"); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	if n := len(d.requests()); n != 2 {
		t.Errorf("%d requests sent with the default budget, want 2", n)
	}
}

// TestReviewLLMFailsInstead: with mode instead, the LLM failing is the
// specialist failing, and the quorum decides.
func TestReviewLLMFailsInstead(t *testing.T) {
	t.Parallel()
	dir := leakRepo(t)
	fail := func(string) (int, string) { return 503, "overloaded" }

	t.Run("quorum met", func(t *testing.T) {
		t.Parallel()
		d := newChatDouble(t, fail)
		out, errOut, code := reviewRunEnv(t, env(), "--repo", dir, "--format", "json",
			"--llm-base-url", d.baseURL(), "--llm-model", "m", "--llm-specialists", "security", "--llm-mode", "instead")
		if code != 3 {
			t.Fatalf("exit %d, want 3 (the built-in security engine, which finds the key, did not run, and security did not finish); stderr:\n%s", code, errOut)
		}
		summary, fs := reviewFindings(t, out)
		if len(fs) != 0 {
			t.Errorf("findings = %+v, want none", fs)
		}
		if want := "Did not finish: security (the LLM engine was unavailable: HTTP 503). The review went ahead with 3 of 4 specialists (quorum 3)"; !strings.Contains(summary, want) {
			t.Errorf("summary does not contain %q:\n%s", want, summary)
		}
		if n := len(d.requests()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
	t.Run("quorum not met", func(t *testing.T) {
		t.Parallel()
		d := newChatDouble(t, fail)
		out, errOut, code := reviewRunEnv(t, env(), "--repo", dir,
			"--llm-base-url", d.baseURL(), "--llm-model", "m", "--llm-specialists", "security,logic", "--llm-mode", "instead")
		if code != 2 || out != "" {
			t.Fatalf("exit %d, stdout %q, want 2 and nothing; stderr:\n%s", code, out, errOut)
		}
		for _, want := range []string{"2 of 4 specialists succeeded, and 3 must (quorum)", "the review could not run (quorum_failure)"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr does not contain %q:\n%s", want, errOut)
			}
		}
	})
}

// TestReviewLLMFlagErrors: bad values are usage errors naming the flag,
// before anything is reviewed or sent.
func TestReviewLLMFlagErrors(t *testing.T) {
	t.Parallel()
	dir := leakRepo(t)
	d := newChatDouble(t, func(string) (int, string) { return 200, noFindings })
	ok := []string{"--repo", dir, "--fail-on", "never", "--llm-model", "m"}
	for _, tc := range []struct {
		name   string
		args   []string
		getenv func(string) string
		want   string
	}{
		{"base URL not http", []string{"--llm-base-url", "ftp://example.com/v1"}, env(), "--llm-base-url: want an absolute http or https URL"},
		{"base URL without scheme", []string{"--llm-base-url", "localhost:11434/v1"}, env(), "--llm-base-url: want an absolute http or https URL"},
		{"base URL from env", nil, env("QUORUM_LLM_BASE_URL", "file:///etc/passwd"), "--llm-base-url: want an absolute http or https URL"},
		{"no model", []string{"--llm-base-url", d.baseURL(), "--llm-model", ""}, env(), "--llm-model: required with --llm-base-url"},
		{"mode", []string{"--llm-base-url", d.baseURL(), "--llm-mode", "both"}, env(), `--llm-mode: want also or instead, got "both"`},
		{"mode from env, engine off", nil, env("QUORUM_LLM_MODE", "sometimes"), `--llm-mode: want also or instead, got "sometimes"`},
		{"response format", []string{"--llm-base-url", d.baseURL(), "--llm-response-format", "text"}, env(), "--llm-response-format: want json_schema, json_object or prompt"},
		{"context tokens negative", []string{"--llm-base-url", d.baseURL(), "--llm-context-tokens", "-1"}, env(), "--llm-context-tokens: want 0 (ask the server) or a number of tokens"},
		{"max tokens negative", []string{"--llm-base-url", d.baseURL(), "--llm-max-tokens", "-5"}, env(), "--llm-max-tokens: want 0 (the default) or a number of tokens"},
		{"context too small for the answer", []string{"--llm-base-url", d.baseURL(), "--llm-context-tokens", "2000", "--llm-max-tokens", "1900"}, env(), "--llm-context-tokens, --llm-max-tokens: the model's context of 2000 tokens (configured) leaves too little room"},
		{"max tokens per review negative", []string{"--llm-base-url", d.baseURL(), "--llm-max-tokens-per-review", "-1"}, env(), "--llm-max-tokens-per-review: want 0 (no bound) or a number of tokens"},
		{"max findings per file zero", []string{"--llm-base-url", d.baseURL(), "--llm-max-findings-per-file", "0"}, env(), "--llm-max-findings-per-file: want a number of findings, 1 or more, got 0"},
		{"max tokens field", []string{"--llm-base-url", d.baseURL(), "--llm-max-tokens-field", "tokens"}, env(), "--llm-max-tokens-field: want max_completion_tokens or max_tokens"},
		{"timeout zero", []string{"--llm-base-url", d.baseURL(), "--llm-timeout", "0s"}, env(), "--llm-timeout: want a positive duration"},
		{"timeout not a duration", []string{"--llm-timeout", "soon"}, env(), "llm-timeout"},
		{"unknown specialist", []string{"--llm-base-url", d.baseURL(), "--llm-specialists", "security,style"}, env(), `--llm-specialists: unknown specialist "style"`},
		{"key in place of its variable's name", []string{"--llm-base-url", d.baseURL(), "--llm-api-key-env", llmKey}, env(), "--llm-api-key-env: want the name of an environment variable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := reviewRunEnv(t, tc.getenv, append(slices.Clone(ok), tc.args...)...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", code, out, errOut, tc.want)
			}
			if strings.Contains(errOut, "started") {
				t.Errorf("specialists ran:\n%s", errOut)
			}
			if strings.Contains(errOut, llmKey) {
				t.Errorf("the error prints the key:\n%s", errOut)
			}
		})
	}
	if n := len(d.requests()); n != 0 {
		t.Errorf("%d requests sent despite bad flags", n)
	}
}

// TestReviewLLMHelp: every LLM flag says what it does and its variable.
func TestReviewLLMHelp(t *testing.T) {
	t.Parallel()
	out, _, code := reviewRunEnv(t, env(), "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"llm-base-url", "llm-model", "llm-api-key-env", "llm-specialists", "llm-mode", "llm-timeout", "llm-response-format", "llm-max-tokens-field", "llm-context-tokens", "llm-max-tokens", "llm-max-tokens-per-review", "llm-max-findings-per-file"} {
		envVar := "QUORUM_" + strings.ToUpper(strings.ReplaceAll(f, "-", "_"))
		if !regexp.MustCompile(`(?m)^  --` + f + `\b.*\n      \S.*env ` + envVar + `\)$`).MatchString(out) {
			t.Errorf("help has no documented --%s with env %s:\n%s", f, envVar, out)
		}
	}
}

// TestServeLLM: serve's review worker uses the LLM engine as review does,
// with the key from the named variable and the key header the flag names;
// an engine that fails is an engine problem in the stored summary, not a
// lost review.
func TestServeLLM(t *testing.T) {
	t.Parallel()
	dir := llmRepo(t)
	d := newChatDouble(t, func(sp string) (int, string) {
		switch sp {
		case specialist.Security:
			return 200, findingsAnswer("db/users.py", 4, "high", "logic", llmOnlyHeadline)
		case specialist.Logic:
			return 500, "the server had an error"
		}
		return 200, noFindings
	})
	getenv := env("MY_LLM_KEY", llmKey)
	base := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD~1"))
	head := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	full := serveReview(t, getenv, dir, base, head, "--llm-base-url", d.baseURL(), "--llm-model", "test-model",
		"--llm-api-key-env", "MY_LLM_KEY", "--llm-api-key-header", "api-key", "--llm-specialists", "security,logic")
	if !hasFinding(full, "security", "db/users.py", 4) {
		t.Errorf("no LLM security finding on db/users.py:4 in %v", full["findings"])
	}
	// The finding says which model made it, in the stored provenance.
	for _, f := range full["findings"].([]any) {
		f := f.(map[string]any)
		if f["headline"] != llmOnlyHeadline {
			continue
		}
		p, _ := f["provenance"].(map[string]any)
		engines, _ := p["engines"].([]any)
		if p["model"] != "test-model" || !slices.Contains(engines, any("llm")) {
			t.Errorf("provenance of the LLM finding = %v, want the llm engine and model test-model", p)
		}
	}
	summary, _ := full["summary"].(string)
	if !strings.Contains(summary, "Engine notes:\n- logic: the LLM engine was unavailable: HTTP 500; only the built-in engine's findings are reported.") {
		t.Errorf("summary does not name the LLM engine's failure for logic:\n%s", summary)
	}
	reqs := d.requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests to the LLM, want security's and logic's", len(reqs))
	}
	for _, r := range reqs {
		if r.APIKey != llmKey || r.Auth != "" {
			t.Errorf("request carries api-key %q and Authorization %q, want the key in api-key only", r.APIKey, r.Auth)
		}
	}
}

// TestServeLLMSecondPush: the second push to a pull request, changing one
// of its three files, sends the model that file alone; the others' findings
// are reused from the first push's review, and its notes say so.
func TestServeLLMSecondPush(t *testing.T) {
	t.Parallel()
	dir := llmRepo(t)
	d := newChatDouble(t, func(sp string) (int, string) {
		return 200, findingsAnswer("db/users.py", 4, "high", "logic", llmOnlyHeadline)
	})
	base := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD~1"))
	head := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	users := "import sqlite3\n\ndef find(conn, name):\n    return conn.execute(\"SELECT * FROM users WHERE name = ?\", (name,))\n"
	if err := os.WriteFile(filepath.Join(dir, "db", "users.py"), []byte(users), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "commit", "-qam", "use a placeholder")
	pushed := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	reviews := serveReviews(t, env(), dir, base, []string{head, pushed}, "--llm-base-url", d.baseURL(), "--llm-model", "test-model",
		"--llm-specialists", "security")
	reqs := d.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (one per push)", len(reqs))
	}
	if !strings.Contains(reqs[1].User, "File: db/users.py (added)") || strings.Contains(reqs[1].User, "File: config/app.ini") || strings.Contains(reqs[1].User, "File: .quorum.yaml") {
		t.Errorf("the second push's request is not db/users.py alone:\n%s", reqs[1].User)
	}
	summary, _ := reviews[1]["summary"].(string)
	if want := "; it sent 1 file and reused its findings on 2 other files from an earlier review that showed it the same lines"; !strings.Contains(summary, want) {
		t.Errorf("the second review's summary lacks %q:\n%s", want, summary)
	}
}

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
