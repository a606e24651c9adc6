package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/quorum-review/quorum/internal/llm"
)

// llmFlags are the flags of the LLM engine a run reviews with, named as
// quorum review's (cmd/quorum/llmflags.go, which is package main and
// cannot be imported: the minimum is copied here). The engine always runs
// beside the built-in one (--llm-mode also), for every specialist, so
// that the report can tell what each engine found.
type llmFlags struct {
	baseURL, model, keyEnv, keyHeader, responseFormat, maxTokensField string
	timeout                                                           time.Duration
	contextTokens, maxTokens, maxFindingsPerFile                      int
}

func (f *llmFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.baseURL, "llm-base-url", "", "review with the LLM engine too, beside the built-in engines: the base URL of an OpenAI-compatible chat-completions API, as quorum review's --llm-base-url; empty: built-in engines only")
	fs.StringVar(&f.model, "llm-model", "", "the model the LLM engine asks; required with --llm-base-url")
	fs.StringVar(&f.keyEnv, "llm-api-key-env", llm.APIKeyEnv, "the NAME of the environment variable that holds the LLM API key; an empty variable sends no key, as a local server wants")
	fs.StringVar(&f.keyHeader, "llm-api-key-header", "", "the header that carries the API key: empty for Authorization: Bearer, or a header name such as api-key")
	fs.DurationVar(&f.timeout, "llm-timeout", llm.DefaultTimeout, "time limit of each request to the LLM API (a slow local model also needs a --timeout long enough for the whole review)")
	fs.StringVar(&f.responseFormat, "llm-response-format", llm.FormatJSONSchema, "json_schema, json_object or prompt, as quorum review's --llm-response-format")
	fs.StringVar(&f.maxTokensField, "llm-max-tokens-field", llm.MaxTokens, "max_tokens or max_completion_tokens, as quorum review's --llm-max-tokens-field")
	fs.IntVar(&f.contextTokens, "llm-context-tokens", 0, "the model's context window in tokens; 0: ask the server, else 32000")
	fs.IntVar(&f.maxTokens, "llm-max-tokens", 0, "the most tokens one answer may have; 0: the engine's default")
	fs.IntVar(&f.maxFindingsPerFile, "llm-max-findings-per-file", llm.DefaultMaxFindingsPerFile, "the most findings the LLM engine of one specialist may report on one file, as quorum review's --llm-max-findings-per-file")
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// check reports a bad value as a usage error naming its flag, before any
// case is reviewed; nothing is checked with the engine off.
func (f *llmFlags) check() error {
	if f.baseURL == "" {
		return nil
	}
	u, err := url.Parse(f.baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not quoted: the URL could carry credentials.
		return usageError{errors.New("--llm-base-url: want an absolute http or https URL, such as http://127.0.0.1:8089/v1")}
	}
	if f.model == "" {
		return usageError{errors.New("--llm-model: required with --llm-base-url")}
	}
	if !envName.MatchString(f.keyEnv) {
		// Not quoted: a key pasted here by mistake must not be printed.
		return usageError{errors.New("--llm-api-key-env: want the name of an environment variable, not the key itself")}
	}
	if f.timeout <= 0 || f.contextTokens < 0 || f.maxTokens < 0 {
		return usageError{errors.New("--llm-timeout, --llm-context-tokens, --llm-max-tokens: want a positive duration and numbers of tokens not below 0")}
	}
	if f.maxFindingsPerFile < 1 {
		return usageError{fmt.Errorf("--llm-max-findings-per-file: want a number of findings, 1 or more, got %d", f.maxFindingsPerFile)}
	}
	if _, err := llm.New(f.config(""), "logic"); err != nil {
		return usageError{fmt.Errorf("--llm-*: %w", err)}
	}
	return nil
}

// config is the engine's configuration, with key as its API key.
func (f *llmFlags) config(key string) llm.Config {
	return llm.Config{
		BaseURL: f.baseURL, Model: f.model, APIKey: key, APIKeyHeader: f.keyHeader,
		Timeout: f.timeout, ResponseFormat: f.responseFormat, MaxTokensField: f.maxTokensField,
		ContextTokens: f.contextTokens, MaxTokens: f.maxTokens, MaxFindingsPerFile: f.maxFindingsPerFile,
	}
}

// args are the flags again, for the child that reviews a case; the key
// stays in the environment, which the child inherits.
func (f *llmFlags) args() []string {
	if f.baseURL == "" {
		return nil
	}
	return []string{
		"--llm-base-url", f.baseURL, "--llm-model", f.model, "--llm-api-key-env", f.keyEnv,
		"--llm-api-key-header", f.keyHeader, "--llm-timeout", f.timeout.String(),
		"--llm-response-format", f.responseFormat, "--llm-max-tokens-field", f.maxTokensField,
		"--llm-context-tokens", strconv.Itoa(f.contextTokens), "--llm-max-tokens", strconv.Itoa(f.maxTokens),
		"--llm-max-findings-per-file", strconv.Itoa(f.maxFindingsPerFile),
	}
}
