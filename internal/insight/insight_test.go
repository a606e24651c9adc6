package insight_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/insight"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/webhook"
)

// now is a Thursday: its ISO week, 2026-W48, runs from Monday 23 November.
var now = time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)

type bundle struct {
	db      *store.DB
	widgets account.Repository // acme's acme/widgets
	gadgets account.Repository // acme's acme/gadgets
	other   account.Repository // globex's globex/widgets: never in acme's answers
}

func forEachBackend(t *testing.T, fn func(t *testing.T, b bundle)) {
	t.Helper()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		db := be.Open(t)
		fn(t, bundle{
			db:      db,
			widgets: storetest.Repo(t, db, "acme", "acme", "widgets"),
			gadgets: storetest.Repo(t, db, "acme", "acme", "gadgets"),
			other:   storetest.Repo(t, db, "globex", "globex", "widgets"),
		})
	})
}

// addReview stores a review of repo at at, with findings of the given
// severities, the verdict, and the duration (0: not known).
func addReview(t *testing.T, db *store.DB, repo account.Repository, at time.Time, verdict string, d time.Duration, severities ...string) {
	t.Helper()
	r := storetest.NewReview(repo, 1, len(severities), at)
	for i, s := range severities {
		r.Findings[i].Severity = s
	}
	r.Verdict, r.Duration = verdict, d
	if err := review.NewStore(db).Create(context.Background(), db.Writer(), &r); err != nil {
		t.Fatal(err)
	}
}

func TestFindingsPerWeek(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b bundle) {
		ctx := context.Background()
		w := insight.LastWeeks(now, 3) // 2026-W46 to W48
		approve := review.VerdictApprove
		// W46, its first microsecond and last: counted.
		addReview(t, b.db, b.widgets, w.Since, approve, 0, "critical", "high", "high")
		addReview(t, b.db, b.widgets, time.Date(2026, 11, 15, 23, 59, 59, 999999000, time.UTC), approve, 0, "info")
		// W48: one in each repository.
		addReview(t, b.db, b.widgets, now, approve, 0, "medium", "low", "low", "low")
		addReview(t, b.db, b.gadgets, now, approve, 0, "critical")
		// Outside the window: before it, and at its (exclusive) end.
		addReview(t, b.db, b.widgets, w.Since.Add(-time.Microsecond), approve, 0, "critical")
		addReview(t, b.db, b.widgets, w.Until, approve, 0, "critical")
		// Another account's, in the window, in a repository of the same name.
		addReview(t, b.db, b.other, now, approve, 0, "critical", "critical", "high", "medium", "low", "info")

		got, err := insight.FindingsPerWeek(ctx, b.db.Reader(), insight.Scope{AccountID: b.widgets.AccountID}, w)
		if err != nil {
			t.Fatal(err)
		}
		want := []insight.SeverityWeek{
			{Start: time.Date(2026, 11, 9, 0, 0, 0, 0, time.UTC), Label: "2026-W46", Counts: []int{1, 2, 0, 0, 1}},
			{Start: time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC), Label: "2026-W47", Counts: []int{0, 0, 0, 0, 0}},
			{Start: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Label: "2026-W48", Counts: []int{1, 0, 1, 3, 0}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("acme's findings per week:\n%+v\nwant\n%+v", got, want)
		}

		// One repository, named in another case.
		got, err = insight.FindingsPerWeek(ctx, b.db.Reader(), insight.Scope{AccountID: b.widgets.AccountID, Owner: "ACME", Name: "Widgets"}, w)
		if err != nil {
			t.Fatal(err)
		}
		want[2].Counts = []int{0, 0, 1, 3, 0}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("acme/widgets' findings per week:\n%+v\nwant\n%+v", got, want)
		}

		// globex's own repository of that name, and nothing of acme's.
		got, err = insight.FindingsPerWeek(ctx, b.db.Reader(), insight.Scope{AccountID: b.other.AccountID, Owner: "globex", Name: "widgets"}, w)
		if err != nil {
			t.Fatal(err)
		}
		if c := got[2].Counts; !reflect.DeepEqual(c, []int{2, 1, 1, 1, 1}) || sum(got[0].Counts) != 0 {
			t.Errorf("globex's findings per week %+v, want only its own review's in W48", got)
		}

		// Another account's repository is not found, not empty.
		_, err = insight.FindingsPerWeek(ctx, b.db.Reader(), insight.Scope{AccountID: b.widgets.AccountID, Owner: "globex", Name: "widgets"}, w)
		if !errors.Is(err, insight.ErrNotFound) {
			t.Errorf("acme asking for globex/widgets: %v, want ErrNotFound", err)
		}
	})
}

func sum(ns []int) int {
	s := 0
	for _, n := range ns {
		s += n
	}
	return s
}

func TestReviewsOverTime(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b bundle) {
		ctx := context.Background()
		w := insight.LastDays(now, 2) // 25 and 26 November
		day1 := w.Since.Add(9 * time.Hour)
		approve, comment, changes := review.VerdictApprove, review.VerdictComment, review.VerdictRequestChanges
		// Day 1: ten timed reviews of 1 to 10 s, and one stored before
		// durations were kept.
		for i := 1; i <= 10; i++ {
			v := approve
			if i > 7 {
				v = changes
			}
			addReview(t, b.db, b.widgets, day1.Add(time.Duration(i)*time.Minute), v, time.Duration(i)*time.Second)
		}
		addReview(t, b.db, b.gadgets, day1, comment, 0)
		// Day 2: none timed.
		addReview(t, b.db, b.widgets, now, comment, 0)
		// Another account's, timed, the same days.
		addReview(t, b.db, b.other, day1, approve, time.Hour)
		addReview(t, b.db, b.other, now, changes, time.Hour)

		got, err := insight.ReviewsOverTime(ctx, b.db.Reader(), insight.Scope{AccountID: b.widgets.AccountID}, w, insight.Day)
		if err != nil {
			t.Fatal(err)
		}
		// The percentiles are the upper bounds of their histogram buckets:
		// the median, 5 s, is a bound itself; the 90th percentile, 9 s, is
		// in the bucket over 7 s up to 10 s, so 10 s (the longest review
		// took 10 s too).
		want := []insight.ReviewBucket{
			{Start: w.Since, Label: "2026-11-25", Verdicts: []int{7, 1, 3}, Timed: 10, Median: 5 * time.Second, P90: 10 * time.Second},
			{Start: w.Since.AddDate(0, 0, 1), Label: "2026-11-26", Verdicts: []int{0, 1, 0}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("acme's reviews per day:\n%+v\nwant\n%+v", got, want)
		}

		// The same reviews by week: W48 holds both days.
		got, err = insight.ReviewsOverTime(ctx, b.db.Reader(), insight.Scope{AccountID: b.widgets.AccountID, Owner: "acme", Name: "widgets"}, w, insight.Week)
		if err != nil {
			t.Fatal(err)
		}
		want = []insight.ReviewBucket{
			{Start: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Label: "2026-W48", Verdicts: []int{7, 1, 3}, Timed: 10, Median: 5 * time.Second, P90: 10 * time.Second},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("acme/widgets' reviews per week:\n%+v\nwant\n%+v", got, want)
		}

		_, err = insight.ReviewsOverTime(ctx, b.db.Reader(), insight.Scope{AccountID: b.widgets.AccountID, Owner: "acme", Name: "nothing"}, w, insight.Day)
		if !errors.Is(err, insight.ErrNotFound) {
			t.Errorf("a repository acme does not have: %v, want ErrNotFound", err)
		}
	})
}

// addDelivery stores a delivery to endpoint made at at, with one attempt
// per entry of errs ("" for one that succeeded), a minute apart.
func addDelivery(t *testing.T, db *store.DB, accountID, endpointID string, at time.Time, errs ...string) {
	t.Helper()
	ctx := context.Background()
	err := db.InTx(ctx, func(tx store.Tx) error {
		eventID := id.New(id.Event, at)
		if _, err := tx.Exec(ctx, `INSERT INTO events (id, account_id, name, data, created_at) VALUES ($1, $2, 'review.completed', '{}', $3)`,
			eventID, accountID, store.Micros(at)); err != nil {
			return err
		}
		deliveryID := id.New(id.Delivery, at)
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_id, event, status, attempts, created_at, updated_at)
VALUES ($1, $2, $3, $4, 'review.completed', 'failed', $5, $6, $6)`, deliveryID, endpointID, accountID, eventID, len(errs), store.Micros(at)); err != nil {
			return err
		}
		for i, e := range errs {
			code := 200
			if e != "" {
				code = 503
			}
			if _, err := tx.Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, number, attempted_at, status_code, latency_us, error)
VALUES ($1, $2, $3, $4, 1000, $5)`, deliveryID, i+1, store.Micros(at.Add(time.Duration(i)*time.Minute)), code, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeliverySuccess(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b bundle) {
		ctx := context.Background()
		acme, globex := b.widgets.AccountID, b.other.AccountID
		w := insight.LastDays(now, 7)
		hostile := "https://hooks.example.com/</text><script>alert(1)</script>"
		endpoint := func(accountID, url string, at time.Time) string {
			e, _, err := webhook.Create(ctx, b.db.Writer(), accountID, url, nil, "desc of "+url, "", at)
			if err != nil {
				t.Fatal(err)
			}
			return e.ID
		}
		first := endpoint(acme, hostile, now.Add(-48*time.Hour))
		second := endpoint(acme, "https://ci.example.com/quorum", now.Add(-24*time.Hour))
		quiet := endpoint(acme, "https://quiet.example.com/", now.Add(-12*time.Hour))
		deleted := endpoint(acme, "https://gone.example.com/", now.Add(-6*time.Hour))
		theirs := endpoint(globex, "https://globex.example.com/", now.Add(-6*time.Hour))

		addDelivery(t, b.db, acme, first, now.Add(-time.Hour), "HTTP 503 Service Unavailable", "")
		addDelivery(t, b.db, acme, first, now.Add(-2*time.Hour), "")
		addDelivery(t, b.db, acme, first, w.Since.Add(-time.Microsecond), "", "", "") // before the window
		addDelivery(t, b.db, acme, second, now, "HTTP 503 Service Unavailable", "HTTP 503 Service Unavailable")
		addDelivery(t, b.db, acme, deleted, now, "")
		addDelivery(t, b.db, globex, theirs, now, "", "")
		if err := webhook.Delete(ctx, b.db.Writer(), acme, deleted, now); err != nil {
			t.Fatal(err)
		}

		got, err := insight.DeliverySuccess(ctx, b.db.Reader(), acme, w)
		if err != nil {
			t.Fatal(err)
		}
		want := []insight.EndpointSuccess{
			{EndpointID: first, URL: hostile, Description: "desc of " + hostile, Attempts: 3, Succeeded: 2},
			{EndpointID: second, URL: "https://ci.example.com/quorum", Description: "desc of https://ci.example.com/quorum", Attempts: 2},
			{EndpointID: quiet, URL: "https://quiet.example.com/", Description: "desc of https://quiet.example.com/"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("acme's delivery success:\n%+v\nwant\n%+v", got, want)
		}
		if r, ok := got[0].Rate(); !ok || fmt.Sprintf("%.4f", r) != "0.6667" {
			t.Errorf("rate of 2 in 3: %v %v", r, ok)
		}
		if _, ok := got[2].Rate(); ok {
			t.Error("an endpoint without attempts has a rate")
		}

		got, err = insight.DeliverySuccess(ctx, b.db.Reader(), globex, w)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].EndpointID != theirs || got[0].Attempts != 2 || got[0].Succeeded != 2 {
			t.Errorf("globex's delivery success %+v, want only its endpoint, 2 of 2", got)
		}
	})
}

func TestWindowIsBounded(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	long := insight.Window{Since: now.AddDate(-2, 0, 0), Until: now}
	backwards := insight.Window{Since: now, Until: now.Add(-time.Hour)}
	for _, w := range []insight.Window{long, backwards} {
		if _, err := insight.FindingsPerWeek(ctx, db.Reader(), insight.Scope{AccountID: "acct_x"}, w); err == nil {
			t.Errorf("findings per week in %v: no error", w)
		}
		if _, err := insight.ReviewsOverTime(ctx, db.Reader(), insight.Scope{AccountID: "acct_x"}, w, insight.Day); err == nil {
			t.Errorf("reviews over time in %v: no error", w)
		}
		if _, err := insight.DeliverySuccess(ctx, db.Reader(), "acct_x", w); err == nil {
			t.Errorf("delivery success in %v: no error", w)
		}
	}
}

func TestLastWeeksAndDays(t *testing.T) {
	t.Parallel()
	w := insight.LastWeeks(now, 12)
	if want := time.Date(2026, 9, 7, 0, 0, 0, 0, time.UTC); !w.Since.Equal(want) || w.Since.Weekday() != time.Monday {
		t.Errorf("12 weeks since %v, want Monday %v", w.Since, want)
	}
	if want := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC); !w.Until.Equal(want) {
		t.Errorf("12 weeks until %v, want %v", w.Until, want)
	}
	d := insight.LastDays(now.In(time.FixedZone("JST", 9*3600)), 1)
	if d.Since != time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC) || d.Until.Sub(d.Since) != 24*time.Hour {
		t.Errorf("today is %v to %v, want the UTC day of 26 November", d.Since, d.Until)
	}
	// ISO years: 1 January 2027 is a Friday of 2026's week 53.
	if got := insight.Week.Label(time.Date(2026, 12, 28, 0, 0, 0, 0, time.UTC)); got != "2026-W53" {
		t.Errorf("label of the week of 28 December 2026: %s", got)
	}
}

// TestPercentilesAreUpperBounds checks the estimates against the exact
// nearest-rank percentiles of the durations stored: never lower, and the
// upper bound of the exact value's bucket, or the longest review when that
// is shorter. Another account's reviews on the same day change nothing.
func TestPercentilesAreUpperBounds(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b bundle) {
		ctx := context.Background()
		w := insight.LastDays(now, 1)
		var durations []time.Duration
		for i := range 37 {
			// From 400 ms to about 2 h, unevenly.
			d := time.Duration(400+i*i*i*i/2) * time.Millisecond * 3 / 2
			durations = append(durations, d)
			addReview(t, b.db, []account.Repository{b.widgets, b.gadgets}[i%2], w.Since.Add(time.Duration(i)*time.Minute), review.VerdictApprove, d)
		}
		addReview(t, b.db, b.other, w.Since, review.VerdictApprove, 9*time.Hour)
		addReview(t, b.db, b.other, w.Since, review.VerdictApprove, time.Millisecond)
		slices.Sort(durations)
		exact := func(pct float64) time.Duration {
			return durations[int(math.Ceil(pct/100*float64(len(durations))))-1]
		}
		estimate := func(d time.Duration) time.Duration {
			for _, bound := range review.DurationBounds {
				if d <= bound {
					return min(bound, durations[len(durations)-1])
				}
			}
			return durations[len(durations)-1]
		}

		got, err := insight.ReviewsOverTime(ctx, b.db.Reader(), insight.Scope{AccountID: b.widgets.AccountID}, w, insight.Day)
		if err != nil {
			t.Fatal(err)
		}
		day := got[0]
		if day.Timed != len(durations) {
			t.Errorf("%d timed reviews, want %d", day.Timed, len(durations))
		}
		for _, c := range []struct {
			name string
			pct  float64
			got  time.Duration
		}{{"median", 50, day.Median}, {"90th percentile", 90, day.P90}} {
			if c.got < exact(c.pct) || c.got != estimate(exact(c.pct)) {
				t.Errorf("%s %s, want %s: the bound of the bucket of the exact %s", c.name, c.got, estimate(exact(c.pct)), exact(c.pct))
			}
		}
	})
}
