package logic_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist/logic"
)

// benchFile is one file of the benchmark's package: about 25 lines of
// ordinary standard-library code.
func benchFile(i int, changed bool) string {
	extra := ""
	if changed {
		extra = fmt.Sprintf(`
// Changed%d sums the lengths of its words.
func Changed%d(ctx context.Context, words []string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	n := 0
	for _, w := range words {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n += len(strings.TrimSpace(w))
	}
	return n, nil
}
`, i, i)
	}
	return fmt.Sprintf(`package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

var _ = time.Second
var _ context.Context

// Item%d is one record.
type Item%d struct {
	Name  string
	Count int
}

// String describes the item.
func (it Item%d) String() string {
	return fmt.Sprintf("%%s: %%d", strings.ToUpper(it.Name), it.Count)
}
%s`, i, i, i, extra)
}

// BenchmarkLogicReview reviews a change of about 20 files and 300 changed
// lines in a standard-library-only module, loading it afresh each time.
func BenchmarkLogicReview(b *testing.B) {
	r := goanalysistest.NewRepo(b)
	files := map[string]string{"go.mod": goanalysistest.GoMod("example.com/bench")}
	for i := range 20 {
		files[fmt.Sprintf("bench/f%02d.go", i)] = benchFile(i, false)
	}
	r.Write(files)
	base := r.Commit("base")
	for i := range 20 {
		files[fmt.Sprintf("bench/f%02d.go", i)] = benchFile(i, true)
	}
	r.Write(files)
	head := r.Commit("head")
	c := r.Change(base, head)
	if n := len(c.Files); n != 20 {
		b.Fatalf("change has %d files, want 20", n)
	}
	ctx := context.Background()
	for b.Loop() {
		fs, err := logic.New(goanalysistest.Loader()).Review(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range fs {
			if !strings.HasPrefix(f.Path, "bench/") {
				b.Fatalf("unexpected finding %+v", f)
			}
		}
	}
}
