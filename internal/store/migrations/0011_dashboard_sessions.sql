-- Dashboard sign-ins: a personal access token exchanged for a session.
-- The browser holds only the session id; the store keeps its SHA-256, so a
-- copy of the database signs nobody in. The token is checked again on
-- every request (revoked or expired, the session ends with it).
CREATE TABLE dashboard_sessions (
    id_hash     TEXT PRIMARY KEY,
    token_id    TEXT NOT NULL REFERENCES api_tokens (id),
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    -- csrf is the synchronizer token every form of the session carries.
    csrf        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    -- The endpoint whose secret the session may see once, right after it
    -- registered the endpoint or rotated its secret (post/redirect/get:
    -- reloading the page shows nothing again, registers nothing again).
    secret_endpoint TEXT,
    secret_kind     TEXT NOT NULL DEFAULT '',
    secret_until    BIGINT
);
CREATE INDEX dashboard_sessions_expires ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_sessions_token ON dashboard_sessions (token_id);
