package goanalysistest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// Planted is a change to a standard-library-only module with one planted
// problem per class the Go specialists know, each on a line ending in
// "// want:<rule>", clean look-alikes on lines ending in "// clean", and the
// same problems on lines the change leaves alone (old.go).
type Planted struct {
	Repo   *Repo
	Change *change.Change
	// Head is the content of each file at head, by path.
	Head map[string]string
}

// plantedBase is the module before the change: problems the change does
// not touch.
var plantedBase = map[string]string{
	"go.mod": GoMod("example.com/planted"),
	"app/old.go": `package app

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
)

// Old has problems the change does not touch.
func Old(db *sql.DB, name string) {
	ctx, _ := context.WithCancel(context.Background())
	_ = ctx
	for i := 0; i < 3; i++ {
		regexp.MustCompile("x+")
	}
	q := fmt.Sprintf("SELECT id FROM users WHERE name = '%s'", name)
	rows, _ := db.Query(q)
	_ = rows
	fmt.Printf("%d\n", name)
}
`,
}

// plantedHead adds the planted problems and appends a clean function to
// old.go.
var plantedHead = map[string]string{
	"app/old.go": plantedBase["app/old.go"] + `
// Added is new and clean.
func Added() int { return 1 }
`,
	"app/logic.go": `package app

import (
	"context"
	"fmt"
	"time"
)

// Deadline returns a context that ends in d.
func Deadline(parent context.Context, d time.Duration) context.Context {
	ctx, _ := context.WithTimeout(parent, d) // want:go-vet:lostcancel
	return ctx
}

// Greet prints a greeting.
func Greet(name string) {
	fmt.Printf("hello %d\n", name) // want:go-vet:printf
	fmt.Printf("hello %s\n", name) // clean
}

// Letter returns the character of a code point.
func Letter(i int) string {
	return string(i) // want:go-vet:stringintconv
}

// Bounded cancels what it starts.
func Bounded(parent context.Context) error {
	ctx, cancel := context.WithTimeout(parent, time.Second) // clean
	defer cancel()
	<-ctx.Done()
	return ctx.Err()
}
`,
	"app/sql.go": `package app

import (
	"database/sql"
	"fmt"
)

// UserByName finds a user by name, unsafely.
func UserByName(db *sql.DB, name string) (*sql.Rows, error) {
	q := fmt.Sprintf("SELECT id FROM users WHERE name = '%s'", name) // want:quorum:sql-injection
	rows, err := db.Query(q)
	return rows, err
}

// UserByNameSafely finds a user by name with a parameterized query.
func UserByNameSafely(db *sql.DB, name string) (*sql.Rows, error) {
	return db.Query("SELECT id FROM users WHERE name = $1", name) // clean
}

// Names looks up each id on its own.
func Names(db *sql.DB, ids []int) ([]string, error) {
	var names []string
	for _, id := range ids {
		var n string
		if err := db.QueryRow("SELECT name FROM users WHERE id = $1", id).Scan(&n); err != nil { // want:quorum:queryinloop
			return nil, err
		}
		names = append(names, n)
	}
	return names, nil
}

// NamesAtOnce looks the ids up in one query.
func NamesAtOnce(db *sql.DB, ids []int) (*sql.Rows, error) {
	rows, err := db.Query("SELECT name FROM users WHERE id = ANY($1)", ids) // clean
	return rows, err
}
`,
	"app/exec.go": `package app

import (
	"context"
	"os"
	"os/exec"
)

// Run runs the command line the user gave.
func Run(ctx context.Context) ([]byte, error) {
	return exec.CommandContext(ctx, "sh", "-c", os.Args[1]).Output() // want:gosec:G702
}

// Version runs a fixed command.
func Version() ([]byte, error) {
	return exec.Command("git", "--version").Output() // clean
}
`,
	"app/tls.go": `package app

import "crypto/tls"

// Dial trusts any certificate.
func Dial(addr string) (*tls.Conn, error) {
	return tls.Dial("tcp", addr, &tls.Config{
		InsecureSkipVerify: true, // want:gosec:G402
	})
}

// SafeDial verifies certificates.
func SafeDial(addr string) (*tls.Conn, error) {
	return tls.Dial("tcp", addr, &tls.Config{
		MinVersion: tls.VersionTLS12, // clean
	})
}
`,
	"app/perf.go": `package app

import (
	"os"
	"regexp"
	"strings"
)

var digits = regexp.MustCompile(` + "`^\\d+$`" + `) // clean

// CountNumbers compiles its pattern for every line.
func CountNumbers(lines []string) int {
	n := 0
	for _, l := range lines {
		re := regexp.MustCompile(` + "`^\\d+$`" + `) // want:quorum:regexpinloop
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// CountNumbersOnce uses the compiled pattern.
func CountNumbersOnce(lines []string) int {
	n := 0
	for _, l := range lines {
		if digits.MatchString(l) { // clean
			n++
		}
	}
	return n
}

// Sizes keeps every file open until it returns.
func Sizes(paths []string) (int64, error) {
	var total int64
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return 0, err
		}
		defer f.Close() // want:quorum:deferinloop
		st, err := f.Stat()
		if err != nil {
			return 0, err
		}
		total += st.Size()
	}
	return total, nil
}

// Join concatenates in a loop.
func Join(parts []string) string {
	s := ""
	for _, p := range parts {
		s += p // want:quorum:concatinloop
	}
	return s
}

// JoinWell uses a builder.
func JoinWell(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p) // clean
	}
	return b.String()
}
`,
}

// NewPlanted builds the planted change in a new repository.
func NewPlanted(t testing.TB) *Planted {
	t.Helper()
	r := NewRepo(t)
	r.Write(plantedBase)
	base := r.Commit("base")
	r.Write(plantedHead)
	head := r.Commit("head")
	p := &Planted{Repo: r, Change: r.Change(base, head), Head: map[string]string{}}
	for path, content := range plantedBase {
		p.Head[path] = content
	}
	for path, content := range plantedHead {
		p.Head[path] = content
	}
	return p
}

// Check checks a specialist's findings on the planted change: each
// "want:<rule>" marker whose rule is in wants is found on its line, with
// category and the severity wants gives; no finding is on a "clean" line
// or on the unchanged lines of old.go; every finding is valid and of
// category.
func (p *Planted) Check(t *testing.T, fs []specialist.Finding, category string, wants map[string]string) {
	t.Helper()
	type at struct {
		path string
		line int
	}
	byAt := map[at][]specialist.Finding{}
	for _, f := range fs {
		if err := f.Validate(); err != nil {
			t.Errorf("invalid finding %+v: %v", f, err)
		}
		if f.Category != category {
			t.Errorf("finding %s at %s:%d has category %q, want %q", f.Rule, f.Path, f.Line, f.Category, category)
		}
		if f.Path == "app/old.go" && f.Line <= strings.Count(plantedBase["app/old.go"], "\n") {
			t.Errorf("finding %s on old.go:%d, a line the change did not touch", f.Rule, f.Line)
		}
		byAt[at{f.Path, f.Line}] = append(byAt[at{f.Path, f.Line}], f)
	}
	paths := slices.Sorted(maps.Keys(p.Head))
	for _, path := range paths {
		content := p.Head[path]
		for _, line := range Marked(content, "clean") {
			for _, f := range byAt[at{path, line}] {
				t.Errorf("finding %s (%s) on the clean line %s:%d", f.Rule, f.Headline, path, line)
			}
		}
		for rule, severity := range wants {
			for _, line := range Marked(content, "want:"+rule) {
				i := slices.IndexFunc(byAt[at{path, line}], func(f specialist.Finding) bool { return f.Rule == rule })
				if i < 0 {
					t.Errorf("%s not found on %s:%d; found there: %v", rule, path, line, rules(byAt[at{path, line}]))
					continue
				}
				if f := byAt[at{path, line}][i]; f.Severity != severity {
					t.Errorf("%s on %s:%d has severity %s, want %s", rule, path, line, f.Severity, severity)
				}
			}
		}
	}
	for rule := range wants {
		found := false
		for _, content := range p.Head {
			found = found || len(Marked(content, "want:"+rule)) > 0
		}
		if !found {
			t.Errorf("no line of the fixture is marked want:%s", rule)
		}
	}
}

func rules(fs []specialist.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}
