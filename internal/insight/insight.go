// Package insight answers the dashboard's questions about one account's
// reviews and webhook deliveries over a time window: findings per week by
// severity, reviews per day by verdict with their durations, and each
// endpoint's delivery success. Every query is scoped to one account.
//
// Findings and reviews are read from daily rollups (review_days and
// review_day_durations, kept by review.Store.Create), at most one row a
// repository and day (and duration bucket), so a chart's cost does not grow
// with the reviews it counts; they are summed into days and weeks in Go,
// because SQLite and PostgreSQL share no date functions. Durations are kept
// as histograms, so percentiles are estimates (see ReviewBucket). The
// window is bounded (MaxWindow) so that the rows read are too.
package insight

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

// ErrNotFound is returned for a repository the account does not own (or
// that does not exist): the two are indistinguishable.
var ErrNotFound = errors.New("not found")

// MaxWindow is the longest window a query reads: a year of reviews of an
// account at its rate limit is still a bounded read.
const MaxWindow = 366 * 24 * time.Hour

// Scope is whose data a query reads: one account's, all its repositories
// or, when Owner and Name are set, one of them.
type Scope struct {
	AccountID string
	Owner     string
	Name      string
}

// Window is the half-open time range [Since, Until) a query reads.
type Window struct {
	Since, Until time.Time
}

// LastWeeks returns the window of the n ISO weeks (Monday 00:00 UTC) up to
// and including now's.
func LastWeeks(now time.Time, n int) Window {
	start := weekStart(now)
	return Window{Since: start.AddDate(0, 0, -7*(n-1)), Until: start.AddDate(0, 0, 7)}
}

// LastDays returns the window of the n UTC days up to and including now's.
func LastDays(now time.Time, n int) Window {
	start := dayStart(now)
	return Window{Since: start.AddDate(0, 0, -(n - 1)), Until: start.AddDate(0, 0, 1)}
}

func (w Window) check() error {
	switch {
	case !w.Since.Before(w.Until):
		return fmt.Errorf("window %s to %s: since must be before until", w.Since.Format(time.RFC3339), w.Until.Format(time.RFC3339))
	case w.Until.Sub(w.Since) > MaxWindow:
		return fmt.Errorf("window %s to %s: longer than %d days; ask for a shorter one", w.Since.Format(time.RFC3339), w.Until.Format(time.RFC3339), MaxWindow/(24*time.Hour))
	}
	return nil
}

func weekStart(t time.Time) time.Time {
	d := dayStart(t)
	// Monday is the first day of an ISO week; Go's Sunday is 0.
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

func dayStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Period is the length of a bucket: a UTC day or an ISO week.
type Period int

// Periods of a bucket.
const (
	Day Period = iota
	Week
)

func (p Period) start(t time.Time) time.Time {
	if p == Week {
		return weekStart(t)
	}
	return dayStart(t)
}

func (p Period) next(t time.Time) time.Time {
	if p == Week {
		return t.AddDate(0, 0, 7)
	}
	return t.AddDate(0, 0, 1)
}

// Label names the bucket that starts at start: "2026-W48" for a week,
// "2026-11-23" for a day.
func (p Period) Label(start time.Time) string {
	if p == Week {
		y, w := start.ISOWeek()
		return fmt.Sprintf("%d-W%02d", y, w)
	}
	return start.Format(time.DateOnly)
}

// buckets returns the starts of every bucket that overlaps w, oldest first.
func (p Period) buckets(w Window) []time.Time {
	var out []time.Time
	for t := p.start(w.Since); t.Before(w.Until); t = p.next(t) {
		out = append(out, t)
	}
	return out
}

// index returns the bucket of at among starts (which begin at or before it).
func index(starts []time.Time, at time.Time) int {
	i, found := slices.BinarySearchFunc(starts, at, func(s, at time.Time) int { return s.Compare(at) })
	if found {
		return i
	}
	return i - 1
}

// repositoryID returns the id of the scope's repository, "" for every
// repository of the account, or ErrNotFound.
func repositoryID(ctx context.Context, q store.Querier, s Scope) (string, error) {
	if s.Owner == "" && s.Name == "" {
		return "", nil
	}
	r, err := account.FindRepository(ctx, q, s.AccountID, s.Owner, s.Name)
	if errors.Is(err, account.ErrNotFound) {
		return "", ErrNotFound
	}
	return r.ID, err
}

// queryScope runs ofRepo when the scope names a repository, with its id,
// or else ofAccount, with the account's; both take the window's bounds as
// $2 and $3, in whole UTC days: from the day of Since (the rollups hold
// whole days) to Until.
func queryScope(ctx context.Context, q store.Querier, s Scope, w Window, ofRepo, ofAccount string) (store.Rows, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	repoID, err := repositoryID(ctx, q, s)
	if err != nil {
		return nil, err
	}
	query, key := ofAccount, s.AccountID
	if repoID != "" {
		query, key = ofRepo, repoID
	}
	return q.Query(ctx, query, key, store.Micros(dayStart(w.Since)), store.Micros(w.Until))
}

// SeverityWeek is one ISO week's findings.
type SeverityWeek struct {
	Start time.Time // Monday 00:00 UTC
	Label string    // "2026-W48"
	// Counts holds the findings of the week's reviews per severity, in
	// the order of review.Severities (critical first).
	Counts []int
}

// The scope's daily rollups (review_days, which review.Store.Create keeps)
// in the window, summed per day over the scope's repositories. One query
// per scope, so each uses its index: the primary key (repository_id, day)
// for one repository, and for the account's, its repositories
// (repositories_account_owner_name) each with that key. The sums are cast
// because PostgreSQL's SUM of a BIGINT is a NUMERIC.
const (
	daysSelect = `SELECT d.day, CAST(SUM(d.approve) AS BIGINT), CAST(SUM(d.comment) AS BIGINT), CAST(SUM(d.request_changes) AS BIGINT),
	CAST(SUM(d.critical) AS BIGINT), CAST(SUM(d.high) AS BIGINT), CAST(SUM(d.medium) AS BIGINT), CAST(SUM(d.low) AS BIGINT), CAST(SUM(d.info) AS BIGINT),
	CAST(SUM(d.timed) AS BIGINT), MAX(d.longest_ms)
FROM review_days d`
	daysOfRepo    = daysSelect + ` WHERE d.repository_id = $1 AND d.day >= $2 AND d.day < $3 GROUP BY d.day`
	daysOfAccount = daysSelect + ` JOIN repositories p ON p.id = d.repository_id
WHERE p.account_id = $1 AND d.day >= $2 AND d.day < $3 GROUP BY d.day`
)

// day is one UTC day of the scope's rollups.
type day struct {
	day        int64 // Unix microseconds of 00:00 UTC
	verdicts   [3]int
	severities [5]int
	timed      int
	longestMS  int64
}

// days reads the scope's rollups of the window's days, oldest first.
func days(ctx context.Context, q store.Querier, s Scope, w Window) ([]day, error) {
	rows, err := queryScope(ctx, q, s, w, daysOfRepo, daysOfAccount)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []day
	for rows.Next() {
		var d day
		v, sev := &d.verdicts, &d.severities
		if err := rows.Scan(&d.day, &v[0], &v[1], &v[2], &sev[0], &sev[1], &sev[2], &sev[3], &sev[4], &d.timed, &d.longestMS); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// FindingsPerWeek counts the findings of the scope's reviews synthesized in
// the window per ISO week and severity. Every week of the window is listed,
// oldest first, weeks without findings with zero counts. It reads the
// daily rollups, so it counts whole UTC days: those the window overlaps.
func FindingsPerWeek(ctx context.Context, q store.Querier, s Scope, w Window) ([]SeverityWeek, error) {
	ds, err := days(ctx, q, s, w)
	if err != nil {
		return nil, fmt.Errorf("findings per week: %w", err)
	}
	starts := Week.buckets(w)
	weeks := make([]SeverityWeek, len(starts))
	for i, start := range starts {
		weeks[i] = SeverityWeek{Start: start, Label: Week.Label(start), Counts: make([]int, len(review.Severities))}
	}
	for _, d := range ds {
		counts := weeks[index(starts, store.FromMicros(d.day))].Counts
		for i, n := range d.severities {
			counts[i] += n
		}
	}
	return weeks, nil
}

// Verdicts, in the order ReviewBucket.Verdicts counts them (and the
// rollups' columns are read).
var Verdicts = []string{review.VerdictApprove, review.VerdictComment, review.VerdictRequestChanges}

// ReviewBucket is one day's (or week's) reviews.
type ReviewBucket struct {
	Start time.Time // 00:00 UTC of the day, or Monday's of the week
	Label string    // "2026-11-23", or "2026-W48"
	// Verdicts counts the reviews per verdict, in the order of Verdicts.
	Verdicts []int
	// Timed is how many of the reviews have a duration (reviews stored
	// before durations were kept have none); Median and P90 are of those,
	// and zero when Timed is.
	//
	// Median and P90 are estimates from the rollups' histogram of
	// durations, and upper bounds: each is the upper bound of the bucket
	// (review.DurationBounds, about 1.5 times apart) that holds the
	// nearest-rank percentile, or the period's longest review when that is
	// shorter. The true percentile is at most that, and more than the
	// bucket's lower bound.
	Timed  int
	Median time.Duration
	P90    time.Duration
}

// The scope's duration histograms (review_day_durations) of the window's
// days, summed over its repositories, through the primary key as the days
// are.
const (
	durationsSelect    = `SELECT d.day, d.bucket, CAST(SUM(d.n) AS BIGINT) FROM review_day_durations d`
	durationsOfRepo    = durationsSelect + ` WHERE d.repository_id = $1 AND d.day >= $2 AND d.day < $3 GROUP BY d.day, d.bucket`
	durationsOfAccount = durationsSelect + ` JOIN repositories p ON p.id = d.repository_id
WHERE p.account_id = $1 AND d.day >= $2 AND d.day < $3 GROUP BY d.day, d.bucket`
)

// ReviewsOverTime counts the scope's reviews synthesized in the window per
// period (Day or Week) and verdict, with estimates of the median and 90th
// percentile of their durations (see ReviewBucket). Every period of the
// window is listed, oldest first. It reads the daily rollups, so it counts
// whole UTC days: those the window overlaps.
func ReviewsOverTime(ctx context.Context, q store.Querier, s Scope, w Window, p Period) ([]ReviewBucket, error) {
	ds, err := days(ctx, q, s, w)
	if err != nil {
		return nil, fmt.Errorf("reviews over time: %w", err)
	}
	starts := p.buckets(w)
	out := make([]ReviewBucket, len(starts))
	longest := make([]time.Duration, len(starts))
	for i, start := range starts {
		out[i] = ReviewBucket{Start: start, Label: p.Label(start), Verdicts: make([]int, len(Verdicts))}
	}
	for _, d := range ds {
		i := index(starts, store.FromMicros(d.day))
		for v, n := range d.verdicts {
			out[i].Verdicts[v] += n
		}
		out[i].Timed += d.timed
		longest[i] = max(longest[i], time.Duration(d.longestMS)*time.Millisecond)
	}

	rows, err := queryScope(ctx, q, s, w, durationsOfRepo, durationsOfAccount)
	if err != nil {
		return nil, fmt.Errorf("reviews over time: %w", err)
	}
	defer rows.Close()
	histograms := make([][]int, len(starts))
	for rows.Next() {
		var (
			at        int64
			bucket, n int
		)
		if err := rows.Scan(&at, &bucket, &n); err != nil {
			return nil, fmt.Errorf("reviews over time: %w", err)
		}
		if bucket < 0 || bucket > len(review.DurationBounds) {
			continue // no bucket this binary knows; Create makes none
		}
		i := index(starts, store.FromMicros(at))
		if histograms[i] == nil {
			histograms[i] = make([]int, len(review.DurationBounds)+1)
		}
		histograms[i][bucket] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reviews over time: %w", err)
	}
	for i, h := range histograms {
		if out[i].Timed == 0 || h == nil {
			continue
		}
		out[i].Median = percentile(h, 50, longest[i])
		out[i].P90 = percentile(h, 90, longest[i])
	}
	return out, nil
}

// percentile estimates the nearest-rank percentile (the smallest duration
// at least pct percent of them are at or below) from a histogram over
// review.DurationBounds: the upper bound of the bucket that holds it, or
// longest when that is shorter (and for the last bucket, which has no
// bound), so the estimate is never below the true value.
func percentile(histogram []int, pct float64, longest time.Duration) time.Duration {
	total := 0
	for _, n := range histogram {
		total += n
	}
	rank := max(int(math.Ceil(pct/100*float64(total))), 1)
	seen := 0
	for b, n := range histogram {
		seen += n
		if seen >= rank && b < len(review.DurationBounds) {
			return min(review.DurationBounds[b], longest)
		}
	}
	return longest
}

// EndpointSuccess is how one webhook endpoint's deliveries went.
type EndpointSuccess struct {
	EndpointID  string
	URL         string
	Description string
	// Attempts are the attempts of the deliveries made in the window;
	// Succeeded, those that got a 2xx answer.
	Attempts  int
	Succeeded int
}

// Rate is the fraction (0 to 1) of attempts that succeeded, and false when
// there were none.
func (e EndpointSuccess) Rate() (float64, bool) {
	if e.Attempts == 0 {
		return 0, false
	}
	return float64(e.Succeeded) / float64(e.Attempts), true
}

// The account's endpoints (webhook_endpoints_account), each with the
// deliveries made in the window (webhook_deliveries_endpoint) and their
// attempts (the primary key of webhook_attempts). An attempt succeeded when
// it recorded no error: a 2xx answer (see webhook's Worker).
const deliverySuccess = `SELECT e.id, e.url, e.description, COUNT(a.delivery_id), COUNT(CASE WHEN a.error = '' THEN 1 END)
FROM webhook_endpoints e
LEFT JOIN webhook_deliveries d ON d.endpoint_id = e.id AND d.created_at >= $2 AND d.created_at < $3
LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
WHERE e.account_id = $1 AND e.deleted_at IS NULL
GROUP BY e.id, e.url, e.description, e.created_at
ORDER BY e.created_at, e.id`

// DeliverySuccess reports, for each of the account's webhook endpoints not
// deleted, oldest first, the attempts of the deliveries made in the window
// and how many succeeded. An endpoint without deliveries in the window is
// listed with none.
func DeliverySuccess(ctx context.Context, q store.Querier, accountID string, w Window) ([]EndpointSuccess, error) {
	if err := w.check(); err != nil {
		return nil, fmt.Errorf("delivery success: %w", err)
	}
	rows, err := q.Query(ctx, deliverySuccess, accountID, store.Micros(w.Since), store.Micros(w.Until))
	if err != nil {
		return nil, fmt.Errorf("delivery success: %w", err)
	}
	defer rows.Close()
	out := []EndpointSuccess{}
	for rows.Next() {
		var e EndpointSuccess
		if err := rows.Scan(&e.EndpointID, &e.URL, &e.Description, &e.Attempts, &e.Succeeded); err != nil {
			return nil, fmt.Errorf("delivery success: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("delivery success: %w", err)
	}
	return out, nil
}
