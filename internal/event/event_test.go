package event_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

func TestRecordAndList(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		db := b.Open(t)
		repo := storetest.Repo(t, db, "acme", "acme", "api")
		other := storetest.Repo(t, db, "globex", "globex", "web")
		at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

		data := event.ReviewFailedData{Owner: "acme", Repo: "api", PRNumber: 7, HeadSHA: "abc", Reason: event.ReasonQuorumFailure, SpecialistsFailed: []string{"logic", "tests"}}
		var evID string
		err := db.InTx(ctx, func(tx store.Tx) error {
			var err error
			evID, err = event.RecordAt(ctx, tx, at, repo.AccountID, event.ReviewFailed, data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !id.Valid(id.Event, evID) {
			t.Errorf("event id %q is not an evt_ id", evID)
		}
		if err := db.InTx(ctx, func(tx store.Tx) error {
			_, err := event.Record(ctx, tx, other.AccountID, event.InstallationDeleted, map[string]any{"installation_id": 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}

		evs, err := event.List(ctx, db.Reader(), repo.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 {
			t.Fatalf("got %d events of acme, want 1 (globex's is not acme's)", len(evs))
		}
		e := evs[0]
		if e.ID != evID || e.Name != event.ReviewFailed || !e.CreatedAt.Equal(at.Truncate(time.Microsecond)) {
			t.Errorf("event = %+v, want id %s, review.failed at %v", e, evID, at)
		}
		var got map[string]any
		if err := json.Unmarshal(e.Data, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"owner": "acme", "repo": "api", "pr_number": float64(7), "head_sha": "abc",
			"reason": "quorum_failure", "specialists_failed": []any{"logic", "tests"}}
		if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
			t.Errorf("data = %s, want %s", g, w)
		}
	})
}

func TestRecordRefuses(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	repo := storetest.Repo(t, db, "acme", "acme", "api")
	ctx := context.Background()
	for _, tc := range []struct {
		name, event string
		data        any
		want        string
	}{
		{"unknown name", "review.exploded", map[string]any{}, "unknown event"},
		{"unencodable data", event.ReviewCompleted, map[string]any{"x": math.Inf(1)}, "encode data"},
		{"not an object", event.ReviewCompleted, []int{1}, "JSON object"},
		{"unknown account", event.ReviewFailed, event.ReviewFailedData{}, "record review.failed"},
	} {
		acct := repo.AccountID
		if tc.name == "unknown account" {
			acct = "acct_NOPE"
		}
		err := db.InTx(ctx, func(tx store.Tx) error {
			_, err := event.Record(ctx, tx, acct, tc.event, tc.data)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	evs, err := event.List(ctx, db.Reader(), repo.AccountID)
	if err != nil || len(evs) != 0 {
		t.Errorf("after refusals: %d events, err %v; want none", len(evs), err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
