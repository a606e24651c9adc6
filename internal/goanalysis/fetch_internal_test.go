package goanalysis

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// The go command's requests are forwarded only when their path is one of
// the protocols': a '?' or '#' it decoded would otherwise reach the
// operator's proxy as a query or a fragment of the go command's making.
func TestProxyForwardsOnlyProtocolPaths(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RequestURI())
		mu.Unlock()
		w.Write([]byte("v1.0.0\n"))
	}))
	defer upstream.Close()
	f, err := newFetcher(Config{GoProxy: upstream.URL})
	if err != nil {
		t.Fatal(err)
	}
	s := &fetchSession{f: f, prefix: "/p/", missing: map[string]unavailable{}}
	for _, c := range []struct {
		path string
		want int
	}{
		{"/p/corp.example/lib/@v/list", http.StatusOK},
		{"/p/github.com/!azure/go-x/@v/v1.2.3+incompatible.info", http.StatusOK},
		{"/p/corp.example/lib/@v/list%3Ftoken=x", http.StatusNotFound},
		{"/p/corp.example/lib%23frag/@v/list", http.StatusNotFound},
		{"/p/corp.example/lib%20x/@v/list", http.StatusNotFound},
		{"/p/corp.example/../admin", http.StatusNotFound},
	} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, c.path, nil))
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.path, w.Code, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/corp.example/lib/@v/list", "/github.com/!azure/go-x/@v/v1.2.3+incompatible.info"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("the upstream was asked %q, want %q", got, want)
	}
}

// The netrc's credentials go to the hosts it names, and only to them: its
// default entry, which the go command ignores too, would send the
// operator's login to every proxy of the list and to sum.golang.org.
func TestProxySendsCredentialsOnlyToTheirHost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	auth := map[string]string{}
	serve := func(name string, status int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, _ := r.BasicAuth()
			mu.Lock()
			auth[name] = u + ":" + p
			mu.Unlock()
			w.WriteHeader(status)
		}))
	}
	named, other := serve("named", http.StatusNotFound), serve("other", http.StatusOK)
	defer named.Close()
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	netrc := filepath.Join(t.TempDir(), "netrc")
	if err := os.WriteFile(netrc, []byte("machine 127.0.0.1 login corp password corpsecret\ndefault login dflt password DEFAULTSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := newFetcher(Config{GoProxy: named.URL + "," + otherURL, Netrc: netrc})
	if err != nil {
		t.Fatal(err)
	}
	s := &fetchSession{f: f, prefix: "/p/", missing: map[string]unavailable{}}
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/p/example.com/m/@v/v1.0.0.info", nil))
	mu.Lock()
	defer mu.Unlock()
	if auth["named"] != "corp:corpsecret" {
		t.Errorf("the host the netrc names got %q", auth["named"])
	}
	if auth["other"] != ":" {
		t.Errorf("a host the netrc does not name got %q", auth["other"])
	}
}

// Why a proxy could not be reached names its host, not its URL: the
// operator's URL may carry a token, and the reason is in the review.
func TestProxyUnreachableNamesTheHostOnly(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	f, err := newFetcher(Config{GoProxy: down.URL + "/tok3n-s3cret/goproxy"})
	if err != nil {
		t.Fatal(err)
	}
	s := &fetchSession{f: f, prefix: "/p/", missing: map[string]unavailable{}}
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/p/example.com/m/@v/v1.0.0.zip", nil))
	why := s.missing["example.com/m@v1.0.0"].why
	if !strings.Contains(why, "could not be reached") || strings.Contains(why, "tok3n") {
		t.Errorf("the reason is %q", why)
	}
}

// A prune that found the cache held by a review is tried again when the
// next review ends, not a minute later: with reviews overlapping, a busy
// service would otherwise seldom get to prune.
func TestPruneBusyCacheIsTriedAgain(t *testing.T) {
	t.Parallel()
	modCache := t.TempDir()
	l := NewLoader(Config{GoProxy: "http://127.0.0.1:9", ModCache: modCache, ModCacheMaxBytes: 1, CacheDir: t.TempDir()})
	if _, _, err := l.environment(); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(modCache, modCacheLock), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	l.pruneModCache()
	l.pruning.Wait()
	if last := l.fetcher.lastPrune.Load(); last != 0 {
		t.Errorf("a prune that could not lock the cache counts as done (last prune %d): the next review will not try", last)
	}
}
