package llm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/specialist"
)

// TestModelCannotReachOutsideTheChange plays a pull request and a model
// working together: the change adds a symlink to /etc/passwd, and the
// model's answer names paths outside the change and quotes the file the
// link points to. Nothing outside the change is read into a prompt or
// confirms a quote: every one of those findings is dropped.
func TestModelCannotReachOutsideTheChange(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("the attack needs a file outside the change to point at: %v", err)
	}
	r, _ := smallChange(t)
	base := r.Commit("base again")
	if err := os.Symlink("/etc/passwd", filepath.Join(r.Dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	head := r.commit(map[string]string{"notes.go": "package store\n\n// Notes.\nfunc Notes() string {\n\treturn \"root:x:0:0\"\n}\n"})
	c := r.Change(base, head)

	passwd := "root:x:0:0:root"
	f := newFakeAPI(t, reply{body: answer(
		quoted(finding("../../../../etc/passwd", 1, 1, "high", "security", "Traversal", nil), passwd),
		quoted(finding("/etc/passwd", 1, 1, "high", "security", "Absolute", nil), passwd),
		quoted(finding("link.go", 1, 1, "high", "security", "Through the link", nil), passwd),
		quoted(finding("notes.go", 5, 5, "high", "security", "Quote from elsewhere", nil), passwd),
	)})
	e, _, _ := newEngine(t, f, Config{MaxFindingsPerFile: 10}, specialist.Security)
	got, err := e.Review(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("kept %d findings that reach outside the change: %+v", len(got), got)
	}
	for _, req := range f.seen() {
		if strings.Contains(req.user(), passwd) {
			t.Fatal("the prompt holds the content of the file the symlink points to")
		}
	}
}

// TestWholeFunctionsOfAHugeFileAreNotParsed: a Go file past
// maxWholeFuncsSource (generated, or made to be slow to parse) is shown
// by its hunks only.
func TestWholeFunctionsOfAHugeFileAreNotParsed(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	// F is longer than a hunk's context, so only wholeFuncs would show it
	// all.
	body := "package big\n\nfunc F() int {\n\tx := 1\n" + strings.Repeat("\tx++\n", 20) + "\treturn x\n}\n\n// " + strings.Repeat("padding ", maxWholeFuncsSource/8) + "\n"
	base := r.commit(map[string]string{"big.go": body})
	head := r.commit(map[string]string{"big.go": strings.Replace(body, "x := 1", "x := 2", 1)})
	f := newFakeAPI(t, reply{body: answer()})
	e, _, _ := newEngine(t, f, Config{ContextTokens: 1 << 22}, specialist.Logic)
	if _, err := e.Review(context.Background(), r.Change(base, head)); err != nil {
		t.Fatal(err)
	}
	reqs := f.seen()
	if len(reqs) == 0 {
		t.Fatal("nothing was asked")
	}
	for _, req := range reqs {
		if strings.Contains(req.user(), "whole @@") {
			t.Fatal("a file past the bound was parsed for its whole functions")
		}
	}
}
