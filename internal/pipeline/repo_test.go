package pipeline

import (
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// prChange is the change from base to head of r, as pull request acme/api#7.
func prChange(t *testing.T, r *goanalysistest.Repo, base, head string) *change.Change {
	t.Helper()
	c := r.Change(base, head)
	c.Owner, c.Repo, c.PRNumber = "acme", "api", 7
	return c
}

const baseApp = `package app

import "fmt"

func Hello() string {
	return "hello"
}
`

// headApp adds lines 8–15 to baseApp.
const headApp = baseApp + `
func Query(db DB, name string) {
	q := fmt.Sprintf("SELECT * FROM t WHERE name = '%s'", name)
	db.Query(q)
	for i := 0; i < 10; i++ {
		fmt.Println(i)
	}
}
`

// fixture is a repository whose feature branch changes app.go (lines 8–15
// added), adds util.go, and adds a lock file and a generated file (neither
// source), which are skipped.
func fixture(t *testing.T) *change.Change {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"app.go": baseApp})
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(map[string]string{
		"app.go":            headApp,
		"util.go":           "package app\n\nfunc Util() int {\n\treturn 1\n}\n",
		"package-lock.json": "{}\n",
		"web/app.css.map":   "{}\n",
	})
	r.Commit("feature")
	return prChange(t, r, "main", "feature")
}
