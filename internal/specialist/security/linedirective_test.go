package security_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// A //line directive makes go/token report what follows it at another
// file and line. A pull request that put one before its SQL injection
// moved the finding onto an unchanged file, where the review drops what
// it finds: its own directive switched its review off. Findings are
// placed where they are in the file.
func TestReviewIgnoresLineDirectives(t *testing.T) {
	t.Parallel()
	const src = `package app

import (
	"database/sql"
	"fmt"
)

// ByID builds the query inline.
func ByID(db *sql.DB, id string) (*sql.Rows, error) {
//line other.go:1
	return db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = '%s'", id)) // want
}

/*line other.go:40:1*/
// ByNick builds it into a variable first.
func ByNick(db *sql.DB, nick string) (*sql.Rows, error) {
	q := fmt.Sprintf("SELECT * FROM users WHERE nick = '%s'", nick) // want
	return db.Query(q)
}
`
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/line"),
		"app/doc.go": "// Package app is an application.\npackage app\n",
		"other.go":   "package line\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"app/store.go": src})
	head := r.Commit("head")

	fs, _ := reviewCoverage(t, r.Change(base, head))
	got := located(fs)
	for _, line := range goanalysistest.Marked(src, "want") {
		if want := fmt.Sprintf("app/store.go:%d quorum:sql-injection", line); !slices.Contains(got, want) {
			t.Errorf("no finding at %s, where the injection is; findings at %v", want, got)
		}
	}
}
