package logic_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/logic"
)

func TestReviewPlanted(t *testing.T) {
	t.Parallel()
	p := goanalysistest.NewPlanted(t)
	l := logic.New(goanalysistest.Loader())
	if l.Name() != specialist.Logic {
		t.Fatalf("Name() = %q", l.Name())
	}
	fs, err := l.Review(context.Background(), p.Change)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s %q", f.Path, f.Line, f.Rule, f.Severity, f.Headline, f.Note)
	}
	p.Check(t, fs, specialist.CategoryLogic, map[string]string{
		"go-vet:lostcancel":    specialist.SeverityHigh,
		"go-vet:printf":        specialist.SeverityMedium,
		"go-vet:stringintconv": specialist.SeverityMedium,
	})

	t.Run("suggested patch applies", func(t *testing.T) {
		t.Parallel()
		var patch string
		for _, f := range fs {
			if f.Rule == "go-vet:stringintconv" {
				patch = f.SuggestedPatch
			}
		}
		if !strings.Contains(patch, "-\treturn string(i) // want:go-vet:stringintconv\n+\treturn ") {
			t.Fatalf("stringintconv patch:\n%s", patch)
		}
		if out, err := p.Repo.GitInput(patch, "apply", "--check", "-"); err != nil {
			t.Fatalf("git apply --check: %v\n%s\n%s", err, out, patch)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		t.Parallel()
		again, err := l.Review(context.Background(), p.Change)
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != len(fs) {
			t.Fatalf("second review found %d findings, first %d", len(again), len(fs))
		}
		for i := range fs {
			if again[i] != fs[i] {
				t.Errorf("finding %d differs: %+v vs %+v", i, again[i], fs[i])
			}
		}
	})
}

// What a change introduces is reported, also where it deleted the line
// that mattered (the analyzer then speaks on an unchanged line), with the
// deleted line named; what was already there at base is not.
func TestReviewDifferential(t *testing.T) {
	t.Parallel()
	src := `package svc

import (
	"context"
	"time"
)

func Wait(ctx context.Context, d time.Duration, quick bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if quick {
		cancel()
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func Old(ctx context.Context) {
	ctx, _ = context.WithCancel(ctx)
	_ = ctx
}

func Parse(s string) (n int, err error) {
	n, err = atoi(s)
	if err != nil {
		return 0, err
	}
	err = check(n)
	return n, err
}

func check(int) error { return nil }

func atoi(s string) (int, error) { return len(s), nil }
`
	head := strings.Replace(src, "\tdefer cancel()\n", "", 1)
	head = strings.Replace(head, "\t_ = ctx\n}", "\t_ = ctx // touched\n}", 1)
	head = strings.Replace(head, "\tif err != nil {\n\t\treturn 0, err\n\t}\n", "", 1)
	fs := reviewChange(t, "example.com/diff", map[string]string{"svc.go": src}, map[string]string{"svc.go": head})
	got := map[string]specialist.Finding{}
	for _, f := range fs {
		t.Logf("%s:%d %s %q cause %q", f.Path, f.Line, f.Rule, f.Headline, f.Cause)
		got[fmt.Sprintf("%s:%d", f.Rule, f.Line)] = f
	}
	lc, ok := got["go-vet:lostcancel:9"]
	if !ok || lc.Line != 9 || !strings.Contains(lc.Cause, "`defer cancel()`") || !strings.Contains(lc.Body, "defer cancel()") {
		t.Errorf("lostcancel = %+v, want it on line 9 caused by the deleted `defer cancel()`", lc)
	}
	if _, ok := got["go-vet:lostcancel:15"]; ok {
		t.Errorf("lostcancel reported the one leak twice (also at the return on line 15)")
	}
	if f, ok := got["staticcheck:SA4006:24"]; !ok || f.Line != 24 || !strings.Contains(f.Cause, "if err != nil") {
		t.Errorf("SA4006 = %+v, want the unused err on line 20 caused by the deleted check", f)
	}
	for _, f := range fs {
		if f.Line >= 18 && f.Line <= 21 {
			t.Errorf("reported what the base had already: %s:%d %s", f.Path, f.Line, f.Rule)
		}
	}
}

// A deleted unlock or close is reported on the lock or the open the
// release analyzer names, with the deleted line as its cause.
func TestReviewDeletedRelease(t *testing.T) {
	t.Parallel()
	src := `package svc

import (
	"io"
	"os"
	"sync"
)

type Cache struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *Cache) Get(k string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func Read(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
`
	head := src
	head = strings.Replace(head, "\tdefer c.mu.Unlock()\n", "", 1)
	head = strings.Replace(head, "\tdefer f.Close()\n", "", 1)
	fs := reviewChange(t, "example.com/rel", map[string]string{"svc.go": src}, map[string]string{"svc.go": head})
	got := map[int]specialist.Finding{}
	for _, f := range fs {
		t.Logf("%s:%d %s %q cause %q", f.Path, f.Line, f.Rule, f.Headline, f.Cause)
		if f.Rule == "quorum:release" {
			got[f.Line] = f
		}
	}
	if f, ok := got[15]; !ok || !strings.Contains(f.Cause, "defer c.mu.Unlock()") || f.Severity != specialist.SeverityHigh {
		t.Errorf("lock finding = %+v, want line 15 caused by the deleted unlock", f)
	}
	if f, ok := got[20]; !ok || !strings.Contains(f.Cause, "defer f.Close()") {
		t.Errorf("close finding = %+v, want line 20 caused by the deleted close", f)
	}
}

// A release deleted from one error path while the other paths keep
// theirs is reported on that path's return, with the deleted line as the
// cause: an Unlock (nats-server's isConsumerHealthy) and a cleanup
// (go-sql-driver/mysql's Connect, whose other returns read
// `return nil, err` too, word for word). The returns that never had the
// cleanup are not reported.
func TestReviewReleaseDeletedOnErrorPath(t *testing.T) {
	t.Parallel()
	src := `package conn

import (
	"errors"
	"sync"
)

type Conn struct{ n int }

func (c *Conn) cleanup()         {}
func (c *Conn) watch() error     { return nil }
func (c *Conn) handshake() error { return nil }
func (c *Conn) auth() error      { return nil }

func validate(n int) error { return nil }

// Connect connects.
func Connect(n int) (*Conn, error) {
	c := &Conn{n: n}
	if err := validate(n); err != nil {
		return nil, err
	}
	c.n++
	c.n *= 2
	c.n--
	c.n /= 2
	if err := c.watch(); err != nil {
		c.cleanup()
		return nil, err
	}
	if err := c.handshake(); err != nil {
		c.cleanup()
		return nil, err
	}
	if err := c.auth(); err != nil {
		c.cleanup()
		return nil, err
	}
	return c, nil
}

type Registry struct {
	mu    sync.RWMutex
	conns map[string]*Conn
}

// Healthy reports whether name is healthy.
func (r *Registry) Healthy(name string) error {
	r.mu.RLock()
	c := r.conns[name]
	if c == nil {
		r.mu.RUnlock()
		return errors.New("missing")
	}
	r.mu.RUnlock()
	return nil
}
`
	head := strings.Replace(src, "\tif err := c.watch(); err != nil {\n\t\tc.cleanup()\n", "\tif err := c.watch(); err != nil {\n", 1)
	head = strings.Replace(head, "\tif c == nil {\n\t\tr.mu.RUnlock()\n", "\tif c == nil {\n", 1)
	fs := reviewChange(t, "example.com/conn", map[string]string{"conn.go": src}, map[string]string{"conn.go": head})
	var got []string
	for _, f := range fs {
		if f.Rule == "quorum:release" {
			got = append(got, fmt.Sprintf("%d %s", f.Line, f.Cause))
		}
	}
	want := []string{
		"28 the change deleted line 28 `c.cleanup()` of the base in this function",
		"51 the change deleted line 52 `r.mu.RUnlock()` of the base in this function",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("release findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A type error the change makes in a package that type-checked at base is
// a finding; one in a package that did not type-check at base either (a
// build tag, a dependency the review cannot reach) is not: the review's
// environment is the likelier cause.
func TestReviewTypeErrors(t *testing.T) {
	t.Parallel()
	fs := reviewChange(t, "example.com/te", map[string]string{
		"ok/ok.go":   "package ok\n\nfunc N() int { return 1 }\n",
		"env/env.go": "package env\n\nimport \"example.com/unreachable/x\"\n\nvar _ = x.Y\n\nfunc N() int { return 1 }\n",
	}, map[string]string{
		"ok/ok.go":   "package ok\n\nfunc N() int { return \"one\" }\n",
		"env/env.go": "package env\n\nimport \"example.com/unreachable/x\"\n\nvar _ = x.Y\n\nfunc N() int { return \"one\" }\n",
	})
	var got []string
	for _, f := range fs {
		if f.Rule == "go:typecheck" {
			got = append(got, fmt.Sprintf("%s:%d", f.Path, f.Line))
		}
	}
	if len(got) != 1 || got[0] != "ok/ok.go:3" {
		t.Fatalf("type-check findings %v, want only ok/ok.go:3", got)
	}
}

// A deleted error check is reported on the bare call left behind; a bare
// call the change adds without deleting a check is not (some repositories
// drop their own errors on purpose).
func TestReviewDeletedErrorCheck(t *testing.T) {
	t.Parallel()
	src := `package acc

import "log"

type Account struct{}

// AddMappings adds mappings.
func (a *Account) AddMappings(sub string) error { return nil }

// Update updates the account.
func Update(a *Account, sub string) {
	if err := a.AddMappings(sub); err != nil {
		log.Printf("mappings: %v", err)
	}
}

// Other does more.
func Other(a *Account) {
	log.Print("other")
}
`
	head := src
	head = strings.Replace(head, "\tif err := a.AddMappings(sub); err != nil {\n\t\tlog.Printf(\"mappings: %v\", err)\n\t}\n", "\ta.AddMappings(sub)\n", 1)
	head = strings.Replace(head, "\tlog.Print(\"other\")\n", "\tlog.Print(\"other\")\n\ta.AddMappings(\"x\")\n", 1)
	fs := reviewChange(t, "example.com/acc", map[string]string{"acc.go": src}, map[string]string{"acc.go": head})
	var lines []int
	for _, f := range fs {
		if f.Rule == "quorum:dropped-error" {
			lines = append(lines, f.Line)
		}
	}
	if len(lines) != 1 || lines[0] != 12 {
		t.Fatalf("dropped-error findings on lines %v, want only the deleted check's call on line 12", lines)
	}
}

// reviewChange commits base (with a go.mod for module) and then head in a
// real repository, and returns the logic specialist's review of the change.
func reviewChange(t *testing.T, module string, base, head map[string]string) []specialist.Finding {
	t.Helper()
	r := goanalysistest.NewRepo(t)
	base["go.mod"] = goanalysistest.GoMod(module)
	r.Write(base)
	b := r.Commit("base")
	r.Write(head)
	h := r.Commit("head")
	fs, err := logic.New(goanalysistest.Loader()).Review(context.Background(), r.Change(b, h))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// A package whose own code is sound but imports what the review cannot
// reach (a dependency neither vendored nor in the module cache; echo's
// gommon in GOPATH days) is type-checked in part: the analyzers that do
// not need complete types still report on it (a copied lock, here), and
// the review says the package was only partly analysed. A package with a
// type error of its own gets no such run.
func TestReviewPartlyTypedPackage(t *testing.T) {
	t.Parallel()
	src := `package mw

import (
	"sync"

	"example.com/unreachable/color"
	jwt "example.com/unreachable/jwt-go"
)

// Config configures the logger.
type Config struct {
	Colorer *color.Color
	Claims  jwt.Claims
	pool    *sync.Pool
}

// New returns a logger.
func New(config Config) func() {
	config.pool = &sync.Pool{}
	return func() { _ = config.Colorer }
}
`
	head := strings.Replace(src, "\tpool    *sync.Pool\n", "\tpool    sync.Pool\n", 1)
	head = strings.Replace(head, "\tconfig.pool = &sync.Pool{}\n", "\tconfig.pool = sync.Pool{}\n", 1)
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/mw"), "mw.go": src})
	b := r.Commit("base")
	r.Write(map[string]string{"mw.go": head})
	h := r.Commit("head")
	var mu sync.Mutex
	var gaps []string
	ctx := specialist.WithCoverage(context.Background(), func(c specialist.Coverage) {
		mu.Lock()
		defer mu.Unlock()
		if !c.Analysed {
			gaps = append(gaps, c.Path+": "+c.Reason)
		}
	})
	fs, err := logic.New(goanalysistest.Loader()).Review(ctx, r.Change(b, h))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%d %s %s", f.Line, f.Rule, f.Note))
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "18 go-vet:copylocks partly typed:") {
		t.Fatalf("findings %q, want the copied lock on line 18, noted as partly typed", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gaps) != 1 || !strings.HasPrefix(gaps[0], "mw.go: its package was type-checked only in part") {
		t.Fatalf("coverage gaps %q, want mw.go type-checked only in part", gaps)
	}
}

// A line rewritten that keeps using a deprecated identifier the file used
// at base is no new use (gin d75fcd4's CloseNotify); a file that starts
// using one is.
func TestReviewDeprecatedOnlyWhereNew(t *testing.T) {
	t.Parallel()
	old := "package rd\n\nimport \"strings\"\n\n// Head titles s.\nfunc Head(s string) string {\n\treturn strings.Title(s)\n}\n"
	fs := reviewChange(t, "example.com/rd", map[string]string{"a.go": old, "b.go": "package rd\n"}, map[string]string{
		"a.go": strings.Replace(old, "\treturn strings.Title(s)\n", "\tt := strings.Title(strings.TrimSpace(s))\n\treturn t\n", 1),
		"b.go": "package rd\n\nimport \"strings\"\n\n// Name titles n.\nfunc Name(n string) string {\n\treturn strings.Title(n)\n}\n",
	})
	var got []string
	for _, f := range fs {
		if f.Rule == "staticcheck:SA1019" {
			got = append(got, fmt.Sprintf("%s:%d", f.Path, f.Line))
		}
	}
	if strings.Join(got, " ") != "b.go:7" {
		t.Fatalf("SA1019 findings %v, want only b.go's new use on line 7", got)
	}
}
