package performance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/performance"
)

func TestReviewPlanted(t *testing.T) {
	t.Parallel()
	p := goanalysistest.NewPlanted(t)
	s := performance.New(goanalysistest.Loader())
	if s.Name() != specialist.Performance {
		t.Fatalf("Name() = %q", s.Name())
	}
	fs, err := s.Review(context.Background(), p.Change)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s", f.Path, f.Line, f.Rule, f.Severity, f.Headline)
		if f.Note != "" {
			t.Errorf("type-checked finding has a note: %q", f.Note)
		}
	}
	p.Check(t, fs, specialist.CategoryPerformance, map[string]string{
		"quorum:regexpinloop": specialist.SeverityMedium,
		"quorum:deferinloop":  specialist.SeverityMedium,
		"quorum:queryinloop":  specialist.SeverityMedium,
		"quorum:concatinloop": specialist.SeverityLow,
	})
}

// A package importing a module that is not available offline cannot be
// type-checked: the specialist's own analyzers still run on its syntax,
// and say so.
func TestReviewSyntaxOnly(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":    goanalysistest.GoMod("example.com/offline") + "\nrequire example.invalid/missing v1.2.3\n",
		"svc/a.go":  "package svc\n\nfunc A() {}\n",
		"README.md": "offline\n",
	})
	base := r.Commit("base")
	src := `package svc

import (
	"database/sql"
	"net/http"
	"regexp"

	"example.invalid/missing"
)

var word = regexp.MustCompile("w+") // clean

var broken int = "its own type error, in a package-level declaration"

// Handle compiles per request.
func Handle(w http.ResponseWriter, r *http.Request) {
	re := regexp.MustCompile("^[a-z]+$") // want:quorum:regexpinloop
	missing.Use(re, word)
}

// Each queries per item.
func Each(db *sql.DB, ids []int) {
	for _, id := range ids {
		db.QueryRow("SELECT 1 WHERE $1", id) // want:quorum:queryinloop
		total := 0
		total += id // clean
		_ = total
	}
}
`
	r.Write(map[string]string{"svc/a.go": src})
	head := r.Commit("head")
	c := r.Change(base, head)

	fs, err := performance.New(goanalysistest.Loader()).Review(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		goanalysistest.Marked(src, "want:quorum:regexpinloop")[0]: "quorum:regexpinloop",
		goanalysistest.Marked(src, "want:quorum:queryinloop")[0]:  "quorum:queryinloop",
	}
	if len(fs) != len(want) {
		t.Fatalf("got %d findings, want %d: %+v", len(fs), len(want), fs)
	}
	for _, f := range fs {
		if want[f.Line] != f.Rule || f.Path != "svc/a.go" {
			t.Errorf("unexpected finding %s at %s:%d", f.Rule, f.Path, f.Line)
		}
		// go/types goes on past the error: the package is typed in
		// part, and the note says so.
		if !strings.HasPrefix(f.Note, "partly typed: ") || !strings.Contains(f.Note, "its own type error") {
			t.Errorf("finding %s has note %q, want partly typed naming the package's error", f.Rule, f.Note)
		}
		if strings.Contains(f.Note, "quorum-head-") {
			t.Errorf("note %q names the temporary directory", f.Note)
		}
	}
	if strings.Contains(fs[0].Headline, "every request") == false {
		t.Errorf("regexp in a handler: headline %q does not say per request", fs[0].Headline)
	}
}
