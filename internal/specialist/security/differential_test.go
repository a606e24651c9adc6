package security_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist/security"
)

// A problem the change introduces on a line identical to one that had the
// problem at base, in another function, is still the change's; the old
// one is not reported (gin's Run, RunTLS and RunUnix share
// `server := &http.Server{`, one of them unprotected at base).
func TestReviewIdenticalLineElsewhere(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	src := `package token

import "math/rand"

// Old makes an id.
func Old() int {
	n := rand.Intn(1 << 30)
	return n
}

// New makes a token.
func New() int {
	n := 4
	return n
}
`
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/tok"), "token.go": src})
	base := r.Commit("base")
	r.Write(map[string]string{"token.go": strings.Replace(src, "\tn := 4\n", "\tn := rand.Intn(1 << 30)\n", 1)})
	head := r.Commit("head")
	fs, err := security.New(goanalysistest.Loader(), nil).Review(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, f := range fs {
		if f.Rule == "gosec:G404" {
			lines = append(lines, f.Line)
		}
	}
	if len(lines) != 1 || lines[0] != 13 {
		t.Fatalf("G404 on lines %v, want only the new one on line 13", lines)
	}
}
