package goanalysis_test

import (
	"context"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/lostcancel"

	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// A diagnostic in a function the change adds, on a line whose text the
// base file has only in another function, cannot match anything at base:
// the base is not loaded for it (bench/review's planted lost cancel, whose
// `return nil, err…` stands in other functions at base, cost a base load
// before).
func TestNoBaseLoadForLineOnlyInAnotherFunction(t *testing.T) {
	t.Parallel()
	src := `package fetch

import (
	"context"
	"errors"
	"time"
)

var errEmpty = errors.New("empty")

// Get gets.
func Get(name string) (string, error) {
	if name == "" {
		return "", errEmpty
	}
	return name, nil
}
`
	head := src + `
// Fetch fetches with a deadline.
func Fetch(ctx context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	if name == "" {
		return "", errEmpty
	}
	_ = ctx
	cancel()
	return name, nil
}
`
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/fetch"), "fetch.go": src})
	base := r.Commit("base")
	r.Write(map[string]string{"fetch.go": head})
	l := goanalysistest.Loader()
	fs, err := l.Findings(context.Background(), r.Change(base, r.Commit("head")), "logic", []*analysis.Analyzer{lostcancel.Analyzer}, nil,
		func(goanalysis.Diagnostic) (string, string, bool) { return "go-vet:lostcancel", "high", true })
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 {
		t.Fatalf("findings %+v, want lostcancel's two", fs)
	}
	if l.BaseLoadedForTest() {
		t.Fatal("the base was loaded")
	}
}
