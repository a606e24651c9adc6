package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/webhook/fanout"
	"github.com/quorum-review/quorum/webhook/verify"
)

// DeliverArgs is the River job that makes the attempts of one delivery.
type DeliverArgs = fanout.DeliverArgs

// Delivery worker defaults.
const (
	// DefaultTimeout bounds one attempt: connecting, sending, and the
	// response's headers and first bytes.
	DefaultTimeout = 10 * time.Second
	// DefaultPerEndpoint bounds the attempts in flight to one endpoint in
	// one process.
	DefaultPerEndpoint = 4
	// maxResponseBody is how much of a response body an attempt keeps.
	maxResponseBody = 4 << 10
	// maxDrain is how much more of a response is read, and discarded, so
	// the connection can be reused; a longer body closes it.
	maxDrain = 64 << 10
	// slotWait bounds how long a job waits for one of its endpoint's
	// PerEndpoint slots: long enough that a busy endpoint's next delivery
	// starts the moment an attempt ends, short enough that jobs waiting for
	// a slow endpoint do not hold the process's workers from the others'.
	slotWait = 250 * time.Millisecond
	// busySnooze is how long a job waits, off its worker, when its endpoint
	// kept all PerEndpoint slots for slotWait.
	busySnooze = time.Second
	// retryEarly is how early a retry may start: River keeps times on
	// SQLite to the millisecond, so it may start a job scheduled for
	// 12:00:00.000750 at 12:00:00.000.
	retryEarly = time.Millisecond
	// pausedSnooze is how often a delivery to a disabled endpoint looks
	// whether it was resumed.
	pausedSnooze = time.Minute
)

// Worker makes the attempts of deliveries: it signs and POSTs the
// envelope, records the attempt, and schedules the next one exactly by
// RetryDelays, through River's retries.
type Worker struct {
	river.WorkerDefaults[DeliverArgs]

	DB *store.DB
	// Version goes in the User-Agent: quorum/<version>.
	Version string
	// AllowPrivate lets deliveries reach loopback, private and other
	// non-public addresses (development and tests).
	AllowPrivate bool
	// Resolver looks up endpoint host names (net.DefaultResolver when
	// nil); what it answers is checked at connect time like any address.
	Resolver *net.Resolver
	// AttemptTimeout bounds one attempt (DefaultTimeout when 0).
	AttemptTimeout time.Duration
	// PerEndpoint bounds the attempts in flight to one endpoint
	// (DefaultPerEndpoint when 0); beyond it a job waits up to slotWait for
	// a slot, then is snoozed.
	PerEndpoint int
	Now         func() time.Time
	Log         *slog.Logger
	// Observe, when set, is told of each attempt recorded: the delivery's
	// status after it, the attempt's latency, and whether it disabled the
	// endpoint (410 Gone).
	Observe func(status string, latency time.Duration, endpointDisabled bool)

	once   sync.Once
	client *http.Client
	mu     sync.Mutex
	slots  map[string]*slots
	// recording and recordQueue group the attempts that end together
	// into one transaction (see record).
	recording   bool
	recordQueue []*attemptRecord
	// retryAt holds, by job, when the retry after the failed attempt Work
	// just recorded is due, for NextRetry.
	retryAt map[retryKey]time.Time
}

// slots are the attempts in flight to one endpoint.
type slots struct {
	held  chan struct{} // one element per attempt in flight
	users int           // jobs holding or waiting for a slot
}

type retryKey struct {
	job     int64
	attempt int
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Worker) attemptTimeout() time.Duration {
	if w.AttemptTimeout > 0 {
		return w.AttemptTimeout
	}
	return DefaultTimeout
}

// Timeout bounds a whole job: one attempt and its bookkeeping.
func (w *Worker) Timeout(*river.Job[DeliverArgs]) time.Duration {
	return w.attemptTimeout() + 30*time.Second
}

// NextRetry schedules the retry after a failed attempt exactly when the
// attempt recorded it: RetryDelays[n-1] after attempt n started. A job
// with no such record lost its attempt with its process (River's rescuer
// asks): that attempt did not fail, it never ended, so it is made again at
// once; Work then finds whether it was in fact recorded. An error that was
// not a failed attempt (the database was unreachable, say) is retried on
// River's default backoff.
func (w *Worker) NextRetry(job *river.Job[DeliverArgs]) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := retryKey{job.ID, job.Attempt}
	if at, ok := w.retryAt[k]; ok {
		delete(w.retryAt, k)
		return at
	}
	return time.Now()
}

// retryNoted reports whether Work noted the job's retry.
func (w *Worker) retryNoted(job *river.Job[DeliverArgs]) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.retryAt[retryKey{job.ID, job.Attempt}]
	return ok
}

// noteRetry keeps when the job's retry is due until River asks NextRetry.
func (w *Worker) noteRetry(job *river.Job[DeliverArgs], at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.retryAt == nil {
		w.retryAt = map[retryKey]time.Time{}
	}
	w.retryAt[retryKey{job.ID, job.Attempt}] = at
}

func retryDelay(attempt int) time.Duration {
	i := min(max(attempt-1, 0), len(RetryDelays)-1)
	return RetryDelays[i]
}

func (w *Worker) httpClient() *http.Client {
	w.once.Do(func() {
		d := newDialer(w.AllowPrivate, w.attemptTimeout(), w.Resolver)
		w.client = &http.Client{
			Transport: &http.Transport{
				// No proxy: a proxy would connect on our behalf, past the
				// address check.
				Proxy:                 nil,
				DialContext:           d.DialContext,
				ForceAttemptHTTP2:     true,
				MaxIdleConns:          100,
				MaxIdleConnsPerHost:   DefaultPerEndpoint,
				IdleConnTimeout:       90 * time.Second,
				TLSHandshakeTimeout:   w.attemptTimeout(),
				ResponseHeaderTimeout: w.attemptTimeout(),
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	})
	return w.client
}

// acquire takes one of the endpoint's slots, waiting up to slotWait for
// one; false when none came free.
func (w *Worker) acquire(ctx context.Context, endpointID string) bool {
	limit := w.PerEndpoint
	if limit <= 0 {
		limit = DefaultPerEndpoint
	}
	w.mu.Lock()
	if w.slots == nil {
		w.slots = map[string]*slots{}
	}
	s := w.slots[endpointID]
	if s == nil {
		s = &slots{held: make(chan struct{}, limit)}
		w.slots[endpointID] = s
	}
	s.users++
	w.mu.Unlock()
	select {
	case s.held <- struct{}{}:
		return true
	default:
	}
	wait := time.NewTimer(slotWait)
	defer wait.Stop()
	select {
	case s.held <- struct{}{}:
		return true
	case <-wait.C:
	case <-ctx.Done():
	}
	w.leave(endpointID, s)
	return false
}

// release gives back a slot acquire took.
func (w *Worker) release(endpointID string) {
	w.mu.Lock()
	s := w.slots[endpointID]
	w.mu.Unlock()
	<-s.held
	w.leave(endpointID, s)
}

func (w *Worker) leave(endpointID string, s *slots) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(w.slots, endpointID)
	}
}

// target is what one attempt needs, loaded with the delivery.
type target struct {
	delivery Delivery
	url      string
	deleted  bool
	disabled bool
	signer   signer
	data     json.RawMessage
}

func (w *Worker) load(ctx context.Context, deliveryID string) (target, error) {
	var (
		t                  target
		prevSecret         *string
		prevExp, deletedAt *int64
		disabledAt         *int64
		data               string
	)
	d, err := scanDelivery(w.DB.Reader().QueryRow(ctx, `SELECT `+deliveryColumnsOf("d")+`, e.url, e.secret, e.previous_secret, e.previous_expires_at, e.deleted_at, e.disabled_at, ev.data
FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN events ev ON ev.id = d.event_id
WHERE d.id = $1`, deliveryID), &t.url, &t.signer.Secret, &prevSecret, &prevExp, &deletedAt, &disabledAt, &data)
	if err != nil {
		return target{}, fmt.Errorf("load delivery %s: %w", deliveryID, err)
	}
	t.delivery = d
	if prevSecret != nil {
		t.signer.PreviousSecret = *prevSecret
	}
	if prevExp != nil {
		exp := store.FromMicros(*prevExp)
		t.signer.PreviousExpiresAt = &exp
	}
	t.deleted = deletedAt != nil
	t.disabled = disabledAt != nil
	t.data = json.RawMessage(data)
	return t, nil
}

// envelope is the body of every delivery, exactly the spec's four fields.
type envelope struct {
	Event       string          `json:"event"`
	DeliveredAt string          `json:"delivered_at"`
	DeliveryID  string          `json:"delivery_id"`
	Data        json.RawMessage `json:"data"`
}

// outcome is what one attempt came to.
type outcome struct {
	statusCode *int
	latency    time.Duration
	err        string
	body       string
}

// Work makes one attempt of the job's delivery.
func (w *Worker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	w.mu.Lock()
	delete(w.retryAt, retryKey{job.ID, job.Attempt})
	w.mu.Unlock()
	err := w.attempt(ctx, job)
	if err != nil && !w.retryNoted(job) && !errors.As(err, new(*river.JobCancelError)) && !errors.As(err, new(*river.JobSnoozeError)) {
		// Not a failed attempt but a failure around one (the database, a
		// stopped context): River's own backoff, not the delivery schedule,
		// and not at once.
		w.noteRetry(job, (&river.DefaultClientRetryPolicy{}).NextRetry(job.JobRow))
	}
	return err
}

// attempt is Work but for the retry of an error that is not a failed
// attempt.
func (w *Worker) attempt(ctx context.Context, job *river.Job[DeliverArgs]) error {
	t, err := w.load(ctx, job.Args.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	d := t.delivery
	switch {
	case t.deleted:
		// Deleting an endpoint stops its deliveries: dead-lettered, with no
		// attempt, so none is left pending.
		if err := w.finish(ctx, d.ID, StatusDeadLettered, nil); err != nil {
			return err
		}
		return river.JobCancel(fmt.Errorf("delivery %s: endpoint %s was deleted", d.ID, d.EndpointID))
	case d.Status == StatusDeadLettered:
		// Dead-lettered while this job waited: the endpoint answered 410.
		return river.JobCancel(fmt.Errorf("delivery %s was dead-lettered", d.ID))
	case d.Status == StatusSucceeded:
		return nil // another job (a redelivery) delivered it
	case d.Status == StatusFailed && d.NextAttemptAt != nil && d.NextAttemptAt.Sub(w.now()) > retryEarly:
		// A failed attempt was recorded but its process died before River
		// heard of it, and the rescued job came back early: keep the
		// recorded schedule.
		return river.JobSnooze(d.NextAttemptAt.Sub(w.now()))
	case t.disabled && d.Event != PingEvent:
		// A paused endpoint's deliveries wait, unattempted, until it is
		// resumed; a ping is an explicit test and goes anyway.
		return river.JobSnooze(pausedSnooze)
	}
	if !w.acquire(ctx, d.EndpointID) {
		return river.JobSnooze(busySnooze)
	}
	defer w.release(d.EndpointID)

	now := w.now()
	body, err := json.Marshal(envelope{Event: d.Event, DeliveredAt: now.UTC().Format("2006-01-02T15:04:05.000Z07:00"), DeliveryID: d.ID, Data: t.data})
	if err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: encode envelope: %w", d.ID, err))
	}
	out := w.post(ctx, t, now, body)
	if ctx.Err() != nil && out.statusCode == nil {
		// The job itself was stopped (shutdown): not the receiver's fault;
		// try again at once when a worker starts.
		return river.JobSnooze(0)
	}

	// n is this attempt's place in the job's own schedule: a redelivery's
	// job starts a fresh one. It counts recorded attempts, not River's,
	// which also count attempts lost with a crashed process.
	n := d.Attempts - job.Args.Before + 1
	var (
		status = StatusSucceeded
		next   *time.Time
		ret    error
		gone   bool
	)
	switch {
	case out.err == "":
	case out.statusCode != nil && *out.statusCode == http.StatusGone:
		status, gone = StatusDeadLettered, true
		ret = river.JobCancel(fmt.Errorf("delivery %s: endpoint %s answered 410 Gone: disabled", d.ID, d.EndpointID))
	case n >= fanout.MaxAttempts:
		status = StatusDeadLettered
		ret = river.JobCancel(fmt.Errorf("delivery %s: dead-lettered after %d attempts: %s", d.ID, n, out.err))
	default:
		status = StatusFailed
		at := now.Add(retryDelay(n))
		next = &at
		ret = fmt.Errorf("delivery %s: attempt %d: %s", d.ID, n, out.err)
	}
	if err := w.record(ctx, attemptRecord{delivery: d, at: now, out: out, status: status, next: next, gone: gone}); err != nil {
		return fmt.Errorf("record attempt of delivery %s: %w", d.ID, err)
	}
	if w.Observe != nil {
		w.Observe(string(status), out.latency, gone)
	}
	if w.Log != nil && status != StatusSucceeded {
		w.Log.Info("webhook attempt failed", "delivery_id", d.ID, "endpoint_id", d.EndpointID, "attempt", n, "status", status, "error", out.err)
	}
	if next != nil {
		if job.MaxAttempts > 0 && job.Attempt >= job.MaxAttempts {
			// River's own attempts ran out (crashes spent some): wait
			// for the retry without spending another.
			return river.JobSnooze(next.Sub(w.now()))
		}
		w.noteRetry(job, *next)
	}
	return ret
}

// disable turns the endpoint off after a 410 Gone and dead-letters its
// other deliveries awaiting an attempt; their jobs then stop.
func disable(ctx context.Context, tx store.Tx, endpointID, deliveryID string, now time.Time) error {
	us := store.Micros(now)
	if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET disabled_at = $2, disabled_reason = $3, updated_at = $2 WHERE id = $1`,
		endpointID, us, fmt.Sprintf("the endpoint answered 410 Gone to delivery %s", deliveryID)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = 'dead_lettered', next_attempt_at = NULL, updated_at = $2
WHERE endpoint_id = $1 AND status IN ('pending', 'failed')`, endpointID, us)
	return err
}

// finish sets a delivery's status without an attempt.
func (w *Worker) finish(ctx context.Context, deliveryID, status string, next *time.Time) error {
	var nextUS *int64
	if next != nil {
		us := store.Micros(*next)
		nextUS = &us
	}
	_, err := w.DB.Writer().Exec(ctx, `UPDATE webhook_deliveries SET status = $2, next_attempt_at = $3, updated_at = $4 WHERE id = $1`,
		deliveryID, status, nextUS, store.Micros(w.now()))
	if err != nil {
		return fmt.Errorf("update delivery %s: %w", deliveryID, err)
	}
	return nil
}

// post makes the HTTP request of one attempt.
func (w *Worker) post(ctx context.Context, t target, now time.Time, body []byte) outcome {
	ctx, cancel := context.WithTimeout(ctx, w.attemptTimeout())
	defer cancel()
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return outcome{err: fmt.Sprintf("build request: %v", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "quorum/"+w.Version)
	req.Header.Set(verify.HeaderEvent, t.delivery.Event)
	req.Header.Set(verify.HeaderDelivery, t.delivery.ID)
	t.signer.setHeaders(req.Header, t.delivery.ID, now, body)
	resp, err := w.httpClient().Do(req)
	if err != nil {
		return outcome{latency: time.Since(start), err: describe(ctx, err, w.attemptTimeout())}
	}
	defer resp.Body.Close()
	kept, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	// Drain a bounded remainder so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	out := outcome{statusCode: &resp.StatusCode, latency: time.Since(start), body: responseText(kept)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if readErr != nil {
			// Answered 2xx: delivered, whatever became of the body.
			return out
		}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		out.err = fmt.Sprintf("HTTP %d redirect to %q: redirects are not followed", resp.StatusCode, resp.Header.Get("Location"))
	default:
		out.err = fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return out
}

// responseText is a response body as an attempt keeps it: valid UTF-8
// without NUL bytes, which PostgreSQL's text refuses.
func responseText(b []byte) string {
	return strings.ReplaceAll(string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), "\x00", "\uFFFD")
}

// describe says why a request got no response, in words for the
// delivery log.
func describe(ctx context.Context, err error, timeout time.Duration) string {
	var refused *RefusedAddressError
	var netErr net.Error
	switch {
	case errors.As(err, &refused):
		return refused.Error()
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("timeout: no response within %s", timeout)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("connection reset: %v", err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("connection refused: %v", err)
	}
	return fmt.Sprintf("request failed: %v", err)
}
