package security_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/security"
)

// A file of a package that does not type-check no longer hides the rest
// of its package: a change that breaks one function in one file and
// builds a query inline in another gets the SQL injection reported. Where
// the error is in a function body, that body is left out and every
// analyzer runs on the rest (the SSA analyzer among them); where it is in
// a package-level declaration, the analyzers that need no SSA run on what
// did type-check, and the review says which did not.
func TestReviewPackageWithTypeErrors(t *testing.T) {
	t.Parallel()
	const store = `package %s

import (
	"database/sql"
	"fmt"
)

// ByID builds the query inline.
func ByID(db *sql.DB, id string) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = '%%s'", id)) // want:ssa
}

// ByNick builds it into a variable first.
func ByNick(db *sql.DB, nick string) (*sql.Rows, error) {
	q := fmt.Sprintf("SELECT * FROM users WHERE nick = '%%s'", nick) // want:ssa+syntax
	rows, err := db.Query(q)
	return rows, err
}
`
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":        goanalysistest.GoMod("example.com/broken"),
		"app/doc.go":    "// Package app is an application.\npackage app\n",
		"app/count.go":  "package app\n\n// Count counts.\nfunc Count(xs []int) int {\n\treturn len(xs)\n}\n",
		"decl/doc.go":   "// Package decl is an application.\npackage decl\n",
		"decl/limit.go": "package decl\n\n// Limit is the page size.\nvar Limit int = 10\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{
		// A body that does not compile: the rest of app is typed.
		"app/count.go": "package app\n\n// Count counts.\nfunc Count(xs []int) int {\n\treturn len(xs) + \"1\"\n}\n",
		"app/store.go": fmt.Sprintf(store, "app"),
		// A package-level declaration that does not compile.
		"decl/limit.go": "package decl\n\n// Limit is the page size.\nvar Limit int = \"ten\"\n",
		"decl/store.go": fmt.Sprintf(store, "decl"),
	})
	head := r.Commit("head")

	fs, gaps := reviewCoverage(t, r.Change(base, head))
	var got []string
	for _, f := range fs {
		t.Logf("%s:%d %s %s [%s]", f.Path, f.Line, f.Rule, f.Headline, f.Note)
		got = append(got, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Rule))
	}
	src := fmt.Sprintf(store, "x")
	// In app, every analyzer ran: the SQL analyzer's finding stands
	// on both lines. In decl only those that need no SSA did: gosec's
	// G201 sees the query built into a variable, not the inline one.
	var want []string
	for _, line := range slices.Concat(goanalysistest.Marked(src, "want:ssa"), goanalysistest.Marked(src, "want:ssa+syntax")) {
		want = append(want, fmt.Sprintf("app/store.go:%d quorum:sql-injection", line))
	}
	for _, line := range goanalysistest.Marked(src, "want:ssa+syntax") {
		want = append(want, fmt.Sprintf("decl/store.go:%d gosec:G201", line))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	for _, f := range fs {
		if strings.HasPrefix(f.Path, "decl/") && !strings.HasPrefix(f.Note, "partly typed:") {
			t.Errorf("%s:%d has note %q, want it to say the package was typed in part", f.Path, f.Line, f.Note)
		}
	}

	if why := gaps["app/count.go"]; !strings.Contains(why, "its functions Count could not be type-checked") {
		t.Errorf("app/count.go's coverage: %q, want Count named as left out", why)
	}
	if why, ok := gaps["app/store.go"]; ok {
		t.Errorf("app/store.go was analysed in full, yet reported as %q", why)
	}
	for _, f := range []string{"decl/limit.go", "decl/store.go"} {
		if why := gaps[f]; !strings.Contains(why, "type-checked only in part") || !strings.Contains(why, "sqlinject") || !strings.Contains(why, "gosec's SSA analyses") {
			t.Errorf("%s's coverage: %q, want it to name the analyzers that did not run", f, why)
		}
	}
}

// A replacement by a directory outside the repository is dropped, so the
// module it replaced cannot be had: the functions using it are left out,
// and the rest of the package gets every analyzer, the SQL one among them.
func TestReviewPackageWithDroppedReplace(t *testing.T) {
	t.Parallel()
	const store = `package app

import (
	"database/sql"
	"fmt"

	fork "github.com/fork/x"
)

// Name uses the replaced module, imported under a name of its own
// (an import is no use of it).
func Name() string {
	return fork.Name()
}

// ByID builds the query inline.
func ByID(db *sql.DB, id string) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = '%s'", id)) // want:quorum:sql-injection
}
`
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     "module example.com/app\n\ngo 1.26\n\nrequire github.com/fork/x v0.0.0-00010101000000-000000000000\n\nreplace github.com/fork/x => ../x\n",
		"app/doc.go": "// Package app is an application.\npackage app\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"app/store.go": store})
	head := r.Commit("head")
	fs, gaps := reviewCoverage(t, r.Change(base, head))
	got := located(fs)
	want := []string{fmt.Sprintf("app/store.go:%d quorum:sql-injection", goanalysistest.Marked(store, "want:quorum:sql-injection")[0])}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	if why := gaps["app/store.go"]; !strings.Contains(why, "its functions Name could not be type-checked") || !strings.Contains(why, "github.com/fork/x") {
		t.Errorf("app/store.go's coverage: %q, want Name named as left out for the module it lacks", why)
	}
}

// Nested generic types that would keep the type checker busy for hours
// are analysed as empty structs: the rest of their package is
// type-checked and analysed, and the review says what was not.
func TestReviewPackageWithExplosiveTypes(t *testing.T) {
	t.Parallel()
	bomb := []string{"package app", "", "type P0[T any] struct{ v T }"}
	for i := 1; i < 40; i++ {
		bomb = append(bomb, fmt.Sprintf("type P%d[T any] struct{ a, b P%d[T] }", i, i-1))
	}
	bomb = append(bomb, "var V P39[int]", "", "// First reads a field of the bomb.", "func First() P37[int] {", "\treturn V.a.b", "}")
	const store = `package app

import (
	"database/sql"
	"fmt"
)

// ByID builds the query inline.
func ByID(db *sql.DB, id string) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM users WHERE id = '%s'", id)) // want:quorum:sql-injection
}
`
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":     goanalysistest.GoMod("example.com/bomb"),
		"app/doc.go": "// Package app is an application.\npackage app\n",
	})
	base := r.Commit("base")
	r.Write(map[string]string{"app/bomb.go": strings.Join(bomb, "\n") + "\n", "app/store.go": store})
	head := r.Commit("head")
	fs, gaps := reviewCoverage(t, r.Change(base, head))
	got := located(fs)
	want := []string{fmt.Sprintf("app/store.go:%d quorum:sql-injection", goanalysistest.Marked(store, "want:quorum:sql-injection")[0])}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	for _, f := range []string{"app/bomb.go", "app/store.go"} {
		if why := gaps[f]; !strings.Contains(why, "expands to more than") || !strings.Contains(why, "empty structs") {
			t.Errorf("%s's coverage: %q, want it to say the types too large were analysed as empty structs", f, why)
		}
	}
}

// reviewCoverage runs the security specialist on c and returns its
// findings and, by path, why each changed file it did not analyse in full
// was not.
func reviewCoverage(t *testing.T, c *change.Change) ([]specialist.Finding, map[string]string) {
	t.Helper()
	var mu sync.Mutex
	gaps := map[string]string{}
	ctx := specialist.WithCoverage(context.Background(), func(c specialist.Coverage) {
		mu.Lock()
		defer mu.Unlock()
		if !c.Analysed {
			gaps[c.Path] = c.Reason
		}
	})
	fs, err := security.New(goanalysistest.Loader(), nil).Review(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return fs, maps.Clone(gaps)
}

// located says where each finding is and by which rule: "path:line rule".
func located(fs []specialist.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Rule))
	}
	return out
}
