-- What the LLM engine's model said about each file it reviewed, so that a
-- file shown again exactly as before (the next push of a pull request, a
-- rebase that leaves it alone) is not sent again: key is a SHA-256 of
-- everything the model was shown of the file and who was asked (see
-- internal/llm/cache.go), result the model's findings for it as JSON,
-- which the engine checks against the change again before it uses them.
-- Scoped to one repository of one account: another repository never
-- reads it. llmcache.Scope.Put keeps it small: rows older than
-- llmcache.MaxAge go, and so do a repository's oldest rows past
-- llmcache.MaxPerRepository.
CREATE TABLE llm_file_results (
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    repository_id TEXT NOT NULL REFERENCES repositories (id),
    key           TEXT NOT NULL,
    result        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (repository_id, key)
);
CREATE INDEX llm_file_results_repo_created ON llm_file_results (repository_id, created_at);
CREATE INDEX llm_file_results_created ON llm_file_results (created_at);
