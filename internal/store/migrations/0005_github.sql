-- GitHub App intake: each webhook delivery GitHub sent, by its
-- X-GitHub-Delivery id. The row is inserted in the same transaction as the
-- job that handles it, so a redelivered event finds its id taken and does
-- nothing twice. The payload is kept until the job has handled it.
CREATE TABLE github_deliveries (
    delivery_id     TEXT PRIMARY KEY,
    event           TEXT NOT NULL,
    action          TEXT NOT NULL DEFAULT '',
    installation_id BIGINT,
    payload         TEXT,
    received_at     BIGINT NOT NULL,
    handled_at      BIGINT
);
CREATE INDEX github_deliveries_received ON github_deliveries (received_at);
