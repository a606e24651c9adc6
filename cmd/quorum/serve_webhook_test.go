package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/webhook"
	"github.com/quorum-review/quorum/webhook/verify"
)

// serve delivers an event recorded by another process: signed, with its
// User-Agent, to a local receiver when QUORUM_WEBHOOK_ALLOW_PRIVATE is set,
// and refuses the same receiver without it.
func TestServeDeliversWebhooks(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{true, false} {
		t.Run(map[bool]string{true: "allowed", false: "refused"}[allow], func(t *testing.T) {
			t.Parallel()
			const secret = "whsec_c2VydmUtdGVzdC1zZWNyZXQtc2VydmUtdGVzdA=="
			got := make(chan *http.Request, 1)
			bodies := make(chan []byte, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				select {
				case got <- r:
					bodies <- b
				default:
				}
			}))
			t.Cleanup(srv.Close)

			dir := storetest.SQLiteDir(t)
			getenv := env()
			if allow {
				getenv = env("QUORUM_WEBHOOK_ALLOW_PRIVATE", "true")
			}
			serve(t, getenv, "--data-dir", dir, "--webhook-timeout", "5s")
			ctx := context.Background()
			db, err := store.Open(ctx, store.Config{DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ConfigureJobs(store.JobsConfig{}); err != nil { // insert-only, as an api process
				t.Fatal(err)
			}
			repo := storetest.Repo(t, db, "acme", "acme", "app")
			hook := addEndpointAndEvent(t, db, repo.AccountID, srv.URL, secret)

			if allow {
				select {
				case r := <-got:
					body := <-bodies
					if err := (&verify.Verifier{Secret: secret}).Check(r.Header, body); err != nil {
						t.Fatalf("delivery does not verify: %v", err)
					}
					if ua := r.Header.Get("User-Agent"); ua != "quorum/"+buildVersion() {
						t.Errorf("User-Agent %q", ua)
					}
					var env struct {
						Event      string `json:"event"`
						DeliveryID string `json:"delivery_id"`
					}
					if err := json.Unmarshal(body, &env); err != nil || env.Event != event.ReviewFailed || !strings.HasPrefix(env.DeliveryID, "wh_") {
						t.Errorf("envelope %s (%v)", body, err)
					}
				case <-time.After(60 * time.Second):
					t.Fatal("no delivery within 60 s")
				}
				return
			}
			deadline := time.Now().Add(60 * time.Second)
			for {
				ds, _, err := webhook.ListDeliveries(ctx, db.Reader(), repo.AccountID, hook, "", nil, 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(ds) == 1 && ds[0].Status == webhook.StatusFailed {
					_, attempts, err := webhook.GetDelivery(ctx, db.Reader(), repo.AccountID, ds[0].ID)
					if err != nil {
						t.Fatal(err)
					}
					if len(attempts) != 1 || !strings.Contains(attempts[0].Error, "is loopback: refused") {
						t.Fatalf("attempts %+v, want one refused as loopback", attempts)
					}
					if len(got) != 0 {
						t.Fatal("the receiver was reached")
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("deliveries %+v: no failed attempt within 60 s", ds)
				}
				time.Sleep(50 * time.Millisecond) // polling another goroutine's progress
			}
		})
	}
}

// addEndpointAndEvent registers an endpoint of every event for the account,
// records a review.failed event for it to be delivered, and returns the
// endpoint's id.
func addEndpointAndEvent(t *testing.T, db *store.DB, accountID, url, secret string) string {
	t.Helper()
	ctx := context.Background()
	hook := id.New(id.Endpoint, time.Now())
	if _, err := db.Writer().Exec(ctx, `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at)
VALUES ($1, $2, $3, '[]', $4, 1, 1)`, hook, accountID, url, secret); err != nil {
		t.Fatal(err)
	}
	err := db.InTx(ctx, func(tx store.Tx) error {
		_, err := event.Record(ctx, tx, accountID, event.ReviewFailed, event.ReviewFailedData{Owner: "acme", Repo: "app", PRNumber: 1, Reason: event.ReasonRateLimit})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hook
}
