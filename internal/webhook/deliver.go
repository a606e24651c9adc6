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
// it, oldest first. Another account's delivery is ErrNotFound.
func GetDelivery(ctx context.Context, q store.Querier, accountID, deliveryID string) (Delivery, []Attempt, error) {
	d, err := scanDelivery(q.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = $1 AND account_id = $2`,
		deliveryID, accountID))
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

// Redeliver sends one of the account's deliveries again, whatever its
// status: the same delivery id (receivers deduplicate on it), status
// pending, attempt numbers continuing from the last, and a new job with a
// fresh schedule of five retries. A delivery whose endpoint was deleted,
// or another account's, is ErrNotFound. A disabled endpoint is sent to
// anyway: redelivery is an explicit request.
func Redeliver(ctx context.Context, db *store.DB, accountID, deliveryID string, now time.Time) (Delivery, error) {
	var d Delivery
	err := db.InTx(ctx, func(tx store.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
WHERE d.id = $1 AND d.account_id = $2 AND e.deleted_at IS NULL`, deliveryID, accountID).Scan(&one)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		var before int
		if err := tx.QueryRow(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2, updated_at = $2 WHERE id = $1 RETURNING attempts`,
			deliveryID, store.Micros(now)).Scan(&before); err != nil {
			return err
		}
		if err := tx.InsertJob(ctx, fanout.DeliverArgs{DeliveryID: deliveryID, Before: before}, nil); err != nil {
			return err
		}
		d, err = scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = $1`, deliveryID))
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
