-- The platform's own id of an account (GitHub's numeric user or
-- organization id), which stays when the login is renamed. Installation
-- events find their account by it first, so a renamed login neither makes
-- a second account nor moves an installation; it is NULL for accounts
-- made from a login alone (quorum token create) until an installation
-- event names them.
ALTER TABLE accounts ADD COLUMN external_id BIGINT;
CREATE UNIQUE INDEX accounts_platform_external ON accounts (platform, external_id);
