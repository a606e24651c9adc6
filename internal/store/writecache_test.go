package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// The SQLite writer's statement cache: a query run again while rows of the
// same query are still open gets its own statement; more distinct queries
// than the cache holds still run; a script of several statements runs
// whole; and a statement prepared before a schema change sees the new
// schema.
func TestWriterStatementCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.SQLite(t)
	w := db.Writer()
	if _, err := w.Exec(ctx, `CREATE TABLE cache_t (n BIGINT PRIMARY KEY, m BIGINT); INSERT INTO cache_t (n, m) VALUES (1, 10), (2, 20), (3, 30)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := w.QueryRow(ctx, `SELECT count(*) FROM cache_t`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("the script ran in part: %d rows (%v)", n, err)
	}

	const list = `SELECT n FROM cache_t WHERE n >= $1 ORDER BY n`
	err := db.InTx(ctx, func(tx store.Tx) error {
		outer, err := tx.Query(ctx, list, 1)
		if err != nil {
			return err
		}
		defer outer.Close()
		var got []string
		for outer.Next() {
			var a int
			if err := outer.Scan(&a); err != nil {
				return err
			}
			inner, err := tx.Query(ctx, list, a)
			if err != nil {
				return err
			}
			var bs []int
			for inner.Next() {
				var b int
				if err := inner.Scan(&b); err != nil {
					return err
				}
				bs = append(bs, b)
			}
			inner.Close()
			if _, err := tx.Exec(ctx, `UPDATE cache_t SET m = m + 1 WHERE n = $1`, a); err != nil {
				return err
			}
			got = append(got, fmt.Sprint(a, bs))
		}
		if fmt.Sprint(got) != "[1 [1 2 3] 2 [2 3] 3 [3]]" {
			return fmt.Errorf("nested queries read %v", got)
		}
		return outer.Err()
	})
	if err != nil {
		t.Fatal(err)
	}

	for i := range 300 {
		var got int
		if err := w.QueryRow(ctx, fmt.Sprintf(`SELECT m + %d FROM cache_t WHERE n = $1`, i), 1).Scan(&got); err != nil || got != 11+i {
			t.Fatalf("distinct query %d: %d (%v)", i, got, err)
		}
	}

	const sum = `SELECT sum(m) FROM cache_t`
	if err := w.QueryRow(ctx, sum).Scan(&n); err != nil || n != 63 {
		t.Fatalf("sum %d (%v), want 63", n, err)
	}
	if _, err := w.Exec(ctx, `ALTER TABLE cache_t RENAME COLUMN m TO old_m; ALTER TABLE cache_t ADD COLUMN m BIGINT NOT NULL DEFAULT 1`); err != nil {
		t.Fatal(err)
	}
	if err := w.QueryRow(ctx, sum).Scan(&n); err != nil || n != 3 {
		t.Fatalf("after the schema change: sum %d (%v), want 3", n, err)
	}
}
