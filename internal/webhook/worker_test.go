package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/webhook/fanout"
	"github.com/quorum-review/quorum/webhook/verify"
)

var t0 = time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)

// bundle is a database whose job queue accepts webhook.deliver jobs (but
// runs none: tests call Work), an account, and a worker on a fake clock.
type bundle struct {
	db      *store.DB
	account string
	clock   *storetest.Clock
	w       *Worker
}

func setup(t *testing.T, b storetest.Backend) *bundle {
	t.Helper()
	db := b.Open(t)
	workers := river.NewWorkers()
	clock := storetest.NewClock(t0)
	w := &Worker{DB: db, Version: "1.2.3", AllowPrivate: true, AttemptTimeout: 5 * time.Second, Now: clock.Now}
	river.AddWorker(workers, w)
	if _, err := db.ConfigureJobs(store.JobsConfig{Workers: workers}); err != nil {
		t.Fatal(err)
	}
	repo := storetest.Repo(t, db, "acme", "acme", "api")
	return &bundle{db: db, account: repo.AccountID, clock: clock, w: w}
}

// endpoint stores an endpoint of the account directly (registration is
// another file's business).
func (bd *bundle) endpoint(t *testing.T, account, url, secret string, events ...string) string {
	t.Helper()
	if events == nil {
		events = []string{}
	}
	ev, _ := json.Marshal(events)
	hookID := id.New(id.Endpoint, bd.clock.Now())
	_, err := bd.db.Writer().Exec(context.Background(), `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $6)`, hookID, account, url, string(ev), secret, store.Micros(bd.clock.Now()))
	if err != nil {
		t.Fatal(err)
	}
	return hookID
}

func (bd *bundle) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := bd.db.Writer().Exec(context.Background(), q, args...); err != nil {
		t.Fatal(err)
	}
}

func (bd *bundle) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := bd.db.Reader().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// record records review.failed for account and returns the deliveries it
// created, by endpoint.
func (bd *bundle) record(t *testing.T, account string) map[string]string {
	t.Helper()
	ctx := context.Background()
	var eventID string
	err := bd.db.InTx(ctx, func(tx store.Tx) error {
		var err error
		eventID, err = event.RecordAt(ctx, tx, bd.clock.Now(), account, event.ReviewFailed, event.ReviewFailedData{
			Owner: "acme", Repo: "api", PRNumber: 7, HeadSHA: "abc123", Reason: event.ReasonQuorumFailure, SpecialistsFailed: []string{"logic"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := bd.db.Reader().Query(ctx, `SELECT endpoint_id, id FROM webhook_deliveries WHERE event_id = $1`, eventID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var e, d string
		if err := rows.Scan(&e, &d); err != nil {
			t.Fatal(err)
		}
		out[e] = d
	}
	return out
}

// work runs attempt n of the delivery's job, as River would, at the fake
// clock's time.
func (bd *bundle) work(t *testing.T, deliveryID string, n int) error {
	t.Helper()
	at := bd.clock.Now()
	return bd.w.Work(context.Background(), &river.Job[DeliverArgs]{
		JobRow: &rivertype.JobRow{ID: 1, Attempt: n, MaxAttempts: 10, AttemptedAt: &at, Kind: "webhook.deliver"},
		Args:   DeliverArgs{DeliveryID: deliveryID},
	})
}

func (bd *bundle) delivery(t *testing.T, deliveryID string) (Delivery, []Attempt) {
	t.Helper()
	d, attempts, err := GetDelivery(context.Background(), bd.db.Reader(), bd.account, deliveryID)
	if err != nil {
		t.Fatal(err)
	}
	return d, attempts
}

func receiver(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// One delivery per subscribed, live endpoint of the account, each with its
// job; none for another account; none when the transaction rolls back.
func TestFanOut(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		ctx := context.Background()
		all := bd.endpoint(t, bd.account, "https://a.example/hook", "s")
		failed := bd.endpoint(t, bd.account, "https://b.example/hook", "s", event.ReviewFailed, event.ReviewCompleted)
		bd.endpoint(t, bd.account, "https://c.example/hook", "s", event.FindingCreated)
		disabled := bd.endpoint(t, bd.account, "https://d.example/hook", "s")
		bd.exec(t, `UPDATE webhook_endpoints SET disabled_at = 1 WHERE id = $1`, disabled)
		deleted := bd.endpoint(t, bd.account, "https://e.example/hook", "s")
		bd.exec(t, `UPDATE webhook_endpoints SET deleted_at = 1 WHERE id = $1`, deleted)
		other := storetest.Repo(t, bd.db, "globex", "globex", "web")
		bd.endpoint(t, other.AccountID, "https://f.example/hook", "s")

		got := bd.record(t, bd.account)
		if len(got) != 2 || got[all] == "" || got[failed] == "" {
			t.Fatalf("deliveries by endpoint %v, want one to %s and one to %s", got, all, failed)
		}
		for _, d := range got {
			if !id.Valid(id.Delivery, d) {
				t.Errorf("delivery id %q is not a wh_ id", d)
			}
			dl, attempts := bd.delivery(t, d)
			if dl.Status != StatusPending || dl.Attempts != 0 || len(attempts) != 0 || dl.Event != event.ReviewFailed {
				t.Errorf("new delivery %+v, %d attempts: want pending review.failed, none", dl, len(attempts))
			}
		}
		if n := bd.count(t, `SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver'`); n != 2 {
			t.Fatalf("%d delivery jobs, want 2", n)
		}

		// A rolled-back change announces nothing and delivers nothing.
		boom := errors.New("boom")
		err := bd.db.InTx(ctx, func(tx store.Tx) error {
			if _, err := event.Record(ctx, tx, bd.account, event.ReviewCompleted, map[string]any{"review_id": "rev_x"}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if n := bd.count(t, `SELECT count(*) FROM webhook_deliveries`); n != 2 {
			t.Fatalf("%d deliveries after a rollback, want still 2", n)
		}
		if n := bd.count(t, `SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver'`); n != 2 {
			t.Fatalf("%d delivery jobs after a rollback, want still 2", n)
		}
	})
}

// A delivery answered 200: the envelope exactly, the headers, both
// signatures (and, during a rotation, the previous secret's too).
func TestDeliverSucceeds(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		const secret, previous = "whsec_bmV3LXNlY3JldC1uZXctc2VjcmV0LW5ldw==", "whsec_b2xkLXNlY3JldC1vbGQtc2VjcmV0LW9sZA=="
		var got *http.Request
		var body []byte
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			got = r
			body, _ = io.ReadAll(r.Body)
			fmt.Fprint(w, "thanks")
		})
		hook := bd.endpoint(t, bd.account, srv.URL+"/hook", secret)
		bd.exec(t, `UPDATE webhook_endpoints SET previous_secret = $2, previous_expires_at = $3 WHERE id = $1`,
			hook, previous, store.Micros(t0.Add(time.Hour)))
		d := bd.record(t, bd.account)[hook]
		if err := bd.work(t, d, 1); err != nil {
			t.Fatal(err)
		}
		var env map[string]json.RawMessage
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatal(err)
		}
		keys := []string{}
		for k := range env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"data", "delivered_at", "delivery_id", "event"}) {
			t.Fatalf("envelope fields %v", keys)
		}
		if string(env["event"]) != `"review.failed"` || string(env["delivery_id"]) != `"`+d+`"` || string(env["delivered_at"]) != `"2026-11-23T03:00:00.000Z"` {
			t.Errorf("envelope %s", body)
		}
		if !strings.Contains(string(env["data"]), `"reason":"quorum_failure"`) {
			t.Errorf("data %s", env["data"])
		}
		h := got.Header
		for k, want := range map[string]string{
			"Content-Type": "application/json", "User-Agent": "quorum/1.2.3", "X-Service-Event": "review.failed",
			"X-Service-Delivery": d, "Webhook-Id": d, "Webhook-Timestamp": fmt.Sprint(t0.Unix()),
			"X-Service-Signature": verify.Signature(secret, body),
			"Webhook-Signature":   verify.StandardSignature(secret, d, t0.Unix(), body) + " " + verify.StandardSignature(previous, d, t0.Unix(), body),
		} {
			if h.Get(k) != want {
				t.Errorf("%s: %q, want %q", k, h.Get(k), want)
			}
		}
		// A receiver still holding the previous secret verifies the
		// delivery as it came.
		if err := (&verify.Verifier{Secret: previous, Now: func() time.Time { return t0 }}).Check(h, body); err != nil {
			t.Errorf("previous secret: %v", err)
		}
		dl, attempts := bd.delivery(t, d)
		if dl.Status != StatusSucceeded || dl.Attempts != 1 || dl.NextAttemptAt != nil {
			t.Errorf("delivery %+v, want succeeded after one attempt", dl)
		}
		if len(attempts) != 1 || attempts[0].StatusCode == nil || *attempts[0].StatusCode != 200 || attempts[0].ResponseBody != "thanks" || attempts[0].Error != "" || !attempts[0].AttemptedAt.Equal(t0) {
			t.Errorf("attempts %+v", attempts)
		}

		// After the overlap only the new secret signs.
		bd.clock.Advance(2 * time.Hour)
		if _, err := Redeliver(context.Background(), bd.db, bd.account, d, bd.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := bd.work(t, d, 1); err != nil {
			t.Fatal(err)
		}
		if sigs := strings.Fields(got.Header.Get("Webhook-Signature")); len(sigs) != 1 {
			t.Errorf("webhook-signature %v after the overlap, want one", sigs)
		}
	})
}

// Six attempts at exactly 0, 1 m, 5 m, 30 m, 2 h and 12 h later, then
// dead-lettered; a redelivery keeps the delivery id and numbers on.
func TestRetryScheduleAndDeadLetter(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		var ok atomic.Bool
		var ids []string
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			ids = append(ids, r.Header.Get("X-Service-Delivery"))
			if ok.Load() {
				return
			}
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		})
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
		d := bd.record(t, bd.account)[hook]
		start := bd.clock.Now()
		want := start
		for n := 1; n <= 6; n++ {
			if !bd.clock.Now().Equal(want) {
				t.Fatalf("attempt %d at %s, want %s", n, bd.clock.Now(), want)
			}
			err := bd.work(t, d, n)
			dl, attempts := bd.delivery(t, d)
			if len(attempts) != n || attempts[n-1].Number != n || !attempts[n-1].AttemptedAt.Equal(want) ||
				attempts[n-1].StatusCode == nil || *attempts[n-1].StatusCode != 503 || attempts[n-1].Error != "HTTP 503 Service Unavailable" ||
				!strings.Contains(attempts[n-1].ResponseBody, "down for maintenance") {
				t.Fatalf("attempt %d recorded as %+v", n, attempts[len(attempts)-1])
			}
			if n < 6 {
				next := want.Add(RetryDelays[n-1])
				if err == nil || errors.As(err, new(*river.JobCancelError)) {
					t.Fatalf("attempt %d: Work returned %v, want an error River retries", n, err)
				}
				if dl.Status != StatusFailed || dl.NextAttemptAt == nil || !dl.NextAttemptAt.Equal(next) {
					t.Fatalf("after attempt %d: %s, next %v; want failed, next at %s", n, dl.Status, dl.NextAttemptAt, next)
				}
				at := want
				if got := bd.w.NextRetry(&river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: n, AttemptedAt: &at}}); !got.Equal(next) {
					t.Fatalf("NextRetry after attempt %d = %s, want %s", n, got, next)
				}
				bd.clock.Advance(RetryDelays[n-1])
				want = next
				continue
			}
			if !errors.As(err, new(*river.JobCancelError)) {
				t.Fatalf("sixth attempt: Work returned %v, want the job cancelled", err)
			}
			if dl.Status != StatusDeadLettered || dl.NextAttemptAt != nil || dl.Attempts != 6 {
				t.Fatalf("after the fifth retry: %+v, want dead_lettered", dl)
			}
		}
		if total := want.Sub(start); total != 14*time.Hour+36*time.Minute {
			t.Fatalf("schedule spans %s", total)
		}

		// Redeliver the dead letter: same id, pending, a new job, attempt 7.
		jobs := bd.count(t, `SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver'`)
		bd.clock.Advance(time.Hour)
		rd, err := Redeliver(context.Background(), bd.db, bd.account, d, bd.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if rd.ID != d || rd.Status != StatusPending {
			t.Fatalf("redelivered %+v, want %s pending", rd, d)
		}
		if n := bd.count(t, `SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver'`); n != jobs+1 {
			t.Fatalf("%d jobs after redeliver, want %d", n, jobs+1)
		}
		ok.Store(true)
		if err := bd.work(t, d, 1); err != nil {
			t.Fatal(err)
		}
		dl, attempts := bd.delivery(t, d)
		if dl.Status != StatusSucceeded || len(attempts) != 7 || attempts[6].Number != 7 {
			t.Fatalf("after redelivery: %+v with %d attempts", dl, len(attempts))
		}
		for _, got := range ids {
			if got != d {
				t.Fatalf("receiver saw delivery ids %v, want only %s", ids, d)
			}
		}
		if _, err := Redeliver(context.Background(), bd.db, "acct_OTHER", d, bd.clock.Now()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another account's redeliver: %v", err)
		}
	})
}

// Each kind of failure is a failed attempt, recorded with its cause.
func TestFailedAttempts(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		bd.w.AttemptTimeout = 200 * time.Millisecond
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		for _, tc := range []struct {
			name    string
			handler http.HandlerFunc
			code    int // 0: no response
			errHas  string
		}{
			{"401 bad signature", func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "bad signature", http.StatusUnauthorized)
			}, 401, "HTTP 401 Unauthorized"},
			{"500", func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "oops", http.StatusInternalServerError)
			}, 500, "HTTP 500 Internal Server Error"},
			{"302 not followed", func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					t.Error("the redirect was followed")
				}
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			}, 302, `HTTP 302 redirect to "/elsewhere": redirects are not followed`},
			{"timeout", func(w http.ResponseWriter, r *http.Request) {
				// Read the body, so the server notices the client leaving.
				_, _ = io.ReadAll(r.Body)
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}, 0, "timeout: no response within 200ms"},
			{"reset connection", func(w http.ResponseWriter, r *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0) // close with a RST
				}
				conn.Close()
			}, 0, "connection reset"},
		} {
			srv := receiver(t, tc.handler)
			hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
			d := bd.record(t, bd.account)[hook]
			err := bd.work(t, d, 1)
			if err == nil {
				t.Errorf("%s: Work succeeded", tc.name)
			}
			dl, attempts := bd.delivery(t, d)
			if dl.Status != StatusFailed || len(attempts) != 1 {
				t.Errorf("%s: delivery %s with %d attempts, want failed with 1", tc.name, dl.Status, len(attempts))
				continue
			}
			a := attempts[0]
			if tc.code == 0 && a.StatusCode != nil || tc.code != 0 && (a.StatusCode == nil || *a.StatusCode != tc.code) {
				t.Errorf("%s: status code %v, want %d", tc.name, a.StatusCode, tc.code)
			}
			if !strings.Contains(a.Error, tc.errHas) {
				t.Errorf("%s: error %q, want one with %q", tc.name, a.Error, tc.errHas)
			}
			if a.LatencyMS <= 0 {
				t.Errorf("%s: latency %v", tc.name, a.LatencyMS)
			}
			// Each failure is its own endpoint's: stop it from fanning out
			// further events.
			bd.exec(t, `UPDATE webhook_endpoints SET deleted_at = 1 WHERE id = $1`, hook)
		}
	})
}

// 410 Gone disables the endpoint and dead-letters its deliveries.
func TestGoneDisables(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
		first := bd.record(t, bd.account)[hook]
		second := bd.record(t, bd.account)[hook]
		if err := bd.work(t, first, 1); !errors.As(err, new(*river.JobCancelError)) {
			t.Fatalf("Work after 410: %v, want the job cancelled", err)
		}
		var disabledAt *int64
		var reason string
		if err := bd.db.Reader().QueryRow(context.Background(), `SELECT disabled_at, disabled_reason FROM webhook_endpoints WHERE id = $1`, hook).Scan(&disabledAt, &reason); err != nil {
			t.Fatal(err)
		}
		if disabledAt == nil || *disabledAt != store.Micros(t0) || !strings.Contains(reason, "410 Gone") {
			t.Fatalf("endpoint disabled_at %v reason %q", disabledAt, reason)
		}
		for _, d := range []string{first, second} {
			if dl, _ := bd.delivery(t, d); dl.Status != StatusDeadLettered {
				t.Errorf("delivery %s %s, want dead_lettered", d, dl.Status)
			}
		}
		// The second's job stops without sending; new events skip it.
		if err := bd.work(t, second, 1); !errors.As(err, new(*river.JobCancelError)) {
			t.Fatalf("Work of the other delivery: %v", err)
		}
		if _, attempts := bd.delivery(t, second); len(attempts) != 0 {
			t.Errorf("the other delivery was attempted %d times", len(attempts))
		}
		if got := bd.record(t, bd.account); len(got) != 0 {
			t.Errorf("deliveries to a disabled endpoint: %v", got)
		}
	})
}

// Deleting an endpoint stops its deliveries.
func TestDeletedEndpointStops(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { t.Error("a deleted endpoint was sent to") })
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
		d := bd.record(t, bd.account)[hook]
		bd.exec(t, `UPDATE webhook_endpoints SET deleted_at = 1 WHERE id = $1`, hook)
		if err := bd.work(t, d, 1); !errors.As(err, new(*river.JobCancelError)) {
			t.Fatalf("Work: %v, want the job cancelled", err)
		}
		// The delivery is gone from the API with its endpoint; the
		// database keeps it, dead-lettered.
		if _, _, err := GetDelivery(context.Background(), bd.db.Reader(), bd.account, d); !errors.Is(err, ErrNotFound) {
			t.Fatalf("GetDelivery of a deleted endpoint's delivery: %v, want ErrNotFound", err)
		}
		if n := bd.count(t, `SELECT count(*) FROM webhook_deliveries WHERE id = $1 AND status = 'dead_lettered' AND attempts = 0`, d); n != 1 {
			t.Fatal("delivery not dead_lettered without an attempt")
		}
	})
}

// A delivery to an endpoint the customer paused waits, unattempted, until
// it is resumed; a ping goes anyway.
func TestPausedEndpointWaits(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		var hits atomic.Int32
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
		d := bd.record(t, bd.account)[hook]
		bd.exec(t, `UPDATE webhook_endpoints SET disabled_at = 1, disabled_reason = 'disabled by the customer' WHERE id = $1`, hook)
		var snooze *river.JobSnoozeError
		if err := bd.work(t, d, 1); !errors.As(err, &snooze) {
			t.Fatalf("Work for a paused endpoint: %v, want snoozed", err)
		}
		if dl, attempts := bd.delivery(t, d); dl.Status != StatusPending || len(attempts) != 0 || hits.Load() != 0 {
			t.Fatalf("paused: %s, %d attempts, %d requests", dl.Status, len(attempts), hits.Load())
		}
		ping, err := Ping(context.Background(), bd.db, bd.account, hook, bd.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := bd.work(t, ping.ID, 1); err != nil || hits.Load() != 1 {
			t.Fatalf("ping to a paused endpoint: %v, %d requests", err, hits.Load())
		}
		bd.exec(t, `UPDATE webhook_endpoints SET disabled_at = NULL WHERE id = $1`, hook)
		if err := bd.work(t, d, 1); err != nil {
			t.Fatalf("after resuming: %v", err)
		}
		if dl, _ := bd.delivery(t, d); dl.Status != StatusSucceeded {
			t.Fatalf("after resuming: %s", dl.Status)
		}
	})
}

// Without the flag, every non-public address class is refused at connect
// time, including a name that resolves to loopback; with it, allowed.
func TestSSRF(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ addr, class string }{
		{"127.0.0.1", "loopback"}, {"127.5.6.7", "loopback"}, {"::1", "loopback"},
		{"10.1.2.3", "private"}, {"172.16.0.1", "private"}, {"172.31.255.255", "private"}, {"192.168.1.1", "private"},
		{"fc00::1", "private (unique local)"}, {"fd12:3456::1", "private (unique local)"},
		{"169.254.169.254", "link-local"}, {"fe80::1", "link-local"}, {"fe80::1%eth0", "link-local"},
		{"100.64.0.1", "shared address space (CGNAT)"}, {"100.127.255.254", "shared address space (CGNAT)"},
		{"224.0.0.1", "multicast"}, {"239.255.255.250", "multicast"}, {"ff02::1", "multicast"},
		{"0.0.0.0", "unspecified (this network)"}, {"::", "unspecified"},
		{"255.255.255.255", "broadcast"},
		{"192.0.2.10", "documentation"}, {"2001:db8::1", "documentation"}, {"198.18.0.1", "benchmarking"},
		{"::ffff:127.0.0.1", "IPv4-mapped loopback"}, {"::ffff:169.254.169.254", "IPv4-mapped link-local"},
		{"::ffff:10.0.0.1", "IPv4-mapped private"},
		{"64:ff9b::7f00:1", "NAT64 loopback"}, {"64:ff9b::a9fe:a9fe", "NAT64 link-local"}, {"64:ff9b::c0a8:101", "NAT64 private"},
		{"2002:7f00:1::", "6to4 loopback"},
		{"8.8.8.8", ""}, {"1.1.1.1", ""}, {"2606:4700:4700::1111", ""}, {"::ffff:8.8.8.8", ""}, {"64:ff9b::808:808", ""},
		{"172.32.0.1", ""}, {"100.128.0.1", ""},
	} {
		if got := classify(netip.MustParseAddr(tc.addr)); got != tc.class {
			t.Errorf("classify(%s) = %q, want %q", tc.addr, got, tc.class)
		}
		err := checkAddress(net.JoinHostPort(tc.addr, "443"))
		if tc.class == "" && err != nil || tc.class != "" && (err == nil || !strings.Contains(err.Error(), "is "+tc.class+": refused")) {
			t.Errorf("checkAddress(%s) = %v", tc.addr, err)
		}
	}

	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		var hits atomic.Int32
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		for i, host := range []string{"127.0.0.1", "localhost"} {
			bd.w = &Worker{DB: bd.db, Version: "t", Now: bd.clock.Now, AttemptTimeout: 5 * time.Second}
			hook := bd.endpoint(t, bd.account, "http://"+net.JoinHostPort(host, port)+"/hook", "s3cret")
			d := bd.record(t, bd.account)[hook]
			if err := bd.work(t, d, 1); err == nil {
				t.Fatalf("%s: delivered without --webhook-allow-private", host)
			}
			_, attempts := bd.delivery(t, d)
			if len(attempts) != 1 || attempts[0].StatusCode != nil || !strings.Contains(attempts[0].Error, "is loopback: refused") {
				t.Fatalf("%s: attempts %+v, want one refused as loopback", host, attempts)
			}
			if hits.Load() != int32(i) {
				t.Fatalf("%s: the receiver was reached", host)
			}
			bd.w = &Worker{DB: bd.db, Version: "t", Now: bd.clock.Now, AllowPrivate: true}
			bd.clock.Advance(RetryDelays[0])
			if err := bd.work(t, d, 2); err != nil {
				t.Fatalf("%s with the flag: %v", host, err)
			}
			bd.exec(t, `UPDATE webhook_endpoints SET deleted_at = 1 WHERE id = $1`, hook)
		}
		if hits.Load() != 2 {
			t.Fatalf("receiver hit %d times, want 2 (with the flag)", hits.Load())
		}
	})
}

// One endpoint's attempts beyond PerEndpoint are snoozed, not run, while
// another endpoint's go ahead.
func TestPerEndpointConcurrency(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		bd.w.PerEndpoint = 1
		entered, unblock := make(chan struct{}, 1), make(chan struct{})
		slow := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-unblock
		})
		fast := receiver(t, func(w http.ResponseWriter, r *http.Request) {})
		slowHook := bd.endpoint(t, bd.account, slow.URL, "s3cret")
		fastHook := bd.endpoint(t, bd.account, fast.URL, "s3cret")
		first, second := bd.record(t, bd.account), bd.record(t, bd.account)
		done := make(chan error)
		go func() { done <- bd.work(t, first[slowHook], 1) }()
		<-entered
		var snooze *river.JobSnoozeError
		if err := bd.work(t, second[slowHook], 1); !errors.As(err, &snooze) {
			t.Fatalf("second attempt to the busy endpoint: %v, want snoozed", err)
		}
		if err := bd.work(t, first[fastHook], 1); err != nil {
			t.Fatalf("another endpoint: %v", err)
		}
		close(unblock)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := bd.work(t, second[slowHook], 1); err != nil {
			t.Fatalf("after the slot freed: %v", err)
		}
	})
}

// Under a running River client, a failed attempt's job is rescheduled
// exactly one minute after it started, with six attempts in all; a binary
// response body is kept as text.
func TestRiverSchedulesRetry(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		workers := river.NewWorkers()
		river.AddWorker(workers, &Worker{DB: db, Version: "t", AllowPrivate: true})
		jobs, err := db.ConfigureJobs(store.JobsConfig{Workers: workers, Work: true, PollInterval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		failed, cancel := jobs.Subscribe(river.EventKindJobFailed)
		t.Cleanup(cancel)
		ctx, stop := context.WithCancel(context.Background())
		if err := jobs.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
			defer done()
			_ = jobs.Stop(stopCtx)
			stop()
		})
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("bad\x00gate\xffway"))
		})
		bd := &bundle{db: db, account: storetest.Repo(t, db, "acme", "acme", "api").AccountID, clock: storetest.NewClock(time.Now())}
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
		d := bd.record(t, bd.account)[hook]
		var j *rivertype.JobRow
		select {
		case e := <-failed:
			j = e.Job
		case <-time.After(30 * time.Second):
			t.Fatal("the delivery job did not fail within 30 s")
		}
		if j.Attempt != 1 || j.MaxAttempts != fanout.MaxAttempts+4 || j.AttemptedAt == nil {
			t.Fatalf("job attempt %d of %d", j.Attempt, j.MaxAttempts)
		}
		dl, attempts := bd.delivery(t, d)
		if dl.Status != StatusFailed || len(attempts) != 1 || attempts[0].ResponseBody != "bad\uFFFDgate\uFFFDway" {
			t.Fatalf("delivery %s, attempts %+v", dl.Status, attempts)
		}
		// River retries when the delivery log says: one minute after the
		// attempt started (to the millisecond River keeps on SQLite).
		want := attempts[0].AttemptedAt.Add(time.Minute)
		if !dl.NextAttemptAt.Equal(want) || j.ScheduledAt.Sub(want).Abs() >= time.Millisecond {
			t.Fatalf("retry scheduled at %s, next_attempt_at %s; want %s", j.ScheduledAt, dl.NextAttemptAt, want)
		}
	})
}

// A job whose process died mid-attempt is rescued by River, which asks
// NextRetry: the attempt never ended, so it is made again at once, and the
// schedule counts recorded attempts, not River's. A job whose failed
// attempt was recorded before the crash keeps that attempt's retry time.
func TestRescuedAttempt(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
		hook := bd.endpoint(t, bd.account, srv.URL, "s3cret")
		d := bd.record(t, bd.account)[hook]

		// River attempt 1 died with its process: nothing recorded.
		at := bd.clock.Now()
		lost := &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, AttemptedAt: &at}, Args: DeliverArgs{DeliveryID: d}}
		if got := bd.w.NextRetry(lost); got.After(time.Now().Add(time.Second)) {
			t.Fatalf("rescued job retried at %s, want at once", got)
		}
		// An error around an attempt (here a stopped context) is not a
		// failed attempt, nor a lost one: River's own backoff.
		stopped, stop := context.WithCancel(context.Background())
		stop()
		if err := bd.w.Work(stopped, lost); err == nil {
			t.Fatal("Work succeeded with a stopped context")
		}
		if got := bd.w.NextRetry(lost); got.Before(time.Now().Add(500 * time.Millisecond)) {
			t.Fatalf("after an error that was no attempt, retried at %s, want River's backoff", got)
		}
		// River attempt 2 is the delivery's first: it fails and is retried
		// after the first delay, not the second.
		if err := bd.work(t, d, 2); err == nil {
			t.Fatal("Work succeeded against a 503")
		}
		dl, attempts := bd.delivery(t, d)
		if len(attempts) != 1 || attempts[0].Number != 1 || dl.NextAttemptAt == nil || !dl.NextAttemptAt.Equal(at.Add(RetryDelays[0])) {
			t.Fatalf("after the rescued attempt: %+v, attempts %+v; want attempt 1 and a retry after %s", dl, attempts, RetryDelays[0])
		}
		if got := bd.w.NextRetry(&river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 2, AttemptedAt: &at}}); !got.Equal(*dl.NextAttemptAt) {
			t.Fatalf("NextRetry %s, want %s", got, dl.NextAttemptAt)
		}

		// River attempt 3 comes early (that attempt's process died before
		// River heard of its failure): it waits for the recorded time.
		bd.clock.Advance(time.Second)
		var snooze *river.JobSnoozeError
		if err := bd.work(t, d, 3); !errors.As(err, &snooze) || snooze.Duration != RetryDelays[0]-time.Second {
			t.Fatalf("early retry: %v, want snoozed for %s", err, RetryDelays[0]-time.Second)
		}
		if _, attempts := bd.delivery(t, d); len(attempts) != 1 {
			t.Fatalf("the early retry was attempted: %d attempts", len(attempts))
		}
		bd.clock.Advance(RetryDelays[0] - time.Second)
		if err := bd.work(t, d, 3); err == nil {
			t.Fatal("Work succeeded against a 503")
		}
		if dl, _ := bd.delivery(t, d); dl.Attempts != 2 || !dl.NextAttemptAt.Equal(bd.clock.Now().Add(RetryDelays[1])) {
			t.Fatalf("after the second attempt: %+v, want a retry after %s", dl, RetryDelays[1])
		}
	})
}
