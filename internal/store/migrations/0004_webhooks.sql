-- Outbound webhooks: customer endpoints, one delivery per (event, endpoint),
-- and every attempt of each delivery.

CREATE TABLE webhook_endpoints (
    id                     TEXT PRIMARY KEY,
    account_id             TEXT NOT NULL REFERENCES accounts (id),
    url                    TEXT NOT NULL,
    description            TEXT NOT NULL DEFAULT '',
    -- events is a JSON array of event names; empty means every event.
    events                 TEXT NOT NULL,
    secret                 TEXT NOT NULL,
    -- The secret before the last rotation, still signed with until
    -- previous_expires_at (Standard Webhooks allows several signatures).
    previous_secret        TEXT,
    previous_expires_at    BIGINT,
    -- disabled_at is set when the endpoint answered 410 Gone.
    disabled_at            BIGINT,
    disabled_reason        TEXT NOT NULL DEFAULT '',
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL,
    deleted_at             BIGINT
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at, id);

CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id),
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    event_id        TEXT NOT NULL REFERENCES events (id),
    event           TEXT NOT NULL,
    -- status: pending, succeeded, failed (an attempt failed, a retry is
    -- scheduled), dead_lettered.
    status          TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_event_endpoint ON webhook_deliveries (event_id, endpoint_id);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_endpoint_status ON webhook_deliveries (endpoint_id, status, created_at DESC, id DESC);

CREATE TABLE webhook_attempts (
    delivery_id   TEXT NOT NULL REFERENCES webhook_deliveries (id),
    number        BIGINT NOT NULL,
    attempted_at  BIGINT NOT NULL,
    status_code   BIGINT,
    latency_us    BIGINT NOT NULL,
    error         TEXT NOT NULL DEFAULT '',
    response_body TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (delivery_id, number)
);
