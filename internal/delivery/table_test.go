package delivery_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/delivery"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// Prune finds what it deletes through an index, not by reading every
// delivery, in each platform's table.
func TestPruneUsesAnIndex(t *testing.T) {
	t.Parallel()
	for _, table := range []struct{ name, scope string }{{"github_deliveries", "installation_id"}, {"gitea_deliveries", "repository_id"}} {
		t.Run(table.name, func(t *testing.T) { pruneUsesAnIndex(t, table.name, table.scope) })
	}
}

func pruneUsesAnIndex(t *testing.T, name, scope string) {
	t.Parallel()
	deliveries := delivery.NewTable(name, scope)
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		ctx := context.Background()
		var plan []string
		err := db.InTx(ctx, func(tx store.Tx) error {
			explain := "EXPLAIN QUERY PLAN "
			if db.Dialect() != store.SQLite {
				// An empty table is cheapest to scan: ask for the plan with
				// an index when one serves.
				if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
					return err
				}
				explain = "EXPLAIN "
			}
			rows, err := tx.Query(ctx, explain+deliveries.PruneQuery(), int64(1))
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var cols []any
				if db.Dialect() == store.SQLite {
					cols = []any{new(int64), new(int64), new(int64), new(string)} // id, parent, notused, detail
				} else {
					cols = []any{new(string)}
				}
				if err := rows.Scan(cols...); err != nil {
					return err
				}
				plan = append(plan, *cols[len(cols)-1].(*string))
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(plan, "\n"), name+"_received") {
			t.Errorf("Prune's plan uses no index:\n%s", strings.Join(plan, "\n"))
		}
	})
}
