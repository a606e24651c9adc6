-- How long a review took, from its job's start to synthesis, in
-- milliseconds, for the dashboard's charts. Reviews stored before this have
-- NULL, and the charts leave them out.
ALTER TABLE reviews ADD COLUMN duration_ms BIGINT;
