package security_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/security"
)

// sqlStore holds the ways SQL injection is written. Each line marked
// "want:<rule>" must get exactly that one SQL finding; lines marked
// "clean" none.
const sqlStore = `package app

import (
	"database/sql"
	"fmt"
	"net/http"
	"strings"
)

// Store reads users.
type Store struct{ db *sql.DB }

// ByID is the inline Sprintf gosec does not see.
func ByID(db *sql.DB, id string) error {
	rows, err := db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = '%s'", id)) // want:quorum:sql-injection
	if err != nil {
		return err
	}
	return rows.Close()
}

// ByEmail returns the query's rows.
func ByEmail(db *sql.DB, email string) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM users WHERE email = '%s'", email)) // want:quorum:sql-injection
}

// Reset sets a column chosen by the caller.
func Reset(db *sql.DB, field string) error {
	const q = "UPDATE users SET %s = NULL"
	_, err := db.Exec(fmt.Sprintf(q, field)) // want:quorum:sql-injection
	return err
}

// ByName concatenates.
func (s *Store) ByName(name string) (*sql.Rows, error) {
	return s.db.Query("SELECT * FROM users WHERE name = '" + name + "'") // want:quorum:sql-injection
}

// ByNick builds into a variable first: gosec sees this one too.
func ByNick(db *sql.DB, nick string) (*sql.Rows, error) {
	q := fmt.Sprintf("SELECT * FROM users WHERE nick = '%s'", nick) // want:quorum:sql-injection
	rows, err := db.Query(q)
	return rows, err
}

// ByCity escapes the quote itself: gosec still reports it, the analyzer
// does not.
func ByCity(db *sql.DB, city string) (*sql.Rows, error) {
	rows, err := db.Query("SELECT * FROM users WHERE city = '" + strings.ReplaceAll(city, "'", "''") + "'") // want:gosec:G202
	return rows, err
}

// Lookup takes the id from the request: the taint rule knows more.
func Lookup(db *sql.DB, r *http.Request) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = '%s'", r.FormValue("id"))) // want:gosec:G701
}

// Safe uses a placeholder.
func Safe(db *sql.DB, id string) (*sql.Rows, error) {
	return db.Query("SELECT * FROM users WHERE id = $1", id) // clean
}

// Limit formats an integer.
func Limit(db *sql.DB, n int) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM users LIMIT %d", n)) // clean
}
`

func TestReviewSQLInjection(t *testing.T) {
	t.Parallel()
	repo := goanalysistest.NewRepo(t)
	repo.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/sqlapp"),
		"app/doc.go": "// Package app is an application.\npackage app\n",
	})
	base := repo.Commit("base")
	repo.Write(map[string]string{"app/store.go": sqlStore})
	head := repo.Commit("head")

	fs, err := security.New(goanalysistest.Loader(), nil).Review(context.Background(), repo.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	sqlRules := map[string]bool{"quorum:sql-injection": true, "gosec:G201": true, "gosec:G202": true, "gosec:G701": true}
	byLine := map[int][]string{}
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s", f.Path, f.Line, f.Rule, f.Severity, f.Headline)
		if f.Path != "app/store.go" || !sqlRules[f.Rule] {
			continue
		}
		byLine[f.Line] = append(byLine[f.Line], f.Rule)
		if f.Severity != specialist.SeverityHigh {
			t.Errorf("%s on line %d has severity %s, want high", f.Rule, f.Line, f.Severity)
		}
		if f.Rule == "quorum:sql-injection" && !strings.Contains(f.Headline, "(*sql.DB).") {
			t.Errorf("headline %q does not name the sink", f.Headline)
		}
	}
	for _, rule := range []string{"quorum:sql-injection", "gosec:G202", "gosec:G701"} {
		for _, line := range goanalysistest.Marked(sqlStore, "want:"+rule) {
			if got := fmt.Sprint(byLine[line]); got != fmt.Sprint([]string{rule}) {
				t.Errorf("line %d: SQL findings %s, want exactly [%s]", line, got, rule)
			}
		}
	}
	for _, line := range goanalysistest.Marked(sqlStore, "clean") {
		if len(byLine[line]) > 0 {
			t.Errorf("clean line %d has %v", line, byLine[line])
		}
	}
}
