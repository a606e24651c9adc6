-- Gitea (and Forgejo): a connected repository is an installation of
-- platform 'gitea' whose external_id is Gitea's repository id. Gitea has
-- no App: `quorum gitea connect` creates a webhook on the repository with a
-- secret it generates, kept here to check each delivery's signature (Gitea
-- signs with the secret itself, so it cannot be stored as a hash).
CREATE TABLE gitea_hooks (
    installation_id TEXT PRIMARY KEY REFERENCES installations (id),
    -- repository_id is Gitea's id of the repository; the webhook URL
    -- carries it (?repository=), since Gitea's deliveries name no hook.
    repository_id   BIGINT NOT NULL,
    -- hook_id is Gitea's id of the webhook, for disconnect.
    hook_id         BIGINT NOT NULL,
    secret          TEXT NOT NULL,
    webhook_url     TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    -- last_delivery_at is when a delivery signed with the secret last
    -- came, whatever its event: connect waits for its test delivery here
    -- to tell whether Gitea can reach quorum.
    last_delivery_at BIGINT
);
CREATE UNIQUE INDEX gitea_hooks_repository ON gitea_hooks (repository_id);

-- Each delivery Gitea sent, by its X-Gitea-Delivery id, inserted in the
-- same transaction as the job that handles it (as github_deliveries).
CREATE TABLE gitea_deliveries (
    delivery_id   TEXT PRIMARY KEY,
    event         TEXT NOT NULL,
    action        TEXT NOT NULL DEFAULT '',
    repository_id BIGINT NOT NULL,
    payload       TEXT,
    received_at   BIGINT NOT NULL,
    handled_at    BIGINT
);
CREATE INDEX gitea_deliveries_received ON gitea_deliveries (received_at);
