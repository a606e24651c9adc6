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
    expires_at  BIGINT NOT NULL
);
CREATE INDEX dashboard_sessions_expires ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_sessions_token ON dashboard_sessions (token_id);
