package delivery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/store"
)

// Table is a platform's table of webhook deliveries (github_deliveries,
// gitea_deliveries): each delivery acted on, by the platform's delivery
// id, with its event, action, payload until it is handled, and the id of
// what it belongs to on the platform (an installation, a repository).
type Table struct {
	insert, load, claim, prune string
}

// NewTable returns the queries of the deliveries table name, whose
// platform id column is scope. Both are the caller's constants, never
// input.
func NewTable(name, scope string) Table {
	return Table{
		insert: `INSERT INTO ` + name + ` (delivery_id, event, action, ` + scope + `, payload, received_at)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (delivery_id) DO NOTHING`,
		load:  `SELECT event, ` + scope + `, payload FROM ` + name + ` WHERE delivery_id = $1`,
		claim: `UPDATE ` + name + ` SET payload = NULL, handled_at = $1 WHERE delivery_id = $2 AND handled_at IS NULL`,
		// Received before $1 and handled before it too, or never. A
		// delivery is handled after it was received, so received_at
		// bounds both and its index finds them.
		prune: `DELETE FROM ` + name + ` WHERE received_at < $1 AND (handled_at IS NULL OR handled_at < $1)`,
	}
}

// Delivery is one delivery as received.
type Delivery struct {
	ID     string
	Event  string
	Action string
	// Scope is the platform's id of what the delivery belongs to.
	Scope   int64
	Payload []byte
}

// Store stores d and, in the same transaction, job, which handles it;
// it reports a delivery stored before (a redelivery) as duplicate, and
// then queues nothing.
func (t Table) Store(ctx context.Context, db *store.DB, d Delivery, job river.JobArgs, now time.Time) (duplicate bool, err error) {
	err = db.InTx(ctx, func(tx store.Tx) error {
		n, err := tx.Exec(ctx, t.insert, d.ID, d.Event, d.Action, d.Scope, string(d.Payload), store.Micros(now))
		if err != nil {
			return fmt.Errorf("store delivery: %w", err)
		}
		if n == 0 {
			duplicate = true
			return nil
		}
		return tx.InsertJob(ctx, job, nil)
	})
	return duplicate, err
}

// Action is what a delivery changes, run in the transaction that marks it
// handled.
type Action func(ctx context.Context, tx store.Tx, now time.Time) error

// Handle handles the stored delivery id: plan decodes it and asks the
// platform what it must (outside any transaction) and returns what to
// change, or nil; then one transaction claims the delivery, dropping its
// payload, and runs the action, so of two runs at once only the first
// changes anything. A delivery handled already is left alone. It returns
// the delivery's event, for the caller's log.
func (t Table) Handle(ctx context.Context, db *store.DB, id string, now func() time.Time,
	plan func(ctx context.Context, d Delivery) (Action, error)) (string, error) {
	d := Delivery{ID: id}
	var payload sql.NullString
	err := db.Writer().QueryRow(ctx, t.load, id).Scan(&d.Event, &d.Scope, &payload)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !payload.Valid) {
		return d.Event, nil // handled already
	}
	if err != nil {
		return "", fmt.Errorf("load delivery %s: %w", id, err)
	}
	d.Payload = []byte(payload.String)
	act, err := plan(ctx, d)
	if err != nil {
		return d.Event, fmt.Errorf("delivery %s (%s): %w", id, d.Event, err)
	}
	at := now()
	return d.Event, db.InTx(ctx, func(tx store.Tx) error {
		// Claim the delivery first: another run of its job (one rescued
		// while this one still works) waits here, then finds it handled.
		n, err := tx.Exec(ctx, t.claim, store.Micros(at), id)
		if err != nil {
			return fmt.Errorf("claim delivery %s: %w", id, err)
		}
		if n == 0 || act == nil {
			return nil
		}
		if err := act(ctx, tx, at); err != nil {
			return fmt.Errorf("delivery %s (%s): %w", id, d.Event, err)
		}
		return nil
	})
}

// Prune forgets the deliveries handled, or received and never handled,
// longer than Retention before now, and reports how many.
func (t Table) Prune(ctx context.Context, db *store.DB, now time.Time) (int64, error) {
	n, err := db.Writer().Exec(ctx, t.prune, store.Micros(now.Add(-Retention)))
	if err != nil {
		return 0, fmt.Errorf("prune deliveries: %w", err)
	}
	return n, nil
}

// PruneQuery is Prune's statement, for tests of its plan.
func (t Table) PruneQuery() string { return t.prune }

// PruneWorker works A, a platform's daily prune job, by calling Prune.
type PruneWorker[A river.JobArgs] struct {
	river.WorkerDefaults[A]
	Prune func(ctx context.Context) (int64, error)
}

// Work prunes.
func (w *PruneWorker[A]) Work(ctx context.Context, _ *river.Job[A]) error {
	_, err := w.Prune(ctx)
	return err
}

// Daily schedules args every day, on the elected leader.
func Daily(args river.JobArgs) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(24*time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return args, nil }, nil)
}
