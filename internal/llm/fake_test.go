package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeAPI is an in-process chat-completions server. It checks every request
// against OpenAI's API reference for POST /chat/completions
// (CreateChatCompletionRequest, ResponseFormatJsonSchema and the rules of
// strict structured outputs) and answers in the documented shapes: the
// chat completion object, or the error object {"error": {"message",
// "type", "param", "code"}}.
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests []seenRequest
	replies  []reply
	// handle, when set, answers instead of replies.
	handle func(w http.ResponseWriter, r *http.Request, req map[string]any)
	// models is what GET /v1/models answers; OpenAI's list, which says
	// nothing of the context window, by default.
	models     string
	modelAsked int
}

// seenRequest is one request the server received.
type seenRequest struct {
	Header http.Header
	Query  string
	Body   map[string]any
}

// system and user return the request's messages' text.
func (s seenRequest) system() string { return s.message(0) }
func (s seenRequest) user() string   { return s.message(1) }
func (s seenRequest) message(i int) string {
	msgs, _ := s.Body["messages"].([]any)
	if i >= len(msgs) {
		return ""
	}
	m, _ := msgs[i].(map[string]any)
	c, _ := m["content"].(string)
	return c
}

// reply is one canned response; the last one repeats.
type reply struct {
	status int
	header map[string]string
	body   string
}

func newFakeAPI(t *testing.T, replies ...reply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is the server's API base, as a user would configure it.
func (f *fakeAPI) baseURL() string { return f.srv.URL + "/v1" }

func (f *fakeAPI) seen() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		f.mu.Lock()
		f.modelAsked++
		models := f.models
		f.mu.Unlock()
		if models == "" {
			models = `{"object": "list", "data": [{"id": "test-model", "object": "model", "created": 1763865000, "owned_by": "system"}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, models)
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		// The client gave up while sending (a timeout test): nothing to check.
		return
	}
	var body map[string]any
	problems := checkRequest(r, data, &body)
	for _, p := range problems {
		f.t.Errorf("request breaks the API reference: %s", p)
	}
	f.mu.Lock()
	f.requests = append(f.requests, seenRequest{Header: r.Header.Clone(), Query: r.URL.RawQuery, Body: body})
	n := len(f.requests)
	handle := f.handle
	var rep reply
	if len(f.replies) > 0 {
		rep = f.replies[min(n, len(f.replies))-1]
	}
	f.mu.Unlock()
	if len(problems) > 0 {
		writeJSON(w, http.StatusBadRequest, apiErrorBody(strings.Join(problems, "; "), "invalid_request_error", nil))
		return
	}
	if handle != nil {
		handle(w, r, body)
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(orDefault(rep.status, http.StatusOK))
	io.WriteString(w, rep.body)
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// documentedRequestFields are CreateChatCompletionRequest's properties.
var documentedRequestFields = []string{
	"audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
	"max_completion_tokens", "max_tokens", "messages", "metadata", "modalities", "model", "n",
	"parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key", "reasoning_effort",
	"response_format", "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
	"stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user",
	"verbosity", "web_search_options",
}

var schemaName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// checkRequest lists how a request departs from the API reference (and
// from what quorum promises to send: temperature 0, one token limit).
func checkRequest(r *http.Request, data []byte, body *map[string]any) []string {
	var p []string
	if r.Method != http.MethodPost {
		p = append(p, "method "+r.Method)
	}
	if r.URL.Path != "/v1/chat/completions" {
		p = append(p, "path "+r.URL.Path)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		p = append(p, "content type "+ct)
	}
	if err := json.Unmarshal(data, body); err != nil {
		return append(p, "body is not a JSON object: "+err.Error())
	}
	b := *body
	for k := range b {
		if !slices.Contains(documentedRequestFields, k) {
			p = append(p, "undocumented field "+k)
		}
	}
	if m, ok := b["model"].(string); !ok || m == "" {
		p = append(p, "model missing or not a string")
	}
	msgs, ok := b["messages"].([]any)
	if !ok || len(msgs) == 0 {
		p = append(p, "messages missing or empty")
	}
	for i, m := range msgs {
		mm, ok := m.(map[string]any)
		if !ok {
			p = append(p, fmt.Sprintf("message %d not an object", i))
			continue
		}
		role, _ := mm["role"].(string)
		if !slices.Contains([]string{"developer", "system", "user", "assistant", "tool", "function"}, role) {
			p = append(p, fmt.Sprintf("message %d role %q", i, role))
		}
		if c, ok := mm["content"].(string); (role == "system" || role == "user" || role == "developer") && (!ok || c == "") {
			p = append(p, fmt.Sprintf("message %d has no text content", i))
		}
	}
	if t, ok := b["temperature"].(float64); !ok || t != 0 {
		p = append(p, fmt.Sprintf("temperature %v, want 0", b["temperature"]))
	}
	_, hasMT := b["max_tokens"]
	_, hasMCT := b["max_completion_tokens"]
	if hasMT == hasMCT {
		p = append(p, "want exactly one of max_tokens and max_completion_tokens")
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if v, ok := b[k]; ok {
			if n, ok := v.(float64); !ok || n < 1 || n != float64(int(n)) {
				p = append(p, k+" not a positive integer")
			}
		}
	}
	// response_format is optional: the engine leaves it out for a server
	// that rejected both json_schema and json_object.
	rf, ok := b["response_format"].(map[string]any)
	if !ok {
		if _, present := b["response_format"]; present {
			p = append(p, "response_format not an object")
		}
		return p
	}
	switch rf["type"] {
	case "json_schema":
		js, ok := rf["json_schema"].(map[string]any)
		if !ok {
			return append(p, "json_schema missing")
		}
		if name, _ := js["name"].(string); !schemaName.MatchString(name) {
			p = append(p, fmt.Sprintf("json_schema.name %q", js["name"]))
		}
		if s, ok := js["strict"]; ok {
			if _, ok := s.(bool); !ok {
				p = append(p, "json_schema.strict not a boolean")
			}
		}
		schema, ok := js["schema"].(map[string]any)
		if !ok {
			return append(p, "json_schema.schema not an object")
		}
		if schema["type"] != "object" {
			p = append(p, "strict schema's root is not an object")
		}
		if js["strict"] == true {
			p = append(p, checkStrict("schema", schema)...)
		}
	case "json_object":
		// The reference: the word JSON must appear in the conversation.
		if !strings.Contains(string(data), "JSON") {
			p = append(p, "json_object without JSON named in the messages")
		}
	default:
		p = append(p, fmt.Sprintf("response_format.type %v", rf["type"]))
	}
	return p
}

// checkStrict applies the strict-mode rules of structured outputs: every
// object lists all its properties as required and allows no others.
func checkStrict(at string, s map[string]any) []string {
	var p []string
	if props, ok := s["properties"].(map[string]any); ok {
		if s["additionalProperties"] != false {
			p = append(p, at+": additionalProperties is not false")
		}
		req, _ := s["required"].([]any)
		for k, v := range props {
			if !slices.Contains(req, any(k)) {
				p = append(p, at+": property "+k+" not required")
			}
			if sub, ok := v.(map[string]any); ok {
				p = append(p, checkStrict(at+"."+k, sub)...)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		p = append(p, checkStrict(at+"[]", items)...)
	}
	return p
}

// completion is a chat completion object whose one choice carries content.
func completion(content any, finish string) string {
	return completionWith(map[string]any{"role": "assistant", "content": content, "refusal": nil}, finish)
}

func completionWith(msg map[string]any, finish string) string {
	choices := []any{}
	if msg != nil {
		choices = append(choices, map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish})
	}
	b, _ := json.Marshal(map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": 1763865000,
		"model":   "test-model",
		"choices": choices,
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
	return string(b)
}

// answer is a completion whose content is the findings given.
func answer(findings ...map[string]any) string {
	if findings == nil {
		findings = []map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"findings": findings})
	return completion(string(b), "stop")
}

func apiErrorBody(msg, typ string, code any) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
}

func apiErrorJSON(msg, typ string, code any) string {
	b, _ := json.Marshal(apiErrorBody(msg, typ, code))
	return string(b)
}
