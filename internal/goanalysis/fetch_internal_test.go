package goanalysis

import (
	"net/http"
	"net/http/httptest"
	"sync"
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
