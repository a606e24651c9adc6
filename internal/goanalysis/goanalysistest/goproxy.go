package goanalysistest

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// Module is one version of a module a GoProxy serves.
type Module struct {
	Path, Version string
	// Files are its files by path in the module (go.mod is made when
	// absent).
	Files map[string]string
}

// GoProxy is a module proxy on loopback speaking the GOPROXY protocol as
// `go help goproxy` describes it: $module/@v/list, $module/@v/$version.info,
// .mod and .zip, and $module/@latest, with module paths and versions in
// their escaped form; 404 for what it does not serve.
type GoProxy struct {
	URL string

	mu       sync.Mutex
	requests []string
	// login and password, when set, are asked of every request (basic
	// authentication): 401 without them.
	login, password string
	// hang makes it answer nothing, until the client gives up.
	hang bool
	mods map[string]Module // by escaped path
	zips map[string][]byte // by "path@version"
}

// NewGoProxy serves mods until the test ends.
func NewGoProxy(t testing.TB, mods ...Module) *GoProxy {
	t.Helper()
	p := &GoProxy{mods: map[string]Module{}, zips: map[string][]byte{}}
	for _, m := range mods {
		if m.Files["go.mod"] == "" {
			m.Files["go.mod"] = "module " + m.Path + "\n\ngo 1.21\n"
		}
		var files []modzip.File
		for _, name := range slices.Sorted(maps.Keys(m.Files)) {
			files = append(files, zipFile{name: name, data: m.Files[name]})
		}
		var b bytes.Buffer
		if err := modzip.Create(&b, module.Version{Path: m.Path, Version: m.Version}, files); err != nil {
			t.Fatal(err)
		}
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			t.Fatal(err)
		}
		p.mods[esc+"@"+m.Version] = m
		p.zips[m.Path+"@"+m.Version] = b.Bytes()
	}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// RequireAuth makes the proxy answer 401 to a request without these
// credentials, as a private proxy does.
func (p *GoProxy) RequireAuth(login, password string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.login, p.password = login, password
}

// Hang makes the proxy answer no request until its client gives up, as
// an unreachable one does.
func (p *GoProxy) Hang() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hang = true
}

// Requests returns the paths asked so far.
func (p *GoProxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

func (p *GoProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.requests = append(p.requests, r.URL.Path)
	login, password, hang := p.login, p.password, p.hang
	p.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return
	}
	if u, pw, _ := r.BasicAuth(); login != "" && (u != login || pw != password) {
		w.Header().Set("WWW-Authenticate", `Basic realm="modules"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, "/")
	if esc, ok := strings.CutSuffix(rest, "/@latest"); ok {
		var latest string
		for k, m := range p.mods {
			if strings.HasPrefix(k, esc+"@") && m.Version > latest {
				latest = m.Version
			}
		}
		if latest == "" {
			http.NotFound(w, r)
			return
		}
		p.info(w, latest)
		return
	}
	esc, file, ok := strings.Cut(rest, "/@v/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if file == "list" {
		var vs []string
		for k, m := range p.mods {
			if strings.HasPrefix(k, esc+"@") {
				vs = append(vs, m.Version)
			}
		}
		if len(vs) == 0 {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, strings.Join(vs, "\n")+"\n")
		return
	}
	ext := file[strings.LastIndex(file, "."):]
	escVer := strings.TrimSuffix(file, ext)
	version, err := module.UnescapeVersion(escVer)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	m, ok := p.mods[esc+"@"+version]
	if !ok {
		http.Error(w, "not found: "+esc+"@"+version, http.StatusNotFound)
		return
	}
	switch ext {
	case ".info":
		p.info(w, version)
	case ".mod":
		io.WriteString(w, m.Files["go.mod"])
	case ".zip":
		w.Header().Set("Content-Type", "application/zip")
		w.Write(p.zips[m.Path+"@"+m.Version])
	default:
		http.NotFound(w, r)
	}
}

func (p *GoProxy) info(w http.ResponseWriter, version string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		Version string
		Time    time.Time
	}{version, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)})
}

// zipFile is a file of a module zip.
type zipFile struct{ name, data string }

func (f zipFile) Path() string { return f.name }
func (f zipFile) Lstat() (os.FileInfo, error) {
	return fileInfo{name: f.name, size: int64(len(f.data))}, nil
}
func (f zipFile) Open() (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(f.data)), nil
}

type fileInfo struct {
	name string
	size int64
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) Mode() os.FileMode  { return 0o644 }
func (fi fileInfo) ModTime() time.Time { return time.Time{} }
func (fi fileInfo) IsDir() bool        { return false }
func (fi fileInfo) Sys() any           { return nil }
