package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/storetest"
)

// genericDetail is all a 500 says.
const genericDetail = "The server failed to handle the request. Quote the request id when reporting it."

// wantInternal checks a 500 shows nothing but the generic problem, and
// that the log has an error entry with its request id whose text contains
// logged; it returns that entry.
func wantInternal(t *testing.T, b *bundle, r response, logged string) map[string]any {
	t.Helper()
	p := r.want(t, http.StatusInternalServerError).problem(t, codeInternal)
	if p.Title != "internal error" || p.Detail != genericDetail || len(p.InvalidParams) != 0 {
		t.Errorf("500 problem %+v, want only the generic title and detail", p)
	}
	body := strings.ToLower(string(r.body))
	for _, leak := range []string{"select", "sql", "table", "relation", "findings", "panic", "boom", "goroutine", ".go:"} {
		if strings.Contains(body, leak) {
			t.Errorf("500 body shows %q: %s", leak, r.body)
		}
	}
	for _, e := range b.logs.entries(t) {
		if e["request_id"] == p.RequestID && e["level"] == "ERROR" {
			if text := fmt.Sprint(e["error"], e["panic"]); !strings.Contains(text, logged) {
				t.Errorf("log entry %v does not record %q", e, logged)
			}
			return e
		}
	}
	t.Fatalf("no ERROR log entry with request_id %s", p.RequestID)
	return nil
}

// TestPanicIsA500 wraps a panicking handler in the server's middleware: the
// client gets a 500 problem with a request id, not a dropped connection.
func TestPanicIsA500(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.SQLite)
	s := b.srv
	ts := httptest.NewServer(s.observe(s.authenticate(s.rateLimit(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom: handler bug")
	})))))
	t.Cleanup(ts.Close)
	panicky := *b
	panicky.url = ts.URL
	// A documented path, so the 500 is checked against that operation.
	r := panicky.get(t, "/v1/reviews/"+id.New(id.Review, b.clock.Now()), "")
	e := wantInternal(t, b, r, "boom: handler bug")
	if e["msg"] != "panic in handler" || !strings.Contains(fmt.Sprint(e["stack"]), "failure_test.go") {
		t.Errorf("panic log entry %v lacks the message or the stack", e)
	}
}

// TestDatabaseFailureIsA500 breaks the schema under a running server: the
// 500 shows no internals and its request id leads to the logged error.
func TestDatabaseFailureIsA500(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		secret := b.reader(t)
		rv := storetest.Review(t, b.db, b.repo, 1, 1, b.clock.Now().Add(-time.Hour))
		b.get(t, "/v1/findings/"+rv.Findings[0].ID, secret).want(t, http.StatusOK)
		if _, err := b.db.Writer().Exec(t.Context(), `ALTER TABLE findings RENAME TO findings_gone`); err != nil {
			t.Fatal(err)
		}
		wantInternal(t, b, b.get(t, "/v1/findings/"+rv.Findings[0].ID, secret), "findings")
		wantInternal(t, b, b.get(t, "/v1/reviews/"+rv.ID, secret), "findings")
		if strings.Contains(b.logs.String(), secret) {
			t.Error("the log contains a token")
		}
	})
}
