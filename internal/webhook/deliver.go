package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/webhook/fanout"
)

// PingEvent is the name of the test event Ping sends. It is not in the
// catalog: endpoints cannot subscribe to it and it is never fanned out; its
// data is {"endpoint_id": "hook_…"}.
const PingEvent = "ping"

// DeliveryCursor is a position in an endpoint's deliveries, newest first:
// the last delivery of a page.
type DeliveryCursor struct {
	CreatedAt int64 // Unix microseconds, as stored
	ID        string
}

// deliveryColumns are the columns scanDelivery reads, in order.
const deliveryColumns = `id, endpoint_id, account_id, event_id, event, status, attempts, next_attempt_at, created_at, updated_at`

// deliveryColumnsOf is deliveryColumns of a table named alias in a join.
func deliveryColumnsOf(alias string) string {
	cols := strings.Split(deliveryColumns, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}

// scanDelivery reads deliveryColumns, then any extra columns into extra.
func scanDelivery(r store.Row, extra ...any) (Delivery, error) {
	var (
		d                Delivery
		next             *int64
		created, updated int64
	)
	if err := r.Scan(append([]any{&d.ID, &d.EndpointID, &d.AccountID, &d.EventID, &d.Event, &d.Status, &d.Attempts, &next, &created, &updated}, extra...)...); err != nil {
		return Delivery{}, err
	}
	if next != nil {
		t := store.FromMicros(*next)
		d.NextAttemptAt = &t
	}
	d.CreatedAt, d.UpdatedAt = store.FromMicros(created), store.FromMicros(updated)
	return d, nil
}

// ListDeliveries returns up to limit deliveries of the account's endpoint,
// newest first, those with the given status only when status is not empty,
// after the cursor when one is given, and the cursor of the next page (nil
// on the last). An endpoint that is deleted or another account's is
// ErrNotFound.
func ListDeliveries(ctx context.Context, q store.Querier, accountID, endpointID, status string, after *DeliveryCursor, limit int) ([]Delivery, *DeliveryCursor, error) {
	if limit <= 0 {
		return nil, nil, errors.New("list deliveries: limit must be positive")
	}
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`,
		endpointID, accountID).Scan(&one)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list deliveries of %s: %w", endpointID, err)
	}
	// The cursor's first page starts above every stored position.
	afterAt, afterID := int64(1<<62), ""
	if after != nil {
		afterAt, afterID = after.CreatedAt, after.ID
	}
	var rows store.Rows
	if status == "" {
		rows, err = q.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
WHERE endpoint_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3))
ORDER BY created_at DESC, id DESC LIMIT $4`, endpointID, afterAt, afterID, limit+1)
	} else {
		rows, err = q.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
WHERE endpoint_id = $1 AND status = $5 AND (created_at < $2 OR (created_at = $2 AND id < $3))
ORDER BY created_at DESC, id DESC LIMIT $4`, endpointID, afterAt, afterID, limit+1, status)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list deliveries of %s: %w", endpointID, err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, nil, fmt.Errorf("list deliveries of %s: %w", endpointID, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list deliveries of %s: %w", endpointID, err)
	}
	if len(out) <= limit {
		return out, nil, nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, &DeliveryCursor{CreatedAt: store.Micros(last.CreatedAt), ID: last.ID}, nil
}

// GetDelivery returns one of the account's deliveries and every attempt of
// it, oldest first. Another account's delivery, or one whose endpoint was
// deleted, is ErrNotFound: a deleted endpoint's deliveries go with it, as
// its listing and their redelivery do.
func GetDelivery(ctx context.Context, q store.Querier, accountID, deliveryID string) (Delivery, []Attempt, error) {
	d, err := scanDelivery(q.QueryRow(ctx, `SELECT `+deliveryColumnsOf("d")+` FROM webhook_deliveries d
JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.deleted_at IS NULL
WHERE d.id = $1 AND d.account_id = $2`, deliveryID, accountID))
	if errors.Is(err, store.ErrNotFound) {
		return Delivery{}, nil, ErrNotFound
	}
	if err != nil {
		return Delivery{}, nil, fmt.Errorf("get delivery %s: %w", deliveryID, err)
	}
	attempts, err := listAttempts(ctx, q, deliveryID)
	if err != nil {
		return Delivery{}, nil, err
	}
	return d, attempts, nil
}

func listAttempts(ctx context.Context, q store.Querier, deliveryID string) ([]Attempt, error) {
	rows, err := q.Query(ctx, `SELECT number, attempted_at, status_code, latency_us, error, response_body
FROM webhook_attempts WHERE delivery_id = $1 ORDER BY number`, deliveryID)
	if err != nil {
		return nil, fmt.Errorf("list attempts of %s: %w", deliveryID, err)
	}
	defer rows.Close()
	attempts := []Attempt{}
	for rows.Next() {
		var (
			a         Attempt
			at, latUS int64
			code      *int64
		)
		if err := rows.Scan(&a.Number, &at, &code, &latUS, &a.Error, &a.ResponseBody); err != nil {
			return nil, fmt.Errorf("list attempts of %s: %w", deliveryID, err)
		}
		a.AttemptedAt = store.FromMicros(at)
		a.LatencyMS = float64(latUS) / 1000
		if code != nil {
			c := int(*code)
			a.StatusCode = &c
		}
		attempts = append(attempts, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list attempts of %s: %w", deliveryID, err)
	}
	return attempts, nil
}

// liveJobStates are the states of a delivery job that may still attempt.
const liveJobStates = `('available', 'pending', 'retryable', 'running', 'scheduled')`

// Queries for the delivery jobs of one delivery that may still attempt,
// locked on PostgreSQL (SQLite serializes every write transaction). On
// PostgreSQL the containment test can use River's index on args.
const (
	liveJobsPostgres = `SELECT id, state FROM river_job WHERE kind = 'webhook.deliver'
AND args @> jsonb_build_object('delivery_id', $1::text) AND state IN ` + liveJobStates + ` ORDER BY id FOR UPDATE`
	liveJobsSQLite = `SELECT id, state FROM river_job WHERE kind = 'webhook.deliver'
AND args ->> 'delivery_id' = $1 AND state IN ` + liveJobStates + ` ORDER BY id`
)

// liveJob is a delivery job that may still attempt.
type liveJob struct {
	id    int64
	state string
}

// liveJobs returns the delivery's jobs that may still attempt: its attempt
// chain (at most one, but a delivery dead-lettered by a 410 to another
// delivery keeps its waiting job until that job runs).
func liveJobs(ctx context.Context, q store.Querier, dialect store.Dialect, deliveryID string) ([]liveJob, error) {
	query := liveJobsSQLite
	if dialect == store.Postgres {
		query = liveJobsPostgres
	}
	rows, err := q.Query(ctx, query, deliveryID)
	if err != nil {
		return nil, fmt.Errorf("jobs of delivery %s: %w", deliveryID, err)
	}
	defer rows.Close()
	var jobs []liveJob
	for rows.Next() {
		var j liveJob
		if err := rows.Scan(&j.id, &j.state); err != nil {
			return nil, fmt.Errorf("jobs of delivery %s: %w", deliveryID, err)
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jobs of delivery %s: %w", deliveryID, err)
	}
	return jobs, nil
}

// Redeliver sends one of the account's deliveries again, keeping its id
// (receivers deduplicate on it) and numbering attempts on from the last. A
// delivery has at most one attempt chain (one job following RetryDelays):
//
//   - pending or failed: its chain's next attempt is made now instead of
//     at its scheduled time, and the chain's schedule goes on from there.
//     Redelivering again before that attempt changes nothing more.
//   - succeeded or dead-lettered: one new chain starts now, with a fresh
//     schedule of five retries.
//
// A redelivery asks for an attempt after now, the time it was asked: when
// an attempt has begun since (another redelivery's, or the schedule's), it
// is already answered and changes nothing. Concurrent redeliveries of one
// delivery are serialized on its row, so together they make one attempt
// now, however the attempt interleaves with them. A delivery whose
// endpoint was deleted, or another account's, is ErrNotFound. A disabled
// endpoint is sent to anyway: redelivery is an explicit request.
func Redeliver(ctx context.Context, db *store.DB, accountID, deliveryID string, now time.Time) (Delivery, error) {
	var d Delivery
	err := db.InTx(ctx, func(tx store.Tx) error {
		// This update locks the row: a concurrent redelivery waits here,
		// then reads what this one did.
		var status string
		var attempts int
		err := tx.QueryRow(ctx, `UPDATE webhook_deliveries SET status = status
WHERE id = $1 AND account_id = $2 AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE deleted_at IS NULL)
RETURNING status, attempts`, deliveryID, accountID).Scan(&status, &attempts)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		var since int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE delivery_id = $1 AND attempted_at >= $2`,
			deliveryID, store.Micros(now)).Scan(&since); err != nil {
			return err
		}
		if since > 0 {
			d, err = scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = $1`, deliveryID))
			return err
		}
		jobs, err := liveJobs(ctx, tx, db.Dialect(), deliveryID)
		if err != nil {
			return err
		}
		newChain := status == StatusSucceeded || status == StatusDeadLettered || len(jobs) == 0
		for _, j := range jobs {
			switch {
			case j.state == "running":
				// An attempt is under way: it is the attempt made now.
			case newChain:
				// A chain that outlived its delivery's dead-lettering.
				if err := tx.CancelJob(ctx, j.id); err != nil {
					return fmt.Errorf("cancel job %d: %w", j.id, err)
				}
			case j.state == "retryable" || j.state == "scheduled":
				if err := tx.RetryJob(ctx, j.id); err != nil {
					return fmt.Errorf("retry job %d: %w", j.id, err)
				}
			}
		}
		if newChain {
			if err := tx.InsertJob(ctx, fanout.DeliverArgs{DeliveryID: deliveryID, Before: attempts}, nil); err != nil {
				return err
			}
		}
		d, err = scanDelivery(tx.QueryRow(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2, updated_at = $2
WHERE id = $1 RETURNING `+deliveryColumns, deliveryID, store.Micros(now)))
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return Delivery{}, ErrNotFound
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("redeliver %s: %w", deliveryID, err)
	}
	return d, nil
}

// Ping sends a "ping" test event to one of the account's endpoints only,
// disabled or not, with data {"endpoint_id": …}. The event is stored like
// any other (a delivery references its event) but is never fanned out. A
// deleted endpoint or another account's is ErrNotFound.
func Ping(ctx context.Context, db *store.DB, accountID, endpointID string, now time.Time) (Delivery, error) {
	var d Delivery
	err := db.InTx(ctx, func(tx store.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`,
			endpointID, accountID).Scan(&one)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		data, err := json.Marshal(map[string]string{"endpoint_id": endpointID})
		if err != nil {
			return err
		}
		eventID := id.New(id.Event, now)
		if _, err := tx.Exec(ctx, `INSERT INTO events (id, account_id, name, data, created_at) VALUES ($1, $2, $3, $4, $5)`,
			eventID, accountID, PingEvent, string(data), store.Micros(now)); err != nil {
			return err
		}
		deliveryID, err := fanout.Insert(ctx, tx, accountID, endpointID, eventID, PingEvent, now)
		if err != nil {
			return err
		}
		d, err = scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = $1`, deliveryID))
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return Delivery{}, ErrNotFound
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("ping %s: %w", endpointID, err)
	}
	return d, nil
}
