package insight

import (
	"context"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/storetest"
)

// TestQueriesUseIndexes checks SQLite's plan of each query: it searches
// the indexes named (a time window of an account's rows), and scans no
// table whole, so a query reads what its window holds, not the database.
func TestQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	for _, c := range []struct {
		name, query string
		indexes     []string
	}{
		{"daysOfRepo", daysOfRepo, []string{"sqlite_autoindex_review_days_1"}},
		{"daysOfAccount", daysOfAccount, []string{"repositories_account_owner_name", "sqlite_autoindex_review_days_1"}},
		{"durationsOfRepo", durationsOfRepo, []string{"sqlite_autoindex_review_day_durations_1"}},
		{"durationsOfAccount", durationsOfAccount, []string{"repositories_account_owner_name", "sqlite_autoindex_review_day_durations_1"}},
		{"deliverySuccess", deliverySuccess, []string{"webhook_endpoints_account", "webhook_deliveries_endpoint", "sqlite_autoindex_webhook_attempts_1"}},
	} {
		rows, err := db.Reader().Query(context.Background(), "EXPLAIN QUERY PLAN "+c.query, "acct_x", 1, 2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "\n")
		for _, line := range plan {
			if strings.HasPrefix(line, "SCAN ") {
				t.Errorf("%s scans a table whole:\n%s", c.name, all)
			}
		}
		for _, ix := range c.indexes {
			if !strings.Contains(all, "INDEX "+ix+" (") {
				t.Errorf("%s does not search %s:\n%s", c.name, ix, all)
			}
		}
	}
}
