package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/quorum-review/quorum/internal/store"
)

// attemptRecord is one attempt to write to the delivery log, with the
// delivery's status after it.
type attemptRecord struct {
	delivery Delivery
	at       time.Time
	out      outcome
	status   string
	next     *time.Time
	gone     bool // the endpoint answered 410 Gone: disable it
	done     chan error
}

// recordTimeout bounds the transaction that writes a group of attempts.
const recordTimeout = 30 * time.Second

// record writes an attempt and its delivery's new status, committed before
// it returns. Attempts that end while another group is being written are
// written together, in one transaction, by the job that finds no group
// being written (group commit): on SQLite every transaction goes through
// the one writer, and one per attempt was most of a delivery's cost.
func (w *Worker) record(ctx context.Context, r attemptRecord) error {
	r.done = make(chan error, 1)
	w.mu.Lock()
	w.recordQueue = append(w.recordQueue, &r)
	if w.recording {
		w.mu.Unlock()
		select {
		case err := <-r.done:
			return err
		case <-ctx.Done():
			// The group may still commit; the job will find out when it
			// runs again.
			return ctx.Err()
		}
	}
	w.recording = true
	for {
		group := w.recordQueue
		w.recordQueue = nil
		w.mu.Unlock()
		w.writeGroup(group)
		w.mu.Lock()
		if len(w.recordQueue) == 0 {
			w.recording = false
			w.mu.Unlock()
			return <-r.done
		}
	}
}

// writeGroup writes a group of attempts in one transaction, or, when that
// fails, each in its own so that one bad record fails only its own job.
func (w *Worker) writeGroup(group []*attemptRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	err := w.DB.InTx(ctx, func(tx store.Tx) error {
		for _, r := range group {
			if err := writeAttempt(ctx, tx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || len(group) == 1 {
		for _, r := range group {
			r.done <- err
		}
		return
	}
	for _, r := range group {
		r.done <- w.DB.InTx(ctx, func(tx store.Tx) error { return writeAttempt(ctx, tx, r) })
	}
}

// writeAttempt writes one attempt, numbered after the delivery's last, and
// disables the endpoint after a 410 Gone.
func writeAttempt(ctx context.Context, tx store.Tx, r *attemptRecord) error {
	var code, nextUS *int64
	if r.out.statusCode != nil {
		c := int64(*r.out.statusCode)
		code = &c
	}
	if r.next != nil {
		us := store.Micros(*r.next)
		nextUS = &us
	}
	d := r.delivery
	var number int64
	err := tx.QueryRow(ctx, `UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, next_attempt_at = $3, updated_at = $4
WHERE id = $1 RETURNING attempts`, d.ID, r.status, nextUS, store.Micros(r.at)).Scan(&number)
	if err != nil {
		return fmt.Errorf("delivery %s: %w", d.ID, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, number, attempted_at, status_code, latency_us, error, response_body)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, d.ID, number, store.Micros(r.at), code, r.out.latency.Microseconds(), r.out.err, r.out.body); err != nil {
		return err
	}
	if r.gone {
		return disable(ctx, tx, d.EndpointID, d.ID, r.at)
	}
	return nil
}
