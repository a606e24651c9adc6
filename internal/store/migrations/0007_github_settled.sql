-- The reviews whose posting on GitHub is settled: posted, not posted
-- because the pull request moved on (stale), or given up after the post
-- job's last attempt (failed). Settling a review announces it
-- (review.completed and finding.created, or review.failed stale_head) in
-- the same transaction, so a retried post job neither posts a review twice
-- nor announces it twice.
CREATE TABLE github_settled_reviews (
    review_id  TEXT PRIMARY KEY REFERENCES reviews (id),
    outcome    TEXT NOT NULL,
    settled_at BIGINT NOT NULL
);
