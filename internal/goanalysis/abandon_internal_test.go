package goanalysis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/change/changetest"
)

// Type checkers abandoned at their time limit are bounded: past
// maxAbandoned still running, a load does not start another, and the
// change is analysed syntax-only, saying why.
func TestAbandonedTypeCheckersAreBounded(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"go.mod": "module example.com/slow\n\ngo 1.26\n", "a.go": "package slow\n"})
	prev := r.Commit("base")
	l := NewLoader(Config{Timeout: 100 * time.Millisecond})
	release := make(chan struct{})
	defer close(release)
	var started atomic.Int32
	l.packagesLoad = func(*packages.Config, ...string) ([]*packages.Package, error) {
		started.Add(1)
		<-release
		return nil, errors.New("released")
	}
	load := func(i int) *Program {
		t.Helper()
		r.Write(map[string]string{"a.go": fmt.Sprintf("package slow\n\nfunc F%d() {}\n", i)})
		head := r.Commit(fmt.Sprint("head ", i))
		p, err := l.Load(context.Background(), r.Change(prev, head))
		if err != nil {
			t.Fatal(err)
		}
		prev = head
		return p
	}
	for i := range maxAbandoned {
		if p := load(i); !strings.Contains(p.SyntaxOnly, "longer than") {
			t.Fatalf("load %d: SyntaxOnly = %q", i, p.SyntaxOnly)
		}
	}
	p := load(maxAbandoned)
	if !strings.Contains(p.SyntaxOnly, "type checking is refused for now") || len(p.Files) != 1 {
		t.Errorf("with %d type checkers abandoned: SyntaxOnly = %q, %d files", maxAbandoned, p.SyntaxOnly, len(p.Files))
	}
	if n := started.Load(); n != maxAbandoned {
		t.Errorf("%d type checkers started, want %d", n, maxAbandoned)
	}
}
