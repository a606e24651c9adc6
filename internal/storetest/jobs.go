package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/quorum-review/quorum/internal/store"
)

// JobArgs lists the arguments of the River jobs of kind in db, oldest
// first, whatever their state.
func JobArgs(t testing.TB, db *store.DB, kind string) []map[string]any {
	t.Helper()
	query := `SELECT args::text FROM river_job WHERE kind = $1 ORDER BY id`
	if db.Dialect() == store.SQLite {
		query = `SELECT json(args) FROM river_job WHERE kind = $1 ORDER BY id` // River stores JSONB there
	}
	rows, err := db.Reader().Query(context.Background(), query, kind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
