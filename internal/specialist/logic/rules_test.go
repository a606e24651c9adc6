package logic_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/logic"
)

// realistic is code with the bugs go vet's nilness and copylocks and
// staticcheck's SA5001 know, written as real programs write them; each
// line marked "want:<rule>" must get that finding, each "clean" line none.
const realistic = `package store

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"sync"
)

// User is an account.
type User struct{ Name string }

// Users looks users up.
type Users struct {
	mu    sync.Mutex
	byID  map[string]*User
	count int
}

// Get logs a miss with the very value it found missing.
func (u *Users) Get(id string) *User {
	u.mu.Lock()
	defer u.mu.Unlock()
	user := u.byID[id]
	if user == nil {
		log.Printf("no user %s (%s)", id, user.Name) // want:go-vet:nilness
		return nil
	}
	return user
}

// Len locks a copy of the mutex.
func (u Users) Len() int { // want:go-vet:copylocks
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.byID)
}

// Snapshot copies the whole struct, lock and all.
func (u *Users) Snapshot() Users {
	u.mu.Lock()
	defer u.mu.Unlock()
	return *u // want:go-vet:copylocks
}

// Load reads users from a file, closing it before knowing it opened.
func Load(path string) (map[string]*User, error) {
	f, err := os.Open(path)
	defer f.Close() // want:staticcheck:SA5001
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	var out map[string]*User
	return out, json.NewDecoder(f).Decode(&out)
}

// Pair splits "key value" (pressly/goose 0580e2f's off-by-one guard).
func Pair(fields []string) (string, string) {
	if len(fields) < 1 {
		return "", ""
	}
	return fields[0], fields[1] // want:quorum:len-guard
}

// PairWell checks for both.
func PairWell(fields []string) (string, string) {
	if len(fields) < 2 {
		return "", ""
	}
	return fields[0], fields[1] // clean
}

// LoadWell closes after the check.
func LoadWell(path string) (map[string]*User, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close() // clean
	var out map[string]*User
	return out, json.NewDecoder(f).Decode(&out)
}
`

func TestReviewRealisticRules(t *testing.T) {
	t.Parallel()
	repo := goanalysistest.NewRepo(t)
	repo.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/realistic"), "store/doc.go": "// Package store keeps users.\npackage store\n"})
	base := repo.Commit("base")
	repo.Write(map[string]string{"store/store.go": realistic})
	head := repo.Commit("head")

	fs, err := logic.New(goanalysistest.Loader()).Review(context.Background(), repo.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	severity := map[string]string{
		"go-vet:nilness": specialist.SeverityHigh, "go-vet:copylocks": specialist.SeverityHigh,
		"staticcheck:SA5001": specialist.SeverityHigh, "quorum:len-guard": specialist.SeverityHigh,
	}
	found := map[int][]string{}
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s", f.Path, f.Line, f.Rule, f.Severity, f.Headline)
		found[f.Line] = append(found[f.Line], f.Rule)
		if want, ok := severity[f.Rule]; ok && f.Severity != want {
			t.Errorf("%s on line %d has severity %s, want %s", f.Rule, f.Line, f.Severity, want)
		}
	}
	for rule := range severity {
		for _, line := range goanalysistest.Marked(realistic, "want:"+rule) {
			if !slices.Contains(found[line], rule) {
				t.Errorf("line %d: %s not found; found %v", line, rule, found[line])
			}
		}
	}
	for _, line := range goanalysistest.Marked(realistic, "clean") {
		if len(found[line]) > 0 {
			t.Errorf("clean line %d has %v", line, found[line])
		}
	}
}

// One change of a type breaks every use alike: the type errors it causes
// are one finding, outside the tests when one is, naming the others
// (go-mssqldb 7bb1ded9's new Message type gave three).
func TestOneTypeErrorShape(t *testing.T) {
	t.Parallel()
	src := `package msg

// Message is a message.
type Message string

// Info carries a message.
type Info struct{ Message string }

// Error is an error.
type Error struct{ Text string }

// New makes an Error.
func New(info Info) Error { return Error{Text: info.Message} }
`
	test := `package msg

import "testing"

func TestNew(t *testing.T) {
	_ = Error{Text: "a"}
	_ = Error{Text: "b"}
}
`
	head := strings.Replace(src, "type Info struct{ Message string }", "type Info struct{ Message Message }", 1)
	head = strings.Replace(head, "func New(info Info) Error { return Error{Text: info.Message} }", "func New(in Info) Error { return Error{Text: in.Message} }", 1)
	headTest := strings.Replace(strings.Replace(test, `Error{Text: "a"}`, `Error{Text: Message("a")}`, 1), `Error{Text: "b"}`, `Error{Text: Message("b")}`, 1)
	fs := reviewChange(t, "example.com/msg", map[string]string{"msg.go": src, "msg_test.go": test},
		map[string]string{"msg.go": head, "msg_test.go": headTest})
	var got []string
	for _, f := range fs {
		if f.Rule == "go:typecheck" {
			got = append(got, fmt.Sprintf("%s:%d", f.Path, f.Line))
			if !strings.Contains(f.Body, "The same error at msg_test.go:6, msg_test.go:7.") {
				t.Errorf("body %q does not name the repeats", f.Body)
			}
		}
	}
	if len(got) != 1 || got[0] != "msg.go:13" {
		t.Fatalf("type-check findings %v, want one at msg.go:13", got)
	}
}
