package security_test

import (
	"context"
	"slices"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/security"
)

// realistic holds, per file, code as it is written in real programs for
// the gosec rules the specialist keeps; each line marked "want:<rule>"
// must get that finding, each "clean" line none of them.
var realistic = map[string]string{
	"server/server.go": `package server

import (
	"net/http"
	"time"
)

// App serves the API.
type App struct {
	srv *http.Server
}

// Run serves h on addr with a server literal.
func Run(addr string, h http.Handler) error {
	srv := http.Server{Addr: addr, Handler: h} // want:gosec:G112
	return srv.ListenAndServe()
}

// Start keeps its server in a field.
func (a *App) Start(addr string, h http.Handler) error {
	a.srv = &http.Server{ // want:gosec:G112
		Addr:    addr,
		Handler: h,
	}
	return a.srv.ListenAndServe()
}

// Serve uses the package-level helper.
func Serve(addr string, h http.Handler) error {
	return http.ListenAndServe(addr, h) // want:gosec:G114
}

// Bounded sets the header timeout.
func Bounded(addr string, h http.Handler) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second} // clean
	return srv.ListenAndServe()
}
`,
	"archive/unzip.go": `package archive

import (
	"archive/tar"
	"archive/zip"
	"io"
	"os"
	"path/filepath"
)

// Unzip extracts src into dest.
func Unzip(src, dest string) error {
	r, err := zip.OpenReader(src)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, f := range r.File {
		path := filepath.Join(dest, f.Name) // want:quorum:path-traversal
		if f.FileInfo().IsDir() {
			os.MkdirAll(path, 0o755)
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		out, err := os.Create(path)
		if err != nil {
			rc.Close()
			return err
		}
		_, err = io.Copy(out, rc)
		out.Close()
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Untar extracts a tar stream into dest.
func Untar(r io.Reader, dest string) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dest, hdr.Name) // want:quorum:path-traversal
		f, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			f.Close()
			return err
		}
		f.Close()
	}
}
`,
	"auth/hash.go": `package auth

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
)

// HashPassword hashes a user's password for storage.
func HashPassword(password string) string {
	sum := md5.Sum([]byte(password)) // want:quorum:weak-hash
	return hex.EncodeToString(sum[:])
}

// Digest is stored as the user's credential: SHA-1 passed as a value,
// which gosec's G401 does not see.
func Digest(username, password string) string {
	mac := hmac.New(sha1.New, []byte(username+password)) // want:quorum:weak-hash
	mac.Write([]byte(username))
	return hex.EncodeToString(mac.Sum(nil))
}

// ServeFile sets an ETag from the file's content: a checksum.
func ServeFile(w http.ResponseWriter, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := md5.New() // clean
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	w.Header().Set("ETag", fmt.Sprintf("%q", hex.EncodeToString(h.Sum(nil))))
	return nil
}

// Webhook signs a payload with the shared secret (HMAC-SHA1, as
// GitHub's X-Hub-Signature): a sound MAC.
func Webhook(secret, payload []byte) string {
	mac := hmac.New(sha1.New, secret) // clean
	mac.Write(payload)
	return "sha1=" + hex.EncodeToString(mac.Sum(nil))
}

// ContentID derives an attachment's Content-ID from its name
// (knadh/listmonk): a weak hash is fine here.
func ContentID(name string) string {
	sum := sha1.Sum([]byte(name)) // clean
	return hex.EncodeToString(sum[:8]) + "@email"
}
`,
	"auth/token.go": `package auth

import (
	"encoding/hex"
	"math/rand"
	randv2 "math/rand/v2"
)

const letters = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewToken returns a session token.
func NewToken() string {
	b := make([]byte, 32)
	for i := range b {
		b[i] = letters[rand.Intn(len(letters))] // want:gosec:G404
	}
	return string(b)
}

// NewKey returns an API key.
func NewKey() string {
	b := make([]byte, 16)
	rand.Read(b) // want:gosec:G404
	return hex.EncodeToString(b)
}

// NewID returns a request id.
func NewID() uint64 {
	return randv2.Uint64() // want:gosec:G404
}
`,
}

func TestReviewRealisticRules(t *testing.T) {
	t.Parallel()
	repo := goanalysistest.NewRepo(t)
	repo.Write(map[string]string{"go.mod": goanalysistest.GoMod("example.com/realistic"), "doc.go": "// Package realistic is an application.\npackage realistic\n"})
	base := repo.Commit("base")
	repo.Write(realistic)
	head := repo.Commit("head")

	fs, err := security.New(goanalysistest.Loader(), nil).Review(context.Background(), repo.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	type at struct {
		path string
		line int
	}
	found := map[at][]string{}
	severity := map[string]string{
		"gosec:G112": specialist.SeverityMedium, "gosec:G114": specialist.SeverityMedium,
		"quorum:path-traversal": specialist.SeverityHigh, "gosec:G404": specialist.SeverityMedium, "quorum:weak-hash": specialist.SeverityHigh,
	}
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s", f.Path, f.Line, f.Rule, f.Severity, f.Headline)
		found[at{f.Path, f.Line}] = append(found[at{f.Path, f.Line}], f.Rule)
		if want, ok := severity[f.Rule]; ok && f.Severity != want {
			t.Errorf("%s at %s:%d has severity %s, want %s", f.Rule, f.Path, f.Line, f.Severity, want)
		}
		if f.Category != specialist.CategorySecurity {
			t.Errorf("%s has category %s", f.Rule, f.Category)
		}
	}
	for path, content := range realistic {
		for rule := range severity {
			for _, line := range goanalysistest.Marked(content, "want:"+rule) {
				if !slices.Contains(found[at{path, line}], rule) {
					t.Errorf("%s:%d: %s not found; found %v", path, line, rule, found[at{path, line}])
				}
			}
		}
		for _, line := range goanalysistest.Marked(content, "clean") {
			if got := found[at{path, line}]; len(got) > 0 {
				t.Errorf("%s:%d is clean, found %v", path, line, got)
			}
		}
	}
}
