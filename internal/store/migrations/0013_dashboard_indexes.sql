-- The dashboard lists a repository's (or an account's) reviews of one
-- verdict, newest first. Without this index a rare verdict scans every
-- review of the repository: with 1,000,000 reviews (200,000 in 50
-- repositories of one account, verdict request_changes on 1% of them), the
-- account's first page took 417 ms on PostgreSQL 15 and 411 ms on SQLite;
-- with it, 1.9 ms and 2 ms. (An account's unfiltered list needs no new
-- index: it merges a page from each repository's reviews_repo_keyset,
-- 2.6 ms and 3 ms, where one ORDER BY over all its reviews took 281 ms and
-- 36 ms.)
CREATE INDEX reviews_repo_verdict_keyset ON reviews (repository_id, verdict, synthesized_at DESC, id DESC);
