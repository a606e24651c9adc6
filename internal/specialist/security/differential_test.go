package security_test

import (
	"context"
	"fmt"
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

// A change that deletes the path check in the caller makes the unchanged
// function that joins the archive entry's name into the path it writes
// unsafe: the finding is on that join, and its cause names the caller's
// deleted lines (mholt/archiver's CheckPath, deleted). At base nothing
// is reported.
func TestReviewPathCheckDeletedInCaller(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	src := `package extract

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Next extracts the next entry of tr under dest.
func Next(tr *tar.Reader, dest string) error {
	hdr, err := tr.Next()
	if err != nil {
		return err
	}
	if err := checkPath(dest, hdr.Name); err != nil {
		return fmt.Errorf("checking path traversal attempt: %w", err)
	}
	return write(tr, dest, hdr)
}

func write(r io.Reader, dest string, hdr *tar.Header) error {
	to := filepath.Join(dest, hdr.Name)
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = io.Copy(out, r)
	return err
}

func checkPath(to, name string) error {
	dest := filepath.Join(to, name)
	if !strings.HasPrefix(dest, filepath.Clean(to)+string(os.PathSeparator)) {
		return fmt.Errorf("illegal file path: %s", name)
	}
	return nil
}
`
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/extract"), "extract.go": src})
	base := r.Commit("base")
	r.Write(map[string]string{"extract.go": strings.Replace(src, `	if err := checkPath(dest, hdr.Name); err != nil {
		return fmt.Errorf("checking path traversal attempt: %w", err)
	}
`, "", 1)})
	head := r.Commit("head")
	sec := security.New(goanalysistest.Loader(), nil)
	fs, err := sec.Review(context.Background(), r.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		if f.Rule == "quorum:path-traversal" {
			got = append(got, fmt.Sprintf("%d %s", f.Line, f.Cause))
		}
	}
	want := "22 the change deleted line 18 `if err := checkPath(dest, hdr.Name); err != nil {`, line 19 `return fmt.Errorf(\"checking path traversal attempt: %w\", err)`, line 20 `}` of the base in Next (which leads here)"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("path traversal findings %q, want [%q]", got, want)
	}
	// Reviewed the other way, the change adds the check: nothing.
	if fs, err = sec.Review(context.Background(), r.Change(head, base)); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Rule == "quorum:path-traversal" {
			t.Fatalf("adding the check reported %+v", f)
		}
	}
}

// In a package type-checked only in part (an import the review cannot
// reach), gosec's rules that need no SSA still run: a server started with
// http.ListenAndServe is reported (go-shiori/shiori 12c118f4, reverted).
func TestReviewPartlyTypedPackageGetsGosecRules(t *testing.T) {
	t.Parallel()
	src := `package serve

import (
	"net/http"
	"time"

	"example.com/unreachable/router"
)

// Run serves.
func Run(addr string) error {
	svr := &http.Server{Addr: addr, Handler: router.New(), ReadHeaderTimeout: 10 * time.Second}
	return svr.ListenAndServe()
}
`
	head := strings.Replace(src, "\tsvr := &http.Server{Addr: addr, Handler: router.New(), ReadHeaderTimeout: 10 * time.Second}\n\treturn svr.ListenAndServe()\n",
		"\t_ = time.Second\n\treturn http.ListenAndServe(addr, router.New())\n", 1)
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/serve"), "serve.go": src})
	base := r.Commit("base")
	r.Write(map[string]string{"serve.go": head})
	fs, err := security.New(goanalysistest.Loader(), nil).Review(context.Background(), r.Change(base, r.Commit("head")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Rule))
	}
	if len(got) != 1 || got[0] != "serve.go:13 gosec:G114" {
		t.Fatalf("findings %v, want serve.go:13 gosec:G114", got)
	}
}
