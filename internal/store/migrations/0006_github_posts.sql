-- What quorum posted on GitHub pull requests beyond reviews. Findings
-- already posted are found from the pull request's own comments (each
-- carries a hidden fingerprint marker), so they need no table here.

-- Notices: the one issue comment per pull request, reason and window that
-- says a review was skipped (rate_limit) or could not run (quorum_failure).
CREATE TABLE github_notices (
    repository_id TEXT NOT NULL REFERENCES repositories (id),
    pr_number     BIGINT NOT NULL,
    reason        TEXT NOT NULL,
    -- window_start is the start of the window (Unix microseconds) the
    -- notice covers: at most one notice per window.
    window_start  BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (repository_id, pr_number, reason, window_start)
);

-- The check run showing the review of a head, created when the review
-- starts and completed when it is posted.
CREATE TABLE github_check_runs (
    repository_id TEXT NOT NULL REFERENCES repositories (id),
    head_sha      TEXT NOT NULL,
    check_run_id  BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    -- completed_at is set once the run has its conclusion: a retried
    -- review reuses a run still in progress, a new review of the head
    -- starts another.
    completed_at  BIGINT,
    PRIMARY KEY (repository_id, head_sha)
);
