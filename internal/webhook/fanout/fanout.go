// Package fanout creates the webhook deliveries of one recorded event: a
// webhook_deliveries row and a webhook.deliver job per subscribed endpoint,
// in the transaction that records the event (the transactional outbox).
//
// It is apart from package webhook so that package event can call it while
// webhook checks endpoint subscriptions against event's catalog.
package fanout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
)

// MaxAttempts is how often a delivery is tried by one job: the first
// attempt and five retries.
const MaxAttempts = 6

// riverAttempts is how often River may start a delivery job: the worker
// stops it after MaxAttempts recorded attempts, but River also counts the
// attempts that crashed processes took with them.
const riverAttempts = MaxAttempts + 4

// DeliverArgs is the River job that delivers one webhook delivery.
type DeliverArgs struct {
	DeliveryID string `json:"delivery_id"`
	// Before is how many attempts the delivery had when the job was made:
	// a redelivery's job numbers its attempts on from there, but follows a
	// fresh schedule of retries.
	Before int `json:"before,omitempty"`
}

// Kind names the job.
func (DeliverArgs) Kind() string { return "webhook.deliver" }

// InsertOpts lets River start a delivery job more often than the first
// attempt and five retries, for the attempts lost with a crashed process.
func (DeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: riverAttempts}
}

// Event writes, in tx, one pending delivery and its job for each of the
// account's endpoints that are neither deleted nor disabled and subscribe
// to name (an empty subscription list means every event). It returns the
// delivery ids.
func Event(ctx context.Context, tx store.Tx, accountID, eventID, name string, at time.Time) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT id, events FROM webhook_endpoints
WHERE account_id = $1 AND deleted_at IS NULL AND disabled_at IS NULL ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("fan out %s: %w", name, err)
	}
	var endpoints []string
	for rows.Next() {
		var endpointID, events string
		if err := rows.Scan(&endpointID, &events); err != nil {
			rows.Close()
			return nil, fmt.Errorf("fan out %s: %w", name, err)
		}
		var subscribed []string
		if err := json.Unmarshal([]byte(events), &subscribed); err != nil {
			rows.Close()
			return nil, fmt.Errorf("fan out %s: endpoint %s events: %w", name, endpointID, err)
		}
		if len(subscribed) == 0 || slices.Contains(subscribed, name) {
			endpoints = append(endpoints, endpointID)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("fan out %s: %w", name, err)
	}
	var ids []string
	for _, endpointID := range endpoints {
		deliveryID, err := Insert(ctx, tx, accountID, endpointID, eventID, name, at)
		if err != nil {
			return nil, err
		}
		ids = append(ids, deliveryID)
	}
	return ids, nil
}

// Insert writes, in tx, one pending delivery of the event to the endpoint
// and the job that delivers it at once.
func Insert(ctx context.Context, tx store.Tx, accountID, endpointID, eventID, name string, at time.Time) (string, error) {
	deliveryID := id.New(id.Delivery, at)
	_, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries
(id, endpoint_id, account_id, event_id, event, status, attempts, next_attempt_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6, $6)`,
		deliveryID, endpointID, accountID, eventID, name, store.Micros(at))
	if err != nil {
		return "", fmt.Errorf("create delivery of %s to %s: %w", name, endpointID, err)
	}
	if err := tx.InsertJob(ctx, DeliverArgs{DeliveryID: deliveryID}, nil); err != nil {
		return "", fmt.Errorf("enqueue delivery %s: %w", deliveryID, err)
	}
	return deliveryID, nil
}
