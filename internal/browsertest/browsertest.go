// Package browsertest starts Debian's Chromium, headless, for a Go test and
// gives it the few steps a test of a server-rendered page needs: open a
// page, fill a field, click, read text and attributes, press Tab, take a
// screenshot, set the viewport, and collect the console errors and the
// Content-Security-Policy violations the page caused.
//
// Every step fails the test on error, so a test reads as the steps a person
// takes. Context gives the chromedp context for anything else.
package browsertest

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// ChromiumPath is where Debian's chromium package puts the browser;
// scripts/install-chromium installs it there.
const ChromiumPath = "/usr/bin/chromium"

// stepTimeout bounds each step, so that a page that never shows the
// element a test waits for fails the test instead of hanging it.
const stepTimeout = 30 * time.Second

// Browser is one headless Chromium with one tab, owned by one test.
type Browser struct {
	t   testing.TB
	ctx context.Context

	// flushed carries the console markers flush writes, from the
	// goroutine that collects the console to flush.
	flushed chan string

	mu       sync.Mutex
	messages []chromedp.ConsoleMessage
	dialogs  []string
	flushes  int
}

// flushPrefix begins the console messages flush writes; they are not the
// page's, so Console leaves them out.
const flushPrefix = "browsertest-flush-"

// New starts Chromium for the test, with a fresh profile in t.TempDir(),
// and stops it when the test ends. Without Chromium it fails the test
// and says to run scripts/install-chromium.
func New(t testing.TB) *Browser {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		t.Fatalf("browsertest: no Chromium at %s (%v); run scripts/install-chromium (as root) first", ChromiumPath, err)
	}
	// The profile directory is made before the cleanup below is
	// registered, so it is removed after the browser is dead.
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ChromiumPath),
		chromedp.UserDataDir(profile),
		// Chromium's own sandbox needs user namespaces or its setuid
		// helper (chromium-sandbox), and refuses to start as root
		// without this flag. Tests run as root in a container, and the
		// browser only ever loads pages from the test's own httptest
		// server. This is not quorum's analyzers sandbox
		// (internal/sandbox, bubblewrap), which is separate.
		chromedp.NoSandbox,
		// No GPU in a container; software rendering makes screenshots
		// the same on every machine.
		chromedp.DisableGPU,
		// Without the zygote (possible only with no sandbox), renderers
		// are the browser's own children and it reaps them when it
		// closes; the zygote's would be left to PID 1 as zombies. The
		// crash handler daemonizes whatever the flags, so its two
		// zombies wait for PID 1 to reap them.
		chromedp.Flag("no-zygote", true),
		chromedp.WindowSize(1280, 800),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// Closing gracefully lets Chromium end its own helper processes;
	// cancelAlloc then kills whatever is left and waits for the browser
	// process to exit, so no Chromium outlives the test.
	t.Cleanup(func() {
		closeCtx, cancelClose := context.WithTimeout(ctx, stepTimeout)
		defer cancelClose()
		if err := chromedp.Cancel(closeCtx); err != nil {
			t.Logf("browsertest: close Chromium: %v", err)
		}
		cancel()
		cancelAlloc()
	})

	b := &Browser{t: t, ctx: ctx, flushed: make(chan string, 1)}
	// The first Run starts the browser and lives as long as ctx, so it
	// gets no timeout of its own; a start that hangs is caught by the
	// test's own deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: start %s: %v", ChromiumPath, err)
	}
	// A confirm() or alert() would stop the page until someone answers:
	// every dialog is accepted, as a person clicking OK, and kept for
	// Dialogs.
	dialogs, stopDialogs := chromedp.FromContext(ctx).Target.Subscribe("Page.javascriptDialogOpening")
	t.Cleanup(stopDialogs)
	go func() {
		for raw := range dialogs {
			var ev page.EventJavascriptDialogOpening
			if err := json.Unmarshal(raw, &ev); err != nil {
				continue
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, ev.Message)
			b.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if strings.HasPrefix(m.Text, flushPrefix) {
				b.flushed <- m.Text
				continue
			}
			b.mu.Lock()
			b.messages = append(b.messages, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// Context is the chromedp context of the browser's tab, for steps this
// package has no helper for.
func (b *Browser) Context() context.Context { return b.ctx }

// do runs the steps with a bounded time and fails the test on error.
func (b *Browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browsertest: %s: %v", what, err)
	}
}

// run runs one step that returns a value, as do does.
func run[T any](b *Browser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("browsertest: %s: %v", what, err)
	}
	return v
}

// Open navigates to url and waits until the element that selector (CSS)
// names is visible.
func (b *Browser) Open(url, selector string) {
	b.t.Helper()
	b.do("open "+url,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(selector)),
	)
}

// WaitVisible waits until the element that selector names is visible.
func (b *Browser) WaitVisible(selector string) {
	b.t.Helper()
	b.do("wait for "+selector, chromedp.WaitVisible(chromedp.CSS(selector)))
}

// Fill replaces the value of the field that selector names by typing
// value into it, so the page sees the key and input events a person
// makes.
func (b *Browser) Fill(selector, value string) {
	b.t.Helper()
	b.do("fill "+selector,
		chromedp.WaitVisible(chromedp.CSS(selector)),
		// Clearing .value through the protocol's DOM only resets the
		// attribute, not what a person typed before; the property does.
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(selector)+`).value = ""`),
		chromedp.SendKeys(chromedp.CSS(selector), value),
	)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}

// Click clicks the element that selector names, once it is visible.
func (b *Browser) Click(selector string) {
	b.t.Helper()
	b.do("click "+selector, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
}

// Text is the visible text of the element that selector names.
func (b *Browser) Text(selector string) string {
	b.t.Helper()
	return strings.TrimSpace(run(b, "text of "+selector, chromedp.Text(chromedp.CSS(selector))))
}

// Attribute is the value of the attribute name of the element that
// selector names, and whether the element has it.
func (b *Browser) Attribute(selector, name string) (string, bool) {
	b.t.Helper()
	r := run(b, "attribute "+name+" of "+selector, chromedp.AttributeValue(chromedp.CSS(selector), name))
	return r.Value, r.Exists
}

// SetViewport sets the size of the page in CSS pixels, as a narrow phone
// (360 wide) or a desktop window sees it.
func (b *Browser) SetViewport(width, height int) {
	b.t.Helper()
	b.do("set the viewport", chromedp.EmulateViewport(int64(width), int64(height)))
}

// Screenshot writes a PNG of the whole page, beyond the viewport's
// height, to path.
func (b *Browser) Screenshot(path string) {
	b.t.Helper()
	png := run(b, "screenshot", chromedp.FullScreenshot(100))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatalf("browsertest: write the screenshot: %v", err)
	}
}

// Tab presses the Tab key and returns the id of the element that then has
// the focus, or its name when it has no id, or "" when nothing named has.
func (b *Browser) Tab() string {
	b.t.Helper()
	b.do("press Tab", chromedp.KeyEvent(kb.Tab))
	return run(b, "read the focused element", chromedp.Evaluate[string](
		`(e => e ? (e.id || e.getAttribute("name") || "") : "")(document.activeElement)`))
}

// Console is every message the page wrote to the console so far: calls
// of the console API, uncaught exceptions and the browser's log entries.
func (b *Browser) Console() []chromedp.ConsoleMessage {
	// Events reach the collector a moment after the step that caused
	// them returns; a round trip to the page lets them arrive first.
	b.flush()
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]chromedp.ConsoleMessage(nil), b.messages...)
}

// ConsoleErrors is the messages of Console that are errors or uncaught
// exceptions, CSP violations included.
func (b *Browser) ConsoleErrors() []chromedp.ConsoleMessage {
	var errs []chromedp.ConsoleMessage
	for _, m := range b.Console() {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			errs = append(errs, m)
		}
	}
	return errs
}

// CSPViolations is the messages of Console in which the browser reports
// that the page's Content-Security-Policy refused something.
func (b *Browser) CSPViolations() []chromedp.ConsoleMessage {
	var violations []chromedp.ConsoleMessage
	for _, m := range b.Console() {
		if strings.Contains(m.Text, "Content Security Policy") {
			violations = append(violations, m)
		}
	}
	return violations
}

// flush waits until a console message written after every event so far
// has reached the collector; the browser sends a tab's events in order.
func (b *Browser) flush() {
	b.t.Helper()
	b.mu.Lock()
	b.flushes++
	marker := flushPrefix + strconv.Itoa(b.flushes)
	b.mu.Unlock()
	b.do("flush the console", chromedp.Evaluate[chromedp.Void](`console.debug("`+marker+`")`))
	timer := time.NewTimer(stepTimeout)
	defer timer.Stop()
	for {
		select {
		case seen := <-b.flushed:
			if seen == marker {
				return
			}
		case <-timer.C:
			b.t.Fatalf("browsertest: the console marker %s did not arrive in %v", marker, stepTimeout)
		}
	}
}

// Eval evaluates a JavaScript expression in the page and returns its
// value (a generic function: Go methods cannot have type parameters).
func Eval[T any](b *Browser, expression string) T {
	b.t.Helper()
	return run(b, "evaluate "+expression, chromedp.Evaluate[T](expression))
}

// Press presses one key (a kb constant, or a character) on the focused
// element, as a person at the keyboard does.
func (b *Browser) Press(key string) {
	b.t.Helper()
	b.do("press "+key, chromedp.KeyEvent(key))
}

// Location is the page's current address.
func (b *Browser) Location() string {
	b.t.Helper()
	return Eval[string](b, "window.location.href")
}

// Cookies are the browser's cookies for the current page, HttpOnly ones
// included (a page's script cannot read those; the protocol can).
func Cookies(b *Browser) []*network.Cookie {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		b.t.Fatalf("browsertest: read the cookies: %v", err)
	}
	return res.Cookies
}

// Dialogs are the messages of the dialogs (confirm, alert) the pages
// opened so far, each accepted.
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.dialogs)
}

// WaitFor waits until an element that selector names is in the page,
// visible or not (e.g. "#status:not(:empty)", once a script has written
// into it).
func (b *Browser) WaitFor(selector string) {
	b.t.Helper()
	b.do("wait for "+selector+" in the page", chromedp.WaitReady(chromedp.CSS(selector)))
}
