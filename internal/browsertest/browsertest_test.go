package browsertest

import (
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// formPage is a form whose button writes the field's value into #out, by a
// script the page loads from its own origin, so it runs under
// script-src 'self'.
const formPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>browsertest</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<script src="/app.js" defer></script></head>
<body>
<h1 id="title">Reviews — ready</h1>
<a id="home" href="/" data-kind="link">Home</a>
<input id="name" name="name">
<input name="unnamed-id">
<button id="go" type="button">Go</button>
<p id="out"></p>
</body></html>`

const script = `document.getElementById("go").addEventListener("click", () => {
	document.getElementById("out").textContent = "hello " + document.getElementById("name").value;
});`

// inline is a page with an inline script, which script-src 'self' refuses.
const inline = `<!doctype html><html><head><title>inline</title></head>
<body><p id="ok">page</p><script>document.getElementById("ok").textContent = "ran";</script></body></html>`

func server(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	serve := func(contentType, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
			w.Header().Set("Content-Type", contentType)
			w.Write([]byte(body))
		}
	}
	mux.HandleFunc("GET /{$}", serve("text/html; charset=utf-8", formPage))
	mux.HandleFunc("GET /app.js", serve("text/javascript", script))
	// Without a favicon the browser's request for one is a 404, which
	// the console reports as an error.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /inline", serve("text/html; charset=utf-8", inline))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFillClickRead(t *testing.T) {
	srv := server(t)
	b := New(t)
	b.Open(srv.URL+"/", "#go")

	if got := b.Text("#title"); got != "Reviews — ready" {
		t.Errorf("title text = %q", got)
	}
	if v, ok := b.Attribute("#home", "data-kind"); !ok || v != "link" {
		t.Errorf("data-kind = %q, %v; want link, true", v, ok)
	}
	if _, ok := b.Attribute("#home", "data-missing"); ok {
		t.Error("an attribute the element does not have is reported as there")
	}
	b.Fill("#name", "first")
	b.Fill("#name", "Ada") // Fill replaces, it does not append
	b.Click("#go")
	if got := b.Text("#out"); got != "hello Ada" {
		t.Errorf("after the click #out = %q, want %q", got, "hello Ada")
	}
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("console errors on a clean page: %v", errs)
	}
	if v := b.CSPViolations(); len(v) != 0 {
		t.Errorf("CSP violations on a clean page: %v", v)
	}
}

func TestCSPViolationIsCollected(t *testing.T) {
	srv := server(t)
	b := New(t)
	b.Open(srv.URL+"/inline", "#ok")

	if got := b.Text("#ok"); got != "page" {
		t.Errorf("the inline script ran under script-src 'self': #ok = %q", got)
	}
	v := b.CSPViolations()
	if len(v) == 0 {
		t.Fatalf("no CSP violation collected; console: %v", b.Console())
	}
	t.Logf("violation: %v (source %q)", v[0], v[0].Source)
	if !strings.Contains(v[0].Text, "script-src") {
		t.Errorf("violation does not name the directive: %v", v[0])
	}
	if len(b.ConsoleErrors()) == 0 {
		t.Error("a CSP violation is not among the console errors")
	}
}

func TestConsoleErrorsCollectsExceptions(t *testing.T) {
	srv := server(t)
	b := New(t)
	b.Open(srv.URL+"/", "#go")
	// Run through the protocol, not the page, so CSP does not apply.
	b.do("throw", chromedp.Evaluate[chromedp.Void](`setTimeout(() => { throw new Error("boom") }, 0)`))
	b.Text("#title") // a round trip after the timer
	errs := b.ConsoleErrors()
	if len(errs) != 1 || !errs[0].IsException() || !strings.Contains(errs[0].Text, "boom") {
		t.Errorf("console errors = %v, want the one uncaught exception", errs)
	}
}

func TestScreenshotHasViewportWidth(t *testing.T) {
	srv := server(t)
	b := New(t)
	b.SetViewport(360, 640)
	b.Open(srv.URL+"/", "#go")
	path := filepath.Join(t.TempDir(), "narrow.png")
	b.Screenshot(path)

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if w := img.Bounds().Dx(); w != 360 {
		t.Errorf("screenshot width = %d, want the viewport's 360", w)
	}
}

func TestTabMovesFocus(t *testing.T) {
	srv := server(t)
	b := New(t)
	b.Open(srv.URL+"/", "#go")

	var got []string
	for range 4 {
		got = append(got, b.Tab())
	}
	want := []string{"home", "name", "unnamed-id", "go"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Tab focused %q, want %q", got, want)
	}
}
