package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// scaleOutDeliveries is how many deliveries the scale-out test makes.
const scaleOutDeliveries = 600

// TestScaleOut runs three quorum processes on one PostgreSQL database — two
// `quorum serve` and one `quorum serve --role worker`, each a real process
// of the built binary — and has them share 600 deliveries to a slow
// receiver: every delivery arrives, each process makes some of the
// attempts, and no delivery is sent twice except as a recorded retry.
//
// The last is what at-least-once allows without a crash: River hands each
// job to one process at a time (SELECT … FOR UPDATE SKIP LOCKED), so a
// delivery is sent again only after an attempt that failed (a timeout
// under load, say), and every such attempt is in the delivery log. So the
// test checks that the receiver got exactly as many requests as the
// delivery log has attempts, and one more request per delivery only for
// each failed attempt. (A process killed mid-attempt can send one more:
// TestCrashSafety covers that.)
func TestScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three quorum processes")
	}
	t.Parallel()
	dbURL := storetest.PostgresURL(t)
	bin := buildQuorum(t)

	rc := &crashReceiver{seen: map[string]int{}}
	receiver := httptest.NewServer(rc)
	t.Cleanup(receiver.Close)

	common := []string{"--database-url", dbURL, "--addr", "127.0.0.1:0", "--webhook-allow-private",
		"--workers", "8", "--log-level", "warn", "--shutdown-timeout", "10s"}
	tokOut, tokErr, err := quorum(t, env(), "token", "create", "--database-url", dbURL, "--account", "acme", "--scope", "webhooks:write", "--name", "scale")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, tokErr)
	}
	tok := strings.TrimSpace(tokOut)
	procs := []*child{
		startChild(t, bin, common...),
		startChild(t, bin, common...),
		startChild(t, bin, append(common, "--role", "worker")...),
	}

	req, _ := http.NewRequest(http.MethodPost, procs[1].base+"/v1/webhooks", strings.NewReader(`{"url":"`+receiver.URL+`","description":"scale-out test"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var hook struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&hook)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated || hook.ID == "" {
		t.Fatalf("POST /v1/webhooks: %d %+v (%v)", resp.StatusCode, hook, err)
	}

	// Record the events from a fourth, insert-only view of the database,
	// in transactions of 20, as several review pipelines would.
	ctx := context.Background()
	db := storetest.OpenUnmigrated(t, store.Config{URL: dbURL})
	if _, err := db.ConfigureJobs(store.JobsConfig{}); err != nil {
		t.Fatal(err)
	}
	var accountID string
	if err := db.Reader().QueryRow(ctx, `SELECT account_id FROM webhook_endpoints WHERE id = $1`, hook.ID).Scan(&accountID); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < scaleOutDeliveries; i += 20 {
		err := db.InTx(ctx, func(tx store.Tx) error {
			for j := i; j < i+20; j++ {
				data := event.ReviewFailedData{Owner: "acme", Repo: "app", PRNumber: j + 1, Reason: event.ReasonRateLimit}
				if _, err := event.Record(ctx, tx, accountID, event.ReviewFailed, data); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	deadline := time.Now().Add(90 * time.Second)
	var pending int
	for {
		n, _ := rc.received()
		if err := db.Reader().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'failed')`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if n >= scaleOutDeliveries && pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("90 s after the events: %d of %d deliveries received, %d pending or failed; stderr:\n%s\n%s\n%s",
				n, scaleOutDeliveries, pending, procs[0].stderr.String(), procs[1].stderr.String(), procs[2].stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // polling the receiver and the database
	}
	for _, p := range procs {
		p.stop(t)
	}

	// Each process made some of the attempts: River records, on each job,
	// the clients that ran it.
	rows, err := db.Reader().Query(ctx, `SELECT attempted_by[array_length(attempted_by, 1)], count(*) FROM river_job
WHERE kind = 'webhook.deliver' AND state = 'completed' GROUP BY 1 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	byClient := map[string]int{}
	for rows.Next() {
		var client string
		var n int
		if err := rows.Scan(&client, &n); err != nil {
			t.Fatal(err)
		}
		byClient[client] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(byClient) != len(procs) {
		t.Errorf("deliveries completed by %d River clients %v, want each of the %d processes", len(byClient), byClient, len(procs))
	}

	var created, succeeded, attempts, failedAttempts int
	for q, dst := range map[string]*int{
		`SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`:                                                                       &created,
		`SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`:                                              &succeeded,
		`SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1`:                   &attempts,
		`SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1 AND a.error <> ''`: &failedAttempts,
	} {
		if err := db.Reader().QueryRow(ctx, q, hook.ID).Scan(dst); err != nil {
			t.Fatal(err)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, p := range rc.problems {
		t.Error(p)
	}
	dups := rc.requests - len(rc.seen)
	if created != scaleOutDeliveries || succeeded != scaleOutDeliveries || len(rc.seen) != scaleOutDeliveries {
		t.Errorf("%d deliveries created, %d succeeded, %d received; want %d each", created, succeeded, len(rc.seen), scaleOutDeliveries)
	}
	if attempts != rc.requests || dups != failedAttempts {
		t.Errorf("the receiver got %d requests (%d repeating a delivery_id); the delivery log has %d attempts, %d failed: a delivery was sent twice without a failed attempt between",
			rc.requests, dups, attempts, failedAttempts)
	}
	t.Logf("%d deliveries by %d processes %v; %d requests, %d repeated after a failed attempt", scaleOutDeliveries, len(procs), byClient, rc.requests, dups)
}
