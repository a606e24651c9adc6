package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/storetest"
)

// Deliveries list newest first, by keyset pages, filtered by status; a
// delivery and an endpoint of another account are not found.
func TestListGetDeliveries(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		ctx := context.Background()
		hook := bd.endpoint(t, bd.account, "https://a.example/hook", "s")
		var ids []string
		for range 5 {
			ids = append(ids, bd.record(t, bd.account)[hook])
			bd.clock.Advance(time.Second)
		}
		bd.exec(t, `UPDATE webhook_deliveries SET status = 'succeeded' WHERE id = $1 OR id = $2`, ids[1], ids[3])

		var seen []string
		var cursor *DeliveryCursor
		for page := 0; ; page++ {
			ds, next, err := ListDeliveries(ctx, bd.db.Reader(), bd.account, hook, "", cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				seen = append(seen, d.ID)
			}
			if next == nil {
				break
			}
			if page > 5 {
				t.Fatal("no end of pages")
			}
			cursor = next
		}
		want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
		if len(seen) != 5 || seen[0] != want[0] || seen[4] != want[4] || seen[2] != want[2] {
			t.Fatalf("listed %v, want %v", seen, want)
		}
		ok, _, err := ListDeliveries(ctx, bd.db.Reader(), bd.account, hook, StatusSucceeded, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ok) != 2 || ok[0].ID != ids[3] || ok[1].ID != ids[1] {
			t.Fatalf("succeeded: %+v", ok)
		}

		other := storetest.Repo(t, bd.db, "globex", "globex", "web")
		if _, _, err := ListDeliveries(ctx, bd.db.Reader(), other.AccountID, hook, "", nil, 10); !errors.Is(err, ErrNotFound) {
			t.Errorf("another account's endpoint: %v", err)
		}
		if _, _, err := GetDelivery(ctx, bd.db.Reader(), other.AccountID, ids[0]); !errors.Is(err, ErrNotFound) {
			t.Errorf("another account's delivery: %v", err)
		}
		if _, _, err := GetDelivery(ctx, bd.db.Reader(), bd.account, "wh_NOPE"); !errors.Is(err, ErrNotFound) {
			t.Errorf("missing delivery: %v", err)
		}
		d, attempts, err := GetDelivery(ctx, bd.db.Reader(), bd.account, ids[0])
		if err != nil || d.ID != ids[0] || d.EndpointID != hook || attempts == nil || len(attempts) != 0 {
			t.Errorf("GetDelivery = %+v, %v, %v", d, attempts, err)
		}
	})
}

// Ping delivers a ping event to that endpoint only.
func TestPing(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		ctx := context.Background()
		var body []byte
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { body, _ = io.ReadAll(r.Body) })
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
		bystander := bd.endpoint(t, bd.account, srv.URL+"/other", "s3cret")
		d, err := Ping(ctx, bd.db, bd.account, hook, bd.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if d.Event != PingEvent || d.Status != StatusPending || d.EndpointID != hook {
			t.Fatalf("ping delivery %+v", d)
		}
		if n := bd.count(t, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, bystander); n != 0 {
			t.Fatalf("%d deliveries to another endpoint", n)
		}
		if err := bd.work(t, d.ID, 1); err != nil {
			t.Fatal(err)
		}
		var env struct {
			Event string            `json:"event"`
			Data  map[string]string `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Event != "ping" || env.Data["endpoint_id"] != hook {
			t.Fatalf("ping body %s (%v)", body, err)
		}
		other := storetest.Repo(t, bd.db, "globex", "globex", "web")
		if _, err := Ping(ctx, bd.db, other.AccountID, hook, bd.clock.Now()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another account's ping: %v", err)
		}
	})
}
