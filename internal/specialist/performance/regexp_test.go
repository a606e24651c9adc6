package performance_test

import (
	"context"
	"slices"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist/performance"
)

// filters compiles patterns in loops: the same one every time (a
// parameter, a variable set before the loop) is a finding; one that
// changes per iteration is not.
const filters = `package filter

import (
	"regexp"
	"strings"
)

// Matching keeps the lines that match pattern.
func Matching(lines []string, pattern string) []string {
	var out []string
	for _, l := range lines {
		if regexp.MustCompile(pattern).MatchString(l) { // want:quorum:regexpinloop
			out = append(out, l)
		}
	}
	return out
}

// Prefixed keeps the lines that start with prefix.
func Prefixed(lines []string, prefix string) ([]string, error) {
	expr := "^" + regexp.QuoteMeta(prefix)
	var out []string
	for i := 0; i < len(lines); i++ {
		re, err := regexp.Compile(expr) // want:quorum:regexpinloop
		if err != nil {
			return nil, err
		}
		if re.MatchString(lines[i]) {
			out = append(out, lines[i])
		}
	}
	return out, nil
}

// Words keeps the lines with word, built around the parameter.
func Words(lines []string, word string) int {
	n := 0
	for _, l := range lines {
		if regexp.MustCompile(` + "`\\b`" + ` + word + ` + "`\\b`" + `).MatchString(l) { // want:quorum:regexpinloop
			n++
		}
	}
	return n
}

// Any compiles each pattern once: it changes per iteration.
func Any(s string, patterns []string) bool {
	for _, p := range patterns {
		if regexp.MustCompile(p).MatchString(s) { // clean
			return true
		}
	}
	return false
}

// Escalating reassigns the pattern in the loop.
func Escalating(s, pattern string, n int) bool {
	for i := 0; i < n; i++ {
		if regexp.MustCompile(pattern).MatchString(s) { // clean
			return true
		}
		pattern = strings.TrimSuffix(pattern, "$")
	}
	return false
}

// PerLine builds a pattern from each line.
func PerLine(lines []string) int {
	n := 0
	for _, l := range lines {
		expr := "^" + regexp.QuoteMeta(l) + "$"
		if regexp.MustCompile(expr).MatchString("x") { // clean
			n++
		}
	}
	return n
}
`

func TestReviewRegexpLoopInvariant(t *testing.T) {
	t.Parallel()
	repo := goanalysistest.NewRepo(t)
	repo.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/filters"), "filter/doc.go": "// Package filter filters lines.\npackage filter\n"})
	base := repo.Commit("base")
	repo.Write(map[string]string{"filter/filter.go": filters})
	head := repo.Commit("head")

	fs, err := performance.New(goanalysistest.Loader()).Review(context.Background(), repo.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	found := map[int][]string{}
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s", f.Path, f.Line, f.Rule, f.Severity, f.Headline)
		found[f.Line] = append(found[f.Line], f.Rule)
	}
	for _, line := range goanalysistest.Marked(filters, "want:quorum:regexpinloop") {
		if !slices.Contains(found[line], "quorum:regexpinloop") {
			t.Errorf("line %d: regexpinloop not found; found %v", line, found[line])
		}
	}
	for _, line := range goanalysistest.Marked(filters, "clean") {
		if slices.Contains(found[line], "quorum:regexpinloop") {
			t.Errorf("clean line %d has regexpinloop", line)
		}
	}
}

// lookups query the database in loops: once per item is N+1; a loop that
// stops at the first row found (a fallback through a few aliases) is not.
const lookups = `package lookup

import (
	"context"
	"database/sql"
)

// Names fetches each user's name: one round trip per id.
func Names(ctx context.Context, db *sql.DB, ids []int) ([]string, error) {
	var out []string
	for _, id := range ids {
		var name string
		if err := db.QueryRowContext(ctx, "SELECT name FROM users WHERE id = $1", id).Scan(&name); err != nil { // want:quorum:queryinloop
			return nil, err
		}
		switch name {
		case "":
			break
		default:
			out = append(out, name)
		}
	}
	return out, nil
}

// Stored looks a query up under the database's alias, then under none
// (prest 8313b87).
func Stored(ctx context.Context, db *sql.DB, aliases []string, name string) (string, error) {
	var q string
	var err error
	for _, alias := range aliases {
		err = db.QueryRowContext(ctx, "SELECT sql FROM queries WHERE alias = $1 AND name = $2", alias, name).Scan(&q) // clean
		if err == nil {
			break
		}
		if err != sql.ErrNoRows {
			return "", err
		}
	}
	return q, err
}
`

func TestReviewQueryInLoopNotForSearches(t *testing.T) {
	t.Parallel()
	repo := goanalysistest.NewRepo(t)
	repo.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/lookup"), "lookup/doc.go": "// Package lookup looks things up.\npackage lookup\n"})
	base := repo.Commit("base")
	repo.Write(map[string]string{"lookup/lookup.go": lookups})
	fs, err := performance.New(goanalysistest.Loader()).Review(context.Background(), repo.Change(base, repo.Commit("head")))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, f := range fs {
		if f.Rule == "quorum:queryinloop" {
			got = append(got, f.Line)
		}
	}
	want := goanalysistest.Marked(lookups, "want:quorum:queryinloop")
	if !slices.Equal(got, want) {
		t.Fatalf("queryinloop on lines %v, want %v", got, want)
	}
}
