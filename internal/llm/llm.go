// Package llm is the LLM engine: it makes a specialist review a change
// through an OpenAI-compatible chat-completions endpoint (OpenAI, Azure
// OpenAI, Ollama, vLLM, llama.cpp server), with a prompt per specialist
// that presents the diff's hunks with explicit new-file line numbers, and a
// JSON schema (structured output) for the findings it returns.
//
// Every failure of the endpoint or the model (an HTTP error, a timeout, a
// malformed, truncated or refused answer) is an error of the specialist,
// never a panic; 429, 5xx and timeouts are retried once. The error a review
// fails with is a *Failure: one short line for the pull request, with the
// server's own words only in the log.
//
// What a server accepts is found out, not assumed: a server that rejects
// json_schema is asked for json_object, then for JSON described in the
// prompt; one that rejects the token field gets the other; the model's
// context window comes from the server's model list when the
// configuration does not give it. What was found is remembered per server
// (Servers).
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// APIKeyEnv is the environment variable the command line reads the API key
// from by default.
const APIKeyEnv = "QUORUM_LLM_API_KEY"

// Response formats: how the answer's shape is requested from the server.
const (
	// FormatJSONSchema asks for structured output against the findings
	// schema (OpenAI, Azure, recent vLLM, Ollama and llama.cpp server).
	FormatJSONSchema = "json_schema"
	// FormatJSONObject asks only for a JSON object, for servers without
	// json_schema support; the schema is then given in the prompt.
	FormatJSONObject = "json_object"
	// FormatPrompt asks for nothing: the schema is given in the prompt
	// and the server is not told the answer is JSON, for servers that
	// accept no response_format at all.
	FormatPrompt = "prompt"
)

// Names of the request field that bounds the answer's length.
const (
	// MaxCompletionTokens is OpenAI's current field, required by its
	// reasoning models.
	MaxCompletionTokens = "max_completion_tokens"
	// MaxTokens is the older field, which Ollama, llama.cpp server and
	// older vLLM read.
	MaxTokens = "max_tokens"
)

// Defaults for Config's zero values.
const (
	DefaultTimeout       = 2 * time.Minute
	DefaultMaxTokens     = 4096
	DefaultContextTokens = 32000
	DefaultMaxRetryAfter = 30 * time.Second
	DefaultConcurrency   = 2
	// DefaultMaxFindingsPerFile keeps a talkative model from burying a
	// file's real problem among its lesser remarks.
	DefaultMaxFindingsPerFile = 3
	// modelListTimeout bounds the request for the server's model list.
	modelListTimeout = 10 * time.Second
)

const (
	// defaultRetryBackoff is the wait before a retry the server did not
	// time with Retry-After.
	defaultRetryBackoff = time.Second
	// minimumPromptBudget is the fewest characters of diff a request must
	// be able to carry for the config to make sense.
	minimumPromptBudget = 1000
	// charsPerTokenEstimate estimates tokens without the model's tokenizer.
	charsPerTokenEstimate = 4
)

// Config says which endpoint and model the engine uses and how.
type Config struct {
	// BaseURL is the API's base, to which "/chat/completions" is appended:
	// "https://api.openai.com/v1", "http://localhost:11434/v1". A query
	// (Azure's "?api-version=…") is kept.
	BaseURL string
	// Model is the model (for Azure, the deployment) to ask.
	Model string
	// APIKey authenticates to the endpoint; empty sends no credential (a
	// local server). It is never logged nor put into an error.
	APIKey string
	// APIKeyHeader is the header that carries APIKey: empty for
	// "Authorization: Bearer <key>", or a header name such as "api-key"
	// (Azure), which then carries the bare key.
	APIKeyHeader string
	// Timeout bounds each request; DefaultTimeout when 0.
	Timeout time.Duration
	// MaxTokens bounds each answer; DefaultMaxTokens when 0.
	MaxTokens int
	// MaxTokensField is the field tried first, MaxTokens (the default) or
	// MaxCompletionTokens; a server that rejects it, or answers at more
	// length than it asks, gets the other. MaxTokens comes first because
	// the servers that do not read it say so (OpenAI's reasoning models
	// answer 400 naming it), while llama-cpp-python's server ignores
	// max_completion_tokens silently and answers until its context is full.
	MaxTokensField string
	// ResponseFormat is the format tried first: FormatJSONSchema (the
	// default), FormatJSONObject or FormatPrompt. A server that rejects
	// it is asked for the next, in that order.
	ResponseFormat string
	// ContextTokens is the model's context window, in tokens, which
	// prompt and answer share; a change whose prompt would not fit is
	// split by file into several requests. When 0 the server's model list
	// is asked (once per server), and DefaultContextTokens is used when
	// it does not say.
	ContextTokens int
	// MaxRetryAfter is the longest Retry-After the engine waits for before
	// its one retry; a longer one fails at once. DefaultMaxRetryAfter when 0.
	MaxRetryAfter time.Duration
	// Concurrency is how many requests of one review run at a time;
	// DefaultConcurrency when 0.
	Concurrency int
	// NoStream asks for each answer whole. By default answers are
	// streamed (server-sent events), so that one the time limit cuts
	// keeps the findings complete before it, and the server stops
	// writing it; a server that rejects streaming is asked for whole
	// answers from then on. For a proxy that breaks streams.
	NoStream bool
	// MaxFindingsPerFile is how many of the engine's findings one file may
	// have in one review; the most severe are kept.
	// DefaultMaxFindingsPerFile when 0.
	MaxFindingsPerFile int
}

// Instruction is extra guidance for the files whose path matches PathGlob
// (a doublestar glob, as in .quorum.yaml), added to the prompt beside them.
type Instruction struct {
	PathGlob string
	Text     string
}

// Option changes an Engine built by New.
type Option func(*Engine)

// WithInstructions adds per-path instructions to every prompt.
func WithInstructions(ins []Instruction) Option {
	return func(e *Engine) { e.instructions = append(e.instructions, ins...) }
}

// WithHTTPClient sets the HTTP client; by default one with
// http.DefaultTransport that follows no redirect. Per-request timeouts come
// from Config.Timeout either way.
func WithHTTPClient(c *http.Client) Option {
	return func(e *Engine) { e.http = c }
}

// WithLogger sets the logger; nothing is logged otherwise. The engine logs
// one line per request (specialist, model, chunk, status, duration), never
// the key, the prompt or the answer.
func WithLogger(l *slog.Logger) Option {
	return func(e *Engine) { e.log = l }
}

// WithClock sets how the engine reads the time (for HTTP-date
// Retry-After headers) and waits before a retry, so tests never sleep.
func WithClock(now func() time.Time, sleep func(context.Context, time.Duration) error) Option {
	return func(e *Engine) { e.now, e.sleep = now, sleep }
}

// WithServers shares what servers were found to accept among every engine
// given the same Servers: one per process.
func WithServers(s *Servers) Option {
	return func(e *Engine) { e.servers = s }
}

// WithBudget bounds the tokens the engine's requests may take, together
// with every other engine given the same Budget: one per review.
func WithBudget(b *Budget) Option {
	return func(e *Engine) { e.budget = b }
}

// WithBoard has the engine wait for the built-in engines' findings on the
// board before it asks the model, tell the model of them, and drop the
// model's repeats of them: one board per review (see Wire).
func WithBoard(b *Board) Option {
	return func(e *Engine) { e.board = b }
}

// WithFocus replaces the specialist's description of what it looks for in
// the system prompt: the way to give a specialist other than the built-in
// four a precise brief.
func WithFocus(focus string) Option {
	return func(e *Engine) { e.focus = focus }
}

// Engine is a specialist that reviews through an LLM.
type Engine struct {
	cfg          Config
	name         string
	focus        string
	endpoint     string
	instructions []Instruction
	servers      *Servers
	facts        *serverFacts
	budget       *Budget
	cache        ResultCache
	board        *Board
	// answerDefault: Config.MaxTokens was not given, so a small context
	// may lower it.
	answerDefault bool
	http          *http.Client
	log           *slog.Logger
	now           func() time.Time
	sleep         func(context.Context, time.Duration) error
}

var _ specialist.Specialist = (*Engine)(nil)

// New returns an engine that reviews as the specialist name through the
// endpoint cfg describes.
func New(cfg Config, name string, opts ...Option) (*Engine, error) {
	if name == "" {
		return nil, errors.New("llm: no specialist name")
	}
	if cfg.Model == "" {
		return nil, errors.New("llm: no model")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not quoted whole: it could carry credentials.
		return nil, errors.New("llm: base URL must be an absolute http or https URL")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	answerDefault := cfg.MaxTokens == 0
	if answerDefault {
		cfg.MaxTokens = DefaultMaxTokens
	}
	switch cfg.MaxTokensField {
	case "":
		cfg.MaxTokensField = MaxTokens
	case MaxCompletionTokens, MaxTokens:
	default:
		return nil, fmt.Errorf("llm: max tokens field %q is neither %s nor %s", cfg.MaxTokensField, MaxCompletionTokens, MaxTokens)
	}
	switch cfg.ResponseFormat {
	case "":
		cfg.ResponseFormat = FormatJSONSchema
	case FormatJSONSchema, FormatJSONObject, FormatPrompt:
	default:
		return nil, fmt.Errorf("llm: response format %q is not %s, %s or %s", cfg.ResponseFormat, FormatJSONSchema, FormatJSONObject, FormatPrompt)
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.MaxFindingsPerFile == 0 {
		cfg.MaxFindingsPerFile = DefaultMaxFindingsPerFile
	}
	if cfg.Timeout < 0 || cfg.MaxTokens < 0 || cfg.ContextTokens < 0 || cfg.MaxRetryAfter < 0 || cfg.Concurrency < 0 || cfg.MaxFindingsPerFile < 0 {
		return nil, errors.New("llm: negative limit in config")
	}
	e := &Engine{
		cfg:           cfg,
		answerDefault: answerDefault,
		name:          name,
		focus:         focuses[name],
		endpoint:      u.String(),
		// Redirects are not followed: the key would go along to wherever
		// the redirect points (Go drops only Authorization across hosts,
		// not an api-key header).
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		log:   slog.New(slog.DiscardHandler),
		now:   time.Now,
		sleep: sleepCtx,
	}
	for _, o := range opts {
		o(e)
	}
	if e.focus == "" {
		e.focus = genericFocus(name)
	}
	if e.servers == nil {
		e.servers = NewServers()
	}
	e.facts = e.servers.facts(cfg)
	if cfg.ContextTokens > 0 {
		if _, err := e.plan(cfg.ContextTokens, "configured"); err != nil {
			return nil, fmt.Errorf("llm: %w", err)
		}
	}
	return e, nil
}

// Name returns the specialist's name.
func (e *Engine) Name() string { return e.name }

// Review asks the model about the change, one request per chunk of files
// that fits the context window, and returns the findings that land on the
// change's added or modified lines (or on a changed file as a whole). It
// tells the review (specialist.Note) how large the prompt was and how long
// the model took; when it fails, the error is a *Failure. With a Board it
// first waits, within a bound, for the review's built-in engines, so that
// the model is told what they found (see awaitBuiltin and withoutKnown).
func (e *Engine) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	if dl, ok := ctx.Deadline(); ok {
		// Stop a little before the specialist's time limit, so that the
		// review learns this engine's own account of it (how large the
		// prompt was, how many requests went) rather than only that the
		// time ran out.
		margin := min(time.Until(dl)/10, 2*time.Second)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-margin))
		defer cancel()
	}
	// The model is told what the built-in engines found, so they go first.
	unheard, waited := e.awaitBuiltin(ctx)
	st := &stats{start: e.now()}
	o, p, err := e.review(ctx, c, st)
	if err != nil && e.learnContext(err, p) {
		// The server named a smaller context than the review was planned
		// for (llama-cpp-python's server says nothing of it before): plan
		// again, once, with the server's number.
		e.log.InfoContext(ctx, "llm: the server's context is smaller than planned; splitting the change again", "model", e.cfg.Model, "planned", p.context)
		o, p, err = e.review(ctx, c, st)
	}
	if err != nil {
		return nil, e.failure(ctx, err, p, st)
	}
	o.unheard, o.waited = unheard, waited
	// The files that went to the model, whole or in parts, were analysed.
	deleted := map[string]bool{}
	for _, f := range c.Files {
		deleted[f.Path()] = f.Status == change.StatusDeleted
	}
	for _, path := range slices.Concat(o.sent, o.reused) {
		if !deleted[path] {
			specialist.Analysed(ctx, "llm", path)
		}
	}
	specialist.Note(ctx, "%s", e.report(p, st, o))
	return o.findings, nil
}

// outcome is what one review's requests brought.
type outcome struct {
	findings []specialist.Finding
	// chunks is how many requests the change was split into, and unsent
	// how many of them were not sent for the review's token budget.
	chunks, unsent int
	// sent are the files of the requests sent, and reused those whose
	// results came from the cache (WithResultCache).
	sent, reused []string
	// unquoted counts the findings dropped because their quoted code is
	// not where they say, capped those left out for the cap per file,
	// repeated those dropped because a built-in engine reports them.
	unquoted, capped, repeated int
	// unheard are the specialists whose built-in engine had not reported
	// when the engine stopped waiting for them, after waited.
	unheard []string
	waited  time.Duration
}

// review plans the requests for the context window and makes them. A
// file the cache has results for, shown exactly as before, is not sent:
// its results are checked against the change as an answer is. A request
// the review's token budget has no room for is not sent; the review fails
// only when none was (and no file's results were reused).
func (e *Engine) review(ctx context.Context, c *change.Change, st *stats) (outcome, plan, error) {
	window, from := e.contextWindow(ctx)
	p, err := e.plan(window, from)
	if err != nil {
		return outcome{}, p, err
	}
	parts, cached := e.fromCache(ctx, c, e.parts(ctx, c, p.budget))
	var chunks []chunk
	if len(parts) > 0 || len(cached.paths) == 0 {
		chunks = pack(parts, p.budget)
	}
	results := make([]chunkResult, len(chunks))
	errs := make([]error, len(chunks))
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, e.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, ch := range chunks {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-rctx.Done():
				errs[i] = rctx.Err()
				return
			}
			defer func() { <-sem }()
			results[i], errs[i] = e.reviewChunk(rctx, c, ch, p, st)
			if errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	// The first error in chunk order that is not only the cancellation
	// another chunk's failure caused.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	o := outcome{chunks: len(chunks), reused: cached.paths}
	if first != nil {
		return o, p, first
	}
	all, unquoted := e.findings(ctx, c, cached.raws)
	o.unquoted += unquoted
	for i, r := range results {
		if r.unsent {
			o.unsent++
			continue
		}
		all = append(all, r.findings...)
		o.unquoted += r.unquoted
		for _, path := range chunks[i].paths {
			if !slices.Contains(o.sent, path) {
				o.sent = append(o.sent, path)
			}
		}
	}
	if len(chunks) > 0 && o.unsent == len(chunks) && len(cached.paths) == 0 {
		return o, p, errOverBudget
	}
	e.toCache(ctx, c, cached, chunks, results)
	o.findings, o.repeated = e.withoutKnown(dedupe(all))
	o.findings, o.capped = capPerFile(o.findings, e.cfg.MaxFindingsPerFile)
	return o, p, nil
}

// chunkResult is what one request brought.
type chunkResult struct {
	findings []specialist.Finding
	unquoted int
	// raws are the model's findings, and whole says that the answer
	// came in full (not cut off): only then are they kept (toCache).
	raws  []rawFinding
	whole bool
	// unsent: the review's token budget had no room for the request.
	unsent bool
}

// reviewChunk sends one chunk and converts its answer.
func (e *Engine) reviewChunk(ctx context.Context, c *change.Change, ch chunk, p plan, st *stats) (chunkResult, error) {
	label := fmt.Sprintf("%d/%d", ch.index+1, ch.total)
	content, err := e.complete(ctx, ch, label, p, st)
	if errors.Is(err, errOverBudget) {
		e.log.InfoContext(ctx, "llm: request not sent: the review's token budget is spent", "specialist", e.name, "chunk", label, "budget", e.budget.Limit())
		return chunkResult{unsent: true}, nil
	}
	var r chunkResult
	if errors.Is(err, ErrTruncated) || errors.Is(err, errStopped) {
		if raws := salvage(content); len(raws) > 0 {
			st.cut(errors.Is(err, errStopped))
			r.findings, r.unquoted = e.findings(ctx, c, raws)
			return r, nil
		}
	}
	if err != nil {
		if ch.total > 1 {
			return r, fmt.Errorf("chunk %d of %d: %w", ch.index+1, ch.total, err)
		}
		return r, err
	}
	raws, err := parseAnswer(content)
	if err != nil {
		return r, err
	}
	r.findings, r.unquoted = e.findings(ctx, c, raws)
	r.raws, r.whole = raws, true
	return r, nil
}

// plan is how one review uses the model's context window.
type plan struct {
	// context is the window in tokens, and contextFrom where the number
	// came from ("configured", "the server's model list", "the default").
	context     int
	contextFrom string
	// answer bounds each answer, in tokens: Config.MaxTokens, or, when it
	// was not given and the default would leave no room for a prompt, a
	// quarter of the context.
	answer int
	// budget is how many characters of diff one request may carry, and
	// known how many its list of what the built-in engines report.
	budget, known int
	// ratio is the server's token ratio the budget was made with.
	ratio float64
}

// plan fits the prompt and the answer into a context window.
func (e *Engine) plan(window int, from string) (plan, error) {
	p := plan{context: window, contextFrom: from, answer: e.cfg.MaxTokens, ratio: e.servers.ratio(e.facts)}
	p.budget = e.promptBudget(window, p.answer, p.ratio)
	if p.budget < minimumPromptBudget && e.answerDefault && p.answer > window/4 {
		p.answer = window / 4
		p.budget = e.promptBudget(window, p.answer, p.ratio)
	}
	if p.budget < minimumPromptBudget {
		return p, fmt.Errorf("the model's context of %d tokens (%s) leaves too little room for a prompt beside answers of %d tokens: serve the model with a larger context", window, from, p.answer)
	}
	// The list of what the built-in engines report takes its room from
	// the diff's, so that a request still fits the window.
	p.known = e.knownRoom(p.budget)
	p.budget -= p.known
	return p, nil
}

// stats are what one review sent and how long it took.
type stats struct {
	start time.Time

	mu sync.Mutex
	// requests counts the chunks asked about (a retry is not another).
	requests int
	// counted adds up the prompt tokens the server counted (usage);
	// estimated the estimates of the prompts it has not counted (yet).
	counted, estimated, uncounted int
	formats                       []string
	// truncated counts the answers cut at the token limit whose complete
	// findings were kept, stopped those cut at the time limit.
	truncated, stopped int
}

// cut counts an answer cut short whose complete findings were kept: at the
// time limit when atTimeLimit, else at the token limit.
func (st *stats) cut(atTimeLimit bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if atTimeLimit {
		st.stopped++
	} else {
		st.truncated++
	}
}

// asked records a chunk's prompt, estimated, as it is first sent.
func (st *stats) asked(estimate int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.requests++
	st.estimated += estimate
	st.uncounted++
}

// answered records the answer to a chunk: the server's count of the prompt
// replaces the estimate when it gave one.
func (st *stats) answered(estimate int, u *usage, format string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if u != nil && u.PromptTokens > 0 {
		st.estimated -= estimate
		st.counted += u.PromptTokens
		st.uncounted--
	}
	if !slices.Contains(st.formats, format) {
		st.formats = append(st.formats, format)
	}
}

// size says how large the prompt was: "1,234 tokens" when the server
// counted every request, "about 1,234 tokens" when some were estimated.
func (st *stats) size() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := st.counted + st.estimated
	if st.uncounted > 0 {
		return "about " + thousands(n) + " tokens"
	}
	return thousands(n) + " tokens"
}

func (st *stats) requestsSent() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.requests
}

// report is the note a review that succeeded leaves in the summary.
func (e *Engine) report(p plan, st *stats, o outcome) string {
	var b strings.Builder
	if o.chunks == 0 {
		fmt.Fprintf(&b, "the LLM engine sent %s nothing: its findings on the %s were reused from an earlier review that showed it the same lines",
			e.cfg.Model, plural(len(o.reused), "file"))
	} else {
		fmt.Fprintf(&b, "the LLM engine sent %s a prompt of %s in %s and had its answers in %s",
			e.cfg.Model, st.size(), plural(o.chunks-o.unsent, "request"), seconds(e.now().Sub(st.start)))
	}
	if o.chunks > 0 && len(o.reused) > 0 {
		fmt.Fprintf(&b, "; it sent %s and reused its findings on %s from an earlier review that showed it the same lines",
			plural(len(o.sent), "file"), plural(len(o.reused), "other file"))
	}
	if o.unsent > 0 {
		fmt.Fprintf(&b, "; %d of %d requests were not sent: the review's budget of %s tokens was spent (--llm-max-tokens-per-review)",
			o.unsent, o.chunks, thousands(e.budget.Limit()))
	}
	if o.unquoted > 0 {
		fmt.Fprintf(&b, "; %s: %s quoted code is not in the change", droppedFindings(o.unquoted), its(o.unquoted))
	}
	if o.repeated > 0 {
		fmt.Fprintf(&b, "; %s: the built-in engines already report them", droppedFindings(o.repeated))
	}
	if len(o.unheard) > 0 {
		so := "the model was not told all they report and may repeat it"
		if o.chunks == 0 {
			// The model was not asked: what it was told is in the
			// reused results already, and only the drop of repeats
			// missed them.
			so = "the reused findings may repeat what they report"
		}
		fmt.Fprintf(&b, "; the built-in engines of %s had not finished after %s, %s of the LLM engine's time, so %s",
			strings.Join(o.unheard, ", "), seconds(o.waited), waitShareWords, so)
	}
	if o.capped > 0 {
		fmt.Fprintf(&b, "; %s beyond %d per file %s left out, the most severe kept (--llm-max-findings-per-file)", plural(o.capped, "finding"), e.cfg.MaxFindingsPerFile, were(o.capped))
	}
	if o.chunks > 1 {
		fmt.Fprintf(&b, "; the change was split to fit the model's context of %s tokens (%s)", thousands(p.context), p.contextFrom)
	}
	if p.answer < e.cfg.MaxTokens {
		fmt.Fprintf(&b, "; answers were limited to %s tokens to leave room for the prompt", thousands(p.answer))
	}
	st.mu.Lock()
	formats := slices.Clone(st.formats)
	truncated, stopped := st.truncated, st.stopped
	st.mu.Unlock()
	if truncated > 0 {
		fmt.Fprintf(&b, "; %s cut off at %s tokens, and only the findings complete before the cut were kept (--llm-max-tokens allows longer answers)",
			wasCut(truncated), thousands(p.answer))
	}
	if stopped > 0 {
		fmt.Fprintf(&b, "; %s still being written at the time limit, and only the findings complete by then were kept (--llm-timeout allows more time)",
			wasCut(stopped))
	}
	if len(formats) > 0 && formats[len(formats)-1] != FormatJSONSchema {
		fmt.Fprintf(&b, "; the server does not take %s answers, so they were asked for as %s", FormatJSONSchema, describeFormat(formats[len(formats)-1]))
	}
	return b.String() + "."
}

func describeFormat(f string) string {
	if f == FormatPrompt {
		return "JSON described in the prompt"
	}
	return f
}

// Failure is how a review by the engine failed. Its Error is one short
// line for the pull request's summary, which everyone can read: it names
// the kind of failure (an HTTP status, a timeout, an unusable answer) and
// never carries the server's text, which may hold file paths, keys or the
// prompt. Err, the whole error, goes to the log.
type Failure struct {
	Summary string
	Err     error
}

func (f *Failure) Error() string { return f.Summary }
func (f *Failure) Unwrap() error { return f.Err }

// failure logs err whole and returns the short Failure for the review.
func (e *Engine) failure(ctx context.Context, err error, p plan, st *stats) error {
	err = e.redact(err)
	e.log.WarnContext(ctx, "llm review failed", "specialist", e.name, "model", e.cfg.Model, "err", err)
	var summary string
	var ae *APIError
	var te *timeoutError
	switch {
	case errors.As(err, &ae):
		summary = fmt.Sprintf("the LLM engine was unavailable: HTTP %d", ae.StatusCode)
	case errors.As(err, &te):
		summary = fmt.Sprintf("the LLM engine timed out: no answer within %s to a prompt of %s; allow more time (--llm-timeout) or send less (--llm-context-tokens)", te.after, st.size())
	case errors.Is(err, context.DeadlineExceeded):
		summary = fmt.Sprintf("the LLM engine ran out of the specialist's time after %s, with %s sent (a prompt of %s); allow more time or send less (--llm-context-tokens)",
			seconds(e.now().Sub(st.start)), plural(st.requestsSent(), "request"), st.size())
	case errors.Is(err, context.Canceled):
		summary = "the LLM engine was stopped: the review was canceled"
	case errors.Is(err, ErrTruncated):
		summary = fmt.Sprintf("the LLM engine's answer was cut off at %s tokens", thousands(p.answer))
	case errors.Is(err, ErrRefused):
		summary = "the LLM engine's model refused to answer"
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrNoChoices):
		summary = "the LLM engine's answer was not usable: not the JSON asked for"
	case errors.Is(err, errEndedEarly):
		summary = "the LLM engine was unavailable: the server ended its answer early"
	case errors.Is(err, errUnreachable):
		summary = "the LLM engine was unavailable: no connection to the server"
	case errors.Is(err, errOverBudget):
		summary = fmt.Sprintf("the LLM engine sent nothing: the review's budget of %s tokens was spent (--llm-max-tokens-per-review)", thousands(e.budget.Limit()))
	case p.budget < minimumPromptBudget && p.context > 0:
		summary = fmt.Sprintf("the LLM engine could not run: the model's context of %s tokens is too small for a prompt", thousands(p.context))
	default:
		summary = "the LLM engine failed (the log says why)"
	}
	return &Failure{Summary: summary, Err: fmt.Errorf("llm %s: %w", e.name, err)}
}

// droppedFindings says how many findings were dropped: "1 of the model's
// findings was dropped", "3 of the model's findings were dropped".
func droppedFindings(n int) string {
	return fmt.Sprintf("%d of the model's findings %s dropped", n, were(n))
}

func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func its(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

// wasCut says how many answers were cut: "1 answer was", "2 answers were".
func wasCut(n int) string {
	if n == 1 {
		return "1 answer was"
	}
	return fmt.Sprintf("%d answers were", n)
}

// thousands writes n with thousands separators: 12,345.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// seconds writes a duration to a tenth of a second: "4.2 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
