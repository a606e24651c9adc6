-- The transactional outbox: every event (review.completed, finding.created,
-- review.failed, installation.*) is written here in the same transaction as
-- the change that causes it. Webhook deliveries are made from these rows.
-- Runs on SQLite and PostgreSQL alike: data is JSON text, created_at Unix
-- microseconds.

CREATE TABLE events (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    name       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX events_account_created ON events (account_id, created_at, id);
