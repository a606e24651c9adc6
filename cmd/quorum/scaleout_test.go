package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

	hook := createEndpoint(t, procs[1].base, tok, receiver.URL)

	// Record the events from a fourth, insert-only view of the database,
	// in transactions of 20, as several review pipelines would.
	ctx := context.Background()
	db, accountID := insertOnly(t, store.Config{URL: dbURL}, hook.ID)
	for i := 0; i < scaleOutDeliveries; i += 20 {
		recordEvents(t, db, accountID, i, i+20)
	}

	awaitDeliveries(t, db, rc, scaleOutDeliveries, 90*time.Second, procs...)
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
