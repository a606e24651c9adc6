-- The newest head requested for review of each pull request. A review job
-- whose head is no longer the newest is superseded: it is cancelled before
-- it starts, or while it runs, and never saved.
CREATE TABLE pull_requests (
    repository_id TEXT NOT NULL REFERENCES repositories (id),
    pr_number     BIGINT NOT NULL,
    head_sha      TEXT NOT NULL,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (repository_id, pr_number)
);
