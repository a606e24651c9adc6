package api

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/storetest"
)

// Headers above MaxHeaderBytes are a 431 problem document; what Go's
// server refuses before the API sees it (headers past its own limit, a
// NUL in a header) is the plain text the documentation says it is.
func TestOversizedAndMalformedHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.SQLite)
	srv := &http.Server{Handler: b.srv, MaxHeaderBytes: ServerMaxHeaderBytes}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()
	secret := b.reader(t)

	get := func(pad int) (*http.Request, response) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+listPath(b.repo, ""), nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("X-Pad", strings.Repeat("p", pad))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return req, response{status: res.StatusCode, header: res.Header, body: body}
	}

	req, r := get(MaxHeaderBytes - 1024)
	r.want(t, http.StatusOK)

	req, r = get(MaxHeaderBytes)
	r.want(t, http.StatusRequestHeaderFieldsTooLarge).problem(t, codeHeadersTooLarge)
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	route, err := s.componentRoute(http.StatusRequestHeaderFieldsTooLarge, "HeadersTooLarge")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conform(req, r, route); err != nil {
		t.Errorf("431 does not conform to the HeadersTooLarge response: %v", err)
	}

	// Past the server's own limit: Go's plain-text 431, as documented.
	_, r = get(ServerMaxHeaderBytes + 8192)
	if r.status != http.StatusRequestHeaderFieldsTooLarge || strings.Contains(r.header.Get("Content-Type"), "json") {
		t.Errorf("headers past the server's limit: %d %q, want Go's plain 431", r.status, r.header.Get("Content-Type"))
	}

	// A NUL in a header value: refused by Go's server with a plain 400.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /v1/reviews?owner=acme&repo=widgets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+secret+"\r\nX-Evil: a\x00b\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || strings.Contains(res.Header.Get("Content-Type"), "json") {
		t.Errorf("NUL in a header: %d %q, want Go's plain 400", res.StatusCode, res.Header.Get("Content-Type"))
	}
}
