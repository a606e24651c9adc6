package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/llm"
	"github.com/quorum-review/quorum/internal/llmcache"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/repoconfig"
	"github.com/quorum-review/quorum/internal/specialist"
)

// llmFlags are the flags of the LLM engine, shared by review and serve.
type llmFlags struct {
	baseURL, model, keyEnv, keyHeader, specialists, mode, responseFormat, maxTokensField *string
	timeout                                                                              *time.Duration
	stream                                                                               *bool
	contextTokens, maxTokens, maxTokensPerReview, maxFindingsPerFile                     *int
}

func addLLMFlags(c *command) *llmFlags {
	return &llmFlags{
		baseURL: c.String("llm-base-url", "QUORUM_LLM_BASE_URL", "",
			"base URL of an OpenAI-compatible chat-completions API (quorum posts to {base}/chat/completions), e.g. https://api.openai.com/v1; empty: the LLM engine is off and nothing is sent anywhere"),
		model: c.String("llm-model", "QUORUM_LLM_MODEL", "", "the model the LLM engine asks (for Azure, the deployment); required with --llm-base-url"),
		keyEnv: c.String("llm-api-key-env", "QUORUM_LLM_API_KEY_ENV", llm.APIKeyEnv,
			"the NAME of the environment variable that holds the LLM API key (the key itself is never given as a flag); an empty variable sends no key, as a local server wants"),
		keyHeader: c.String("llm-api-key-header", "QUORUM_LLM_API_KEY_HEADER", "",
			"the header that carries the API key: empty for Authorization: Bearer <key>, or a header name that carries the bare key, such as api-key (Azure OpenAI)"),
		specialists: c.String("llm-specialists", "QUORUM_LLM_SPECIALISTS", "",
			"comma-separated specialists that use the LLM engine (logic, security, performance, tests); default: every specialist the repository enables"),
		mode: c.String("llm-mode", "QUORUM_LLM_MODE", llm.ModeAlso,
			"also: a specialist runs the LLM engine beside its built-in engine and reports both engines' findings, failing only if both fail; instead: the LLM engine replaces the built-in one"),
		timeout: c.Duration("llm-timeout", "QUORUM_LLM_TIMEOUT", llm.DefaultTimeout,
			"time limit of each request to the LLM API (a request that times out is retried once, within the specialist's time limit)"),
		stream: c.Bool("llm-stream", "QUORUM_LLM_STREAM", true,
			"ask for answers streamed (server-sent events): an answer the time limit cuts keeps the findings complete before it, and the server stops writing it; a server that rejects streaming gets whole answers, once per process. false: whole answers, for a proxy that breaks streams"),
		responseFormat: c.String("llm-response-format", "QUORUM_LLM_RESPONSE_FORMAT", llm.FormatJSONSchema,
			"how the answer's shape is asked for first: json_schema (structured output), json_object (the schema then goes in the prompt) or prompt (the schema in the prompt, no response_format); a server that rejects one is asked for the next, once per process"),
		maxTokensField: c.String("llm-max-tokens-field", "QUORUM_LLM_MAX_TOKENS_FIELD", llm.MaxTokens,
			"the request field tried first to bound the answer: max_tokens (read by most servers; OpenAI's reasoning models reject it) or max_completion_tokens (OpenAI's current field; llama-cpp-python ignores it); a server that rejects it, or answers at more length than it asks, gets the other"),
		contextTokens: c.Int("llm-context-tokens", "QUORUM_LLM_CONTEXT_TOKENS", 0,
			"the model's context window in tokens, which prompt and answer share; a change larger than fits is split into several requests. 0: ask the server's model list (vLLM, LM Studio and llama.cpp's server say it), else 32000. Set it lower to send smaller requests to a slow model"),
		maxTokens: c.Int("llm-max-tokens", "QUORUM_LLM_MAX_TOKENS", 0,
			"the most tokens one answer may have; 0: 4096, or a quarter of a context too small for that"),
		maxTokensPerReview: c.Int("llm-max-tokens-per-review", "QUORUM_LLM_MAX_TOKENS_PER_REVIEW", llm.DefaultMaxTokensPerReview,
			"the most tokens, prompts and answers together, that the requests of one review may take, shared by its specialists (the server's counts, else estimates); a request that could pass it is not sent, and the review's engine notes say so. 0: no bound"),
		maxFindingsPerFile: c.Int("llm-max-findings-per-file", "QUORUM_LLM_MAX_FINDINGS_PER_FILE", llm.DefaultMaxFindingsPerFile,
			"the most findings the LLM engine of one specialist may report on one file in one review; the most severe are kept, and the engine's notes count the rest"),
	}
}

// llmSettings is the LLM engine as the flags configure it.
type llmSettings struct {
	cfg llm.Config
	// specialists are the specialists the engine serves; nil means every
	// enabled one.
	specialists []string
	mode        string
	keyEnv      string
	keySet      bool
	// maxTokensPerReview is each review's token budget; 0 bounds nothing.
	maxTokensPerReview int
	// servers is what the process learns of the LLM server, shared by
	// every engine of every review it runs.
	servers *llm.Servers
}

var (
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// settings checks the LLM flags; every bad value is a usage error naming
// its flag, even with the engine off, so a typo is not silently ignored.
// It returns nil when the engine is off.
func (f *llmFlags) settings(getenv func(string) string) (*llmSettings, error) {
	if *f.mode != llm.ModeAlso && *f.mode != llm.ModeInstead {
		return nil, usageError{fmt.Errorf("--llm-mode: want also or instead, got %q", *f.mode)}
	}
	if *f.responseFormat != llm.FormatJSONSchema && *f.responseFormat != llm.FormatJSONObject && *f.responseFormat != llm.FormatPrompt {
		return nil, usageError{fmt.Errorf("--llm-response-format: want %s, %s or %s, got %q", llm.FormatJSONSchema, llm.FormatJSONObject, llm.FormatPrompt, *f.responseFormat)}
	}
	if *f.contextTokens < 0 {
		return nil, usageError{fmt.Errorf("--llm-context-tokens: want 0 (ask the server) or a number of tokens, got %d", *f.contextTokens)}
	}
	if *f.maxTokens < 0 {
		return nil, usageError{fmt.Errorf("--llm-max-tokens: want 0 (the default) or a number of tokens, got %d", *f.maxTokens)}
	}
	if *f.maxTokensPerReview < 0 {
		return nil, usageError{fmt.Errorf("--llm-max-tokens-per-review: want 0 (no bound) or a number of tokens, got %d", *f.maxTokensPerReview)}
	}
	if *f.maxFindingsPerFile < 1 {
		return nil, usageError{fmt.Errorf("--llm-max-findings-per-file: want a number of findings, 1 or more, got %d", *f.maxFindingsPerFile)}
	}
	if *f.maxTokensField != llm.MaxCompletionTokens && *f.maxTokensField != llm.MaxTokens {
		return nil, usageError{fmt.Errorf("--llm-max-tokens-field: want %s or %s, got %q", llm.MaxCompletionTokens, llm.MaxTokens, *f.maxTokensField)}
	}
	if *f.timeout <= 0 {
		return nil, usageError{fmt.Errorf("--llm-timeout: want a positive duration, got %s", *f.timeout)}
	}
	if !envName.MatchString(*f.keyEnv) {
		// Not quoted: a key pasted here by mistake must not be printed.
		return nil, usageError{errors.New("--llm-api-key-env: want the name of an environment variable (letters, digits and _), not the key itself")}
	}
	if *f.keyHeader != "" && (!headerName.MatchString(*f.keyHeader) || len(*f.keyHeader) > 64) {
		// Not quoted either, for the same reason.
		return nil, usageError{errors.New("--llm-api-key-header: want a header name such as api-key")}
	}
	var specs []string
	for _, n := range strings.Split(*f.specialists, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(repoconfig.KnownSpecialists, n) {
			return nil, usageError{fmt.Errorf("--llm-specialists: unknown specialist %q (want some of %s)", n, strings.Join(repoconfig.KnownSpecialists, ", "))}
		}
		if !slices.Contains(specs, n) {
			specs = append(specs, n)
		}
	}
	if *f.baseURL == "" {
		return nil, nil
	}
	u, err := url.Parse(*f.baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not quoted: the URL could carry credentials.
		return nil, usageError{errors.New("--llm-base-url: want an absolute http or https URL, such as https://api.openai.com/v1")}
	}
	if *f.model == "" {
		return nil, usageError{errors.New("--llm-model: required with --llm-base-url")}
	}
	key := getenv(*f.keyEnv)
	cfg := llm.Config{
		BaseURL:        *f.baseURL,
		Model:          *f.model,
		APIKey:         key,
		APIKeyHeader:   *f.keyHeader,
		Timeout:        *f.timeout,
		NoStream:       !*f.stream,
		ResponseFormat: *f.responseFormat,
		MaxTokensField: *f.maxTokensField,
		ContextTokens:  *f.contextTokens,
		MaxTokens:      *f.maxTokens,

		MaxFindingsPerFile: *f.maxFindingsPerFile,
	}
	// A context and answer that cannot fit together are a usage error
	// now, not a failure in every review.
	if _, err := llm.New(cfg, "logic"); err != nil {
		return nil, usageError{fmt.Errorf("--llm-context-tokens, --llm-max-tokens: %s", strings.TrimPrefix(err.Error(), "llm: "))}
	}
	return &llmSettings{
		cfg:         cfg,
		specialists: specs,
		mode:        *f.mode,
		keyEnv:      *f.keyEnv,
		keySet:      key != "",
		servers:     llm.NewServers(),

		maxTokensPerReview: *f.maxTokensPerReview,
	}, nil
}

// llmTestOptions are added to every engine; tests set them once, before
// any test runs (a clock that does not sleep before a retry).
var llmTestOptions []llm.Option

// wiring is the engine's wiring, logging to log.
func (s *llmSettings) wiring(log *slog.Logger) llm.Wiring {
	return llm.Wiring{
		Config:      s.cfg,
		Specialists: s.specialists,
		Mode:        s.mode,
		Options:     append([]llm.Option{llm.WithLogger(log), llm.WithServers(s.servers)}, llmTestOptions...),

		MaxTokensPerReview: s.maxTokensPerReview,
	}
}

// warn tells, for one repository's review, what in the LLM settings will
// not do what the operator may think.
func (s *llmSettings) warn(cfg repoconfig.Config, w io.Writer) {
	for _, n := range s.specialists {
		if !cfg.Enabled(n) {
			fmt.Fprintf(w, "quorum: --llm-specialists names %s, which the repository's configuration does not enable: it does not run\n", n)
		}
	}
	if !s.keySet {
		fmt.Fprintf(w, "quorum: %s is empty: requests to the LLM API carry no key\n", s.keyEnv)
	}
}

// llmInstructions are the repository configuration's per-path instructions
// for the LLM engine.
func llmInstructions(cfg repoconfig.Config) []llm.Instruction {
	var ins []llm.Instruction
	for _, i := range cfg.Instructions {
		ins = append(ins, llm.Instruction{PathGlob: i.Path, Text: i.Text})
	}
	return ins
}

// serveSpecialists wires the LLM engine into the specialists of every
// review serve runs. Each review's engines keep their results per file in
// the cache of the review's repository, so that the next push sends only
// the files it changed. What the command line prints for one review is
// logged: a key that is missing once at start, and a specialist the
// repository does not enable at debug level, per review.
func (s *llmSettings) serveSpecialists(enabled func(repoconfig.Config) []specialist.Specialist, cache *llmcache.Store, log *slog.Logger) func(repoconfig.Config, pipeline.ReviewArgs) []specialist.Specialist {
	if !s.keySet {
		log.Warn("the LLM API key variable is empty: requests to the LLM API carry no key", "variable", s.keyEnv)
	}
	shared := s.wiring(log)
	return func(cfg repoconfig.Config, args pipeline.ReviewArgs) []specialist.Specialist {
		w := shared
		w.Options = append(slices.Clip(shared.Options), llm.WithResultCache(cache.For(args.AccountID, args.RepositoryID)))
		specs := enabled(cfg)
		var missing []string
		for _, n := range repoconfig.KnownSpecialists {
			if cfg.Enabled(n) && !slices.ContainsFunc(specs, func(sp specialist.Specialist) bool { return sp.Name() == n }) {
				missing = append(missing, n)
			}
		}
		wired, _, err := w.Wire(specs, missing, llmInstructions(cfg))
		if err != nil {
			// The settings were checked at start; an engine that cannot be
			// made now leaves the built-in engines to review alone.
			log.Error("LLM engine not wired", "error", err.Error())
			return specs
		}
		return wired
	}
}
