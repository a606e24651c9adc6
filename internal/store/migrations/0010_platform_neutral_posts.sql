-- The record of what quorum posted is the same for every platform (GitHub,
-- Gitea): a settled review and a notice are keyed by quorum's review and
-- repository ids, not by anything of the platform's.
ALTER TABLE github_settled_reviews RENAME TO settled_reviews;
ALTER TABLE github_notices RENAME TO pr_notices;
