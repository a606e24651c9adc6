-- Daily rollups of reviews, for the dashboard's charts: a chart reads at
-- most (days x repositories) rows, where bucketing every review of the
-- window in Go read 1,000,000 rows for a busy repository (1.6 s).
-- review.Store.Create adds each review to its repository's UTC day in the
-- same transaction as the review; reviews are never updated or deleted.
--
-- day is 00:00 UTC of the review's synthesized_at, in Unix microseconds.
-- The verdict columns count reviews; the severity columns count the
-- findings of those reviews; timed counts the reviews with a duration
-- and longest_ms is the longest of them (0 when none).
CREATE TABLE review_days (
    repository_id   TEXT NOT NULL REFERENCES repositories (id),
    day             BIGINT NOT NULL,
    approve         BIGINT NOT NULL DEFAULT 0,
    comment         BIGINT NOT NULL DEFAULT 0,
    request_changes BIGINT NOT NULL DEFAULT 0,
    critical        BIGINT NOT NULL DEFAULT 0,
    high            BIGINT NOT NULL DEFAULT 0,
    medium          BIGINT NOT NULL DEFAULT 0,
    low             BIGINT NOT NULL DEFAULT 0,
    info            BIGINT NOT NULL DEFAULT 0,
    timed           BIGINT NOT NULL DEFAULT 0,
    longest_ms      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (repository_id, day)
);

-- How many of a day's timed reviews took how long: bucket i holds the
-- durations at most review.DurationBounds[i] (1 s, 2 s, 3 s, 5 s, ... 6 h,
-- about 1.5 times apart) and above the bound before; bucket 27 holds
-- those over 6 h. Only buckets with reviews have a row.
CREATE TABLE review_day_durations (
    repository_id TEXT NOT NULL REFERENCES repositories (id),
    day           BIGINT NOT NULL,
    bucket        BIGINT NOT NULL,
    n             BIGINT NOT NULL,
    PRIMARY KEY (repository_id, day, bucket)
);

-- The reviews stored before this migration.
INSERT INTO review_days (repository_id, day, approve, comment, request_changes, critical, high, medium, low, info, timed, longest_ms)
SELECT r.repository_id, r.synthesized_at / 86400000000 * 86400000000,
    SUM(CASE WHEN r.verdict = 'approve' THEN 1 ELSE 0 END),
    SUM(CASE WHEN r.verdict = 'comment' THEN 1 ELSE 0 END),
    SUM(CASE WHEN r.verdict = 'request_changes' THEN 1 ELSE 0 END),
    SUM(COALESCE(f.critical, 0)), SUM(COALESCE(f.high, 0)), SUM(COALESCE(f.medium, 0)), SUM(COALESCE(f.low, 0)), SUM(COALESCE(f.info, 0)),
    COUNT(r.duration_ms), COALESCE(MAX(r.duration_ms), 0)
FROM reviews r
LEFT JOIN (
    SELECT review_id,
        SUM(CASE WHEN severity = 'critical' THEN 1 ELSE 0 END) AS critical,
        SUM(CASE WHEN severity = 'high' THEN 1 ELSE 0 END) AS high,
        SUM(CASE WHEN severity = 'medium' THEN 1 ELSE 0 END) AS medium,
        SUM(CASE WHEN severity = 'low' THEN 1 ELSE 0 END) AS low,
        SUM(CASE WHEN severity = 'info' THEN 1 ELSE 0 END) AS info
    FROM findings GROUP BY review_id
) f ON f.review_id = r.id
GROUP BY r.repository_id, r.synthesized_at / 86400000000 * 86400000000;

INSERT INTO review_day_durations (repository_id, day, bucket, n)
SELECT repository_id, day, bucket, COUNT(*)
FROM (
    SELECT repository_id, synthesized_at / 86400000000 * 86400000000 AS day, CASE
        WHEN duration_ms <= 1000 THEN 0
        WHEN duration_ms <= 2000 THEN 1
        WHEN duration_ms <= 3000 THEN 2
        WHEN duration_ms <= 5000 THEN 3
        WHEN duration_ms <= 7000 THEN 4
        WHEN duration_ms <= 10000 THEN 5
        WHEN duration_ms <= 15000 THEN 6
        WHEN duration_ms <= 20000 THEN 7
        WHEN duration_ms <= 30000 THEN 8
        WHEN duration_ms <= 45000 THEN 9
        WHEN duration_ms <= 60000 THEN 10
        WHEN duration_ms <= 90000 THEN 11
        WHEN duration_ms <= 120000 THEN 12
        WHEN duration_ms <= 180000 THEN 13
        WHEN duration_ms <= 300000 THEN 14
        WHEN duration_ms <= 420000 THEN 15
        WHEN duration_ms <= 600000 THEN 16
        WHEN duration_ms <= 900000 THEN 17
        WHEN duration_ms <= 1200000 THEN 18
        WHEN duration_ms <= 1800000 THEN 19
        WHEN duration_ms <= 2700000 THEN 20
        WHEN duration_ms <= 3600000 THEN 21
        WHEN duration_ms <= 5400000 THEN 22
        WHEN duration_ms <= 7200000 THEN 23
        WHEN duration_ms <= 10800000 THEN 24
        WHEN duration_ms <= 14400000 THEN 25
        WHEN duration_ms <= 21600000 THEN 26
        ELSE 27
    END AS bucket
    FROM reviews WHERE duration_ms IS NOT NULL
) t
GROUP BY repository_id, day, bucket;
