package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// completed runs the fixture change with one finding (or none) at now.
func completed(t *testing.T, now time.Time, findings ...specialist.Finding) Result {
	t.Helper()
	o := opts()
	o.Now = storetest.NewClock(now).Now
	res := Run(context.Background(), fixture(t), []specialist.Specialist{fake{name: "security", findings: findings}}, o)
	if !res.Completed() {
		t.Fatalf("run failed: %s", res.Review.Summary)
	}
	return res
}

func events(t *testing.T, db *store.DB, accountID string) []event.Event {
	t.Helper()
	evs, err := event.List(context.Background(), db.Reader(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func count(t *testing.T, db *store.DB, query string) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSaveCommitsReviewAndEvents(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		db := b.Open(t)
		repo := storetest.Repo(t, db, "acme", "acme", "api")
		res := completed(t, t0, fnd("gosec:G201", "high", "app.go", 10, "SQL built with fmt.Sprintf"))

		saved, err := Save(ctx, db, repo.AccountID, repo.ID, res, RateLimit{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := review.NewStore(db).Get(ctx, repo.AccountID, saved.ReviewID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != res.Review.ID || got.Verdict != review.VerdictRequestChanges || got.Summary != res.Review.Summary || len(got.Findings) != 1 {
			t.Fatalf("stored review = %+v, want the run's", got.Review)
		}
		want := res.Review.Findings[0]
		if f := got.Findings[0]; f.ID != want.ID || f.Fingerprint != want.Fingerprint || f.Excerpt.StartLine != 7 || f.Rule != "gosec:G201" {
			t.Errorf("stored finding = %+v, want the run's %+v", f, want)
		}

		evs := events(t, db, repo.AccountID)
		if len(evs) != 2 || len(saved.Events) != 2 {
			t.Fatalf("%d events (saved says %d), want review.completed and finding.created", len(evs), len(saved.Events))
		}
		byName := map[string]json.RawMessage{}
		for _, e := range evs {
			byName[e.Name] = e.Data
		}
		var done event.ReviewCompletedData
		if err := json.Unmarshal(byName[event.ReviewCompleted], &done); err != nil {
			t.Fatal(err)
		}
		wantDone := event.ReviewCompletedData{ReviewID: got.ID, Owner: "acme", Repo: "api", PRNumber: 7, HeadSHA: got.HeadSHA,
			Verdict: "request_changes", FindingsCount: 1, SpecialistsSucceeded: []string{"security"},
			RateLimit: event.RateLimit{Used: 1, MaxReviews: 100, ResetsAt: time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)}}
		if !equalJSON(t, done, wantDone) {
			t.Errorf("review.completed = %+v, want %+v", done, wantDone)
		}
		var created map[string]any
		if err := json.Unmarshal(byName[event.FindingCreated], &created); err != nil {
			t.Fatal(err)
		}
		wantCreated := map[string]any{"review_id": got.ID, "findings": []any{map[string]any{
			"id": want.ID, "specialist": "security", "category": "logic", "severity": "high",
			"path": "app.go", "line": float64(10), "headline": "SQL built with fmt.Sprintf"}}}
		if !equalJSON(t, created, wantCreated) {
			t.Errorf("finding.created = %v, want %v", created, wantCreated)
		}
	})
}

func TestSaveWithoutFindingsHasNoFindingCreated(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	repo := storetest.Repo(t, db, "acme", "acme", "api")
	if _, err := Save(context.Background(), db, repo.AccountID, repo.ID, completed(t, t0), RateLimit{}); err != nil {
		t.Fatal(err)
	}
	evs := events(t, db, repo.AccountID)
	if len(evs) != 1 || evs[0].Name != event.ReviewCompleted {
		t.Errorf("events = %v, want review.completed alone", evs)
	}
}

// TestSaveIsAtomic fails the transaction at its last write, the
// finding.created event, after the review, its findings and
// review.completed were written: none of them may remain.
func TestSaveIsAtomic(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		db := b.Open(t)
		repo := storetest.Repo(t, db, "acme", "acme", "api")
		res := completed(t, t0, fnd("gosec:G201", "high", "app.go", 10, "SQL"))
		crash := errors.New("crash before finding.created")
		var wrote []string
		failing := func(ctx context.Context, tx store.Tx, at time.Time, accountID, name string, data any) (string, error) {
			if name == event.FindingCreated {
				return "", crash
			}
			id, err := event.RecordAt(ctx, tx, at, accountID, name, data)
			wrote = append(wrote, name)
			return id, err
		}
		if _, err := save(ctx, db, repo.AccountID, repo.ID, res, RateLimit{}, failing); !errors.Is(err, crash) {
			t.Fatalf("save error = %v, want the crash", err)
		}
		if !slices.Equal(wrote, []string{event.ReviewCompleted}) {
			t.Fatalf("wrote %v before the crash, want review.completed", wrote)
		}
		for _, table := range []string{"reviews", "findings", "events"} {
			if n := count(t, db, "SELECT COUNT(*) FROM "+table); n != 0 {
				t.Errorf("%d rows in %s after a failed save, want 0", n, table)
			}
		}
		// And the same save, not interrupted, commits all of it.
		if _, err := Save(ctx, db, repo.AccountID, repo.ID, res, RateLimit{}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db, "SELECT COUNT(*) FROM events"); n != 2 {
			t.Errorf("%d events after the save, want 2", n)
		}
	})
}

func TestSaveFailedRun(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		db := b.Open(t)
		repo := storetest.Repo(t, db, "acme", "acme", "api")
		res := Run(ctx, fixture(t), []specialist.Specialist{
			fake{name: "logic", err: errors.New("x")}, fake{name: "tests"}, fake{name: "security", err: errors.New("y")},
		}, opts())
		saved, err := Save(ctx, db, repo.AccountID, repo.ID, res, RateLimit{})
		if err != nil {
			t.Fatal(err)
		}
		if saved.ReviewID != "" || count(t, db, "SELECT COUNT(*) FROM reviews") != 0 {
			t.Errorf("a failed run stored a review")
		}
		evs := events(t, db, repo.AccountID)
		if len(evs) != 1 || evs[0].Name != event.ReviewFailed {
			t.Fatalf("events = %v, want review.failed", evs)
		}
		var got event.ReviewFailedData
		if err := json.Unmarshal(evs[0].Data, &got); err != nil {
			t.Fatal(err)
		}
		want := event.ReviewFailedData{Owner: "acme", Repo: "api", PRNumber: 7, HeadSHA: res.Review.HeadSHA,
			Reason: "quorum_failure", SpecialistsFailed: []string{"logic", "security"}}
		if !equalJSON(t, got, want) {
			t.Errorf("review.failed = %+v, want %+v", got, want)
		}
	})
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		db := b.Open(t)
		repo := storetest.Repo(t, db, "acme", "acme", "api")
		repo2 := storetest.Repo(t, db, "acme", "acme", "web")
		other := storetest.Repo(t, db, "globex", "globex", "api")
		limits := RateLimit{Window: time.Hour, MaxReviews: 2}
		clock := storetest.NewClock(t0) // 10:15
		resets := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)

		// A review of the hour before does not count; another account's
		// reviews do not count.
		if _, err := Save(ctx, db, repo.AccountID, repo.ID, completed(t, t0.Add(-20*time.Minute)), limits); err != nil {
			t.Fatal(err)
		}
		if _, err := Save(ctx, db, other.AccountID, other.ID, completed(t, t0), limits); err != nil {
			t.Fatal(err)
		}
		u, err := CheckRateLimit(ctx, db.Reader(), repo.AccountID, limits, clock.Now())
		if err != nil || u.Used != 0 || !u.ResetsAt.Equal(resets) {
			t.Fatalf("usage %+v, err %v; want 0 used, resets at 11:00", u, err)
		}

		// Two reviews of two repositories of the account fill the window.
		s1, err := Save(ctx, db, repo.AccountID, repo.ID, completed(t, clock.Now()), limits)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(40 * time.Minute) // 10:55
		s2, err := Save(ctx, db, repo.AccountID, repo2.ID, completed(t, clock.Now()), limits)
		if err != nil {
			t.Fatal(err)
		}
		if s1.RateLimit.Used != 1 || s2.RateLimit.Used != 2 || s2.RateLimit.MaxReviews != 2 || !s2.RateLimit.ResetsAt.Equal(resets) {
			t.Errorf("rate limits %+v then %+v, want used 1 then 2 of 2, resetting at 11:00", s1.RateLimit, s2.RateLimit)
		}

		u, err = CheckRateLimit(ctx, db.Reader(), repo.AccountID, limits, clock.Now())
		if !errors.Is(err, ErrRateLimited) || u.Used != 2 {
			t.Fatalf("third review: usage %+v, err %v; want ErrRateLimited at 2 used", u, err)
		}
		// A minute later: events of the same instant have no order between
		// them (their ids' random part decides).
		clock.Advance(time.Minute) // 10:56
		skipped := Skipped("acme", "api", 9, "abc123", event.ReasonRateLimit, clock.Now())
		if _, err := Save(ctx, db, repo.AccountID, repo.ID, skipped, limits); err != nil {
			t.Fatal(err)
		}
		evs := events(t, db, repo.AccountID)
		last := evs[len(evs)-1]
		want := `{"owner":"acme","repo":"api","pr_number":9,"head_sha":"abc123","reason":"rate_limit","specialists_failed":[]}`
		if last.Name != event.ReviewFailed || string(last.Data) != want {
			t.Errorf("last event %s %s, want review.failed %s", last.Name, last.Data, want)
		}

		// At 11:00 the count starts again.
		clock.Advance(4 * time.Minute)
		u, err = CheckRateLimit(ctx, db.Reader(), repo.AccountID, limits, clock.Now())
		if err != nil || u.Used != 0 || !u.ResetsAt.Equal(resets.Add(time.Hour)) {
			t.Errorf("after the reset: usage %+v, err %v; want 0 used, resets at 12:00", u, err)
		}
	})
}

func TestRateLimitWindowIsAligned(t *testing.T) {
	t.Parallel()
	l := RateLimit{Window: 24 * time.Hour}
	start, end := l.window(time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC))
	if !start.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) || !end.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("day window = %v–%v, want the UTC day", start, end)
	}
	start, _ = l.window(time.Date(1969, 12, 31, 12, 0, 0, 0, time.UTC))
	if !start.Equal(time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("window before the epoch starts %v", start)
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
