package membudget_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/membudget"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"4GiB": 4 << 30, "1.5GiB": 3 << 29, "512MiB": 512 << 20, "512M": 512 << 20, "2GB": 2e9,
		"64KiB": 64 << 10, "1073741824": 1 << 30, " 3 GiB ": 3 << 30, "100B": 100, "1TiB": 1 << 40,
	} {
		if got, err := membudget.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "4XB", "GiB", "0", "-1GiB", "0.1B", "NaNGiB", "Inf", "1e30TiB"} {
		if got, err := membudget.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestDefault(t *testing.T) {
	t.Parallel()
	meminfo := []byte("MemTotal:       24731648 kB\nMemFree:        11676672 kB\n")
	for _, tc := range []struct {
		name      string
		cgroupMax []byte
		want      int64
	}{
		{"cgroup limit", []byte("8589934592\n"), 6 << 30},
		{"cgroup without a limit", []byte("max\n"), 24731648 * 1024 / 4 * 3},
		{"no cgroup v2", nil, 24731648 * 1024 / 4 * 3},
	} {
		if got, err := membudget.Default(tc.cgroupMax, meminfo); err != nil || got != tc.want {
			t.Errorf("%s: Default = %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	if _, err := membudget.Default([]byte("max"), []byte("MemFree: 1 kB\n")); err == nil || !strings.Contains(err.Error(), "--review-memory") {
		t.Errorf("nothing known: err = %v, want one naming --review-memory", err)
	}
}

// TestAcquire: reservations wait for each other, and one larger than the
// budget takes the whole budget rather than waiting for ever.
func TestAcquire(t *testing.T) {
	t.Parallel()
	b := membudget.New(100)
	ctx := context.Background()
	release1, err := b.Acquire(ctx, 60, func(int64) { t.Error("the first reservation waited") })
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan int64, 1)
	got := make(chan func())
	go func() {
		release2, err := b.Acquire(ctx, 1000, func(r int64) { waited <- r })
		if err != nil {
			t.Error(err)
		}
		got <- release2
	}()
	if r := <-waited; r != 60 {
		t.Errorf("the second waited with %d reserved, want 60", r)
	}
	select {
	case <-got:
		t.Fatal("the second got its memory while the first held it")
	default:
	}
	release1()
	release1() // twice is once
	release2 := <-got
	if r := b.Reserved(); r != 100 {
		t.Errorf("reserved %d, want the whole budget (100)", r)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Acquire(cctx, 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a wait whose context ended: err = %v", err)
	}
	release2()
	if r := b.Reserved(); r != 0 {
		t.Errorf("reserved %d after every release, want 0", r)
	}
}

// TestEstimateOf counts the changed packages and the same module's packages
// they import, transitively, and tests only where a test file changed.
func TestEstimateOf(t *testing.T) {
	t.Parallel()
	r := changetest.NewRepo(t)
	files := map[string]string{
		"go.mod":       "module example.com/m\n\ngo 1.22\n",
		"a/a.go":       "package a\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/b\"\n)\n\nfunc A() { fmt.Println(b.B()) }\n",
		"a/a_test.go":  "package a\n\nimport (\n\t\"testing\"\n\t\"example.com/m/t\"\n)\n\nfunc TestA(*testing.T) { t.T() }\n",
		"b/b.go":       "package b\n\nimport \"example.com/m/c\"\n\nfunc B() int { return c.C }\n",
		"b/b_test.go":  "package b\n\n// not counted: b is not a changed package\n",
		"c/c.go":       "package c\n\nconst C = 1\n",
		"t/t.go":       "package t\n\nfunc T() {}\n",
		"d/d.go":       "package d\n\nimport \"example.com/mother\"\n\nvar _ = mother.X\n",
		"README.md":    "not Go\n",
		"other/go.mod": "module example.com/other\n",
		"other/o/o.go": "package o\n\nimport \"example.com/m/c\"\n\nvar _ = c.C\n",
	}
	r.Write(files)
	base := r.Commit("base")
	size := func(paths ...string) int64 {
		n := 0
		for _, p := range paths {
			n += len(files[p])
		}
		return int64(n)
	}
	for _, tc := range []struct {
		name     string
		change   map[string]string
		source   int64
		packages int
	}{
		{"package", map[string]string{"a/a.go": files["a/a.go"] + "\nfunc A2() {}\n"}, size("b/b.go", "c/c.go") + int64(len(files["a/a.go"])+len("\nfunc A2() {}\n")), 3},
		{"test", map[string]string{"a/a_test.go": files["a/a_test.go"] + "\n"}, size("a/a.go", "b/b.go", "c/c.go", "t/t.go", "a/a_test.go") + 1, 4},
		// example.com/mother is not in example.com/m; other/ is a module
		// of its own, and c is not in it.
		{"prefix and nested module", map[string]string{"d/d.go": files["d/d.go"] + "\n", "other/o/o.go": files["other/o/o.go"] + "\n"}, size("d/d.go", "other/o/o.go") + 2, 2},
		{"no Go", map[string]string{"README.md": "still not Go\n"}, 0, 0},
	} {
		r.Git("checkout", "-q", "-B", "x", base)
		head := r.Apply(tc.change)
		e, err := membudget.EstimateOf(context.Background(), r.Change(base, head))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if e.SourceBytes != tc.source || e.Packages != tc.packages || e.Bytes != membudget.Base+membudget.PerSourceByte*tc.source {
			t.Errorf("%s: %+v, want %d bytes of source in %d packages", tc.name, e, tc.source, tc.packages)
		}
	}
}
