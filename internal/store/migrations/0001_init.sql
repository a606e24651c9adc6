-- quorum's schema, version 1. Runs on SQLite and PostgreSQL alike: times are
-- Unix microseconds (BIGINT), lists are JSON text, ids are prefixed ULIDs
-- made by the application.

CREATE TABLE accounts (
    id         TEXT PRIMARY KEY,
    platform   TEXT NOT NULL,
    login      TEXT NOT NULL,
    type       TEXT NOT NULL DEFAULT 'Organization',
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX accounts_platform_login ON accounts (platform, lower(login));

CREATE TABLE installations (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    platform     TEXT NOT NULL,
    external_id  BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    suspended_at BIGINT,
    deleted_at   BIGINT
);
CREATE UNIQUE INDEX installations_platform_external ON installations (platform, external_id);
CREATE INDEX installations_account ON installations (account_id);

CREATE TABLE repositories (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    installation_id TEXT REFERENCES installations (id),
    owner           TEXT NOT NULL,
    name            TEXT NOT NULL,
    external_id     BIGINT,
    default_branch  TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    removed_at      BIGINT
);
CREATE UNIQUE INDEX repositories_account_owner_name ON repositories (account_id, lower(owner), lower(name));
CREATE INDEX repositories_installation ON repositories (installation_id);

CREATE TABLE reviews (
    id                    TEXT PRIMARY KEY,
    repository_id         TEXT NOT NULL REFERENCES repositories (id),
    pr_number             BIGINT NOT NULL,
    base_sha              TEXT NOT NULL DEFAULT '',
    head_sha              TEXT NOT NULL,
    verdict               TEXT NOT NULL,
    summary               TEXT NOT NULL,
    specialists_succeeded TEXT NOT NULL,
    specialists_failed    TEXT NOT NULL DEFAULT '[]',
    findings_count        BIGINT NOT NULL,
    synthesized_at        BIGINT NOT NULL,
    created_at            BIGINT NOT NULL
);
-- Keyset pagination, newest first: one index per listing shape.
CREATE INDEX reviews_repo_keyset ON reviews (repository_id, synthesized_at DESC, id DESC);
CREATE INDEX reviews_repo_pr_keyset ON reviews (repository_id, pr_number, synthesized_at DESC, id DESC);

CREATE TABLE findings (
    id              TEXT PRIMARY KEY,
    review_id       TEXT NOT NULL REFERENCES reviews (id) ON DELETE CASCADE,
    position        BIGINT NOT NULL,
    specialist      TEXT NOT NULL,
    category        TEXT NOT NULL,
    severity        TEXT NOT NULL,
    path            TEXT NOT NULL,
    line            BIGINT NOT NULL,
    end_line        BIGINT NOT NULL,
    headline        TEXT NOT NULL,
    body            TEXT NOT NULL,
    suggested_patch TEXT,
    fingerprint     TEXT NOT NULL,
    engine          TEXT NOT NULL,
    rule            TEXT NOT NULL DEFAULT '',
    model           TEXT NOT NULL DEFAULT '',
    detected_at     BIGINT NOT NULL,
    excerpt         TEXT NOT NULL
);
CREATE UNIQUE INDEX findings_review_position ON findings (review_id, position);
CREATE INDEX findings_fingerprint ON findings (fingerprint);

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    name         TEXT NOT NULL,
    hash         TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    revoked_at   BIGINT,
    last_used_at BIGINT
);
CREATE UNIQUE INDEX api_tokens_hash ON api_tokens (hash);
CREATE INDEX api_tokens_account ON api_tokens (account_id);

-- Instance-wide secrets made at first migration (e.g. the key that seals
-- pagination cursors), shared by every replica.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
