package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
	"github.com/quorum-review/quorum/webhook/verify"
)

// receiver is a loopback webhook receiver: it keeps every request it gets
// and answers with the status and body it is told.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []receivedRequest
	status   int
	response string
}

type receivedRequest struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{status: http.StatusOK}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.got = append(rc.got, receivedRequest{header: r.Header.Clone(), body: body})
		w.WriteHeader(rc.status)
		_, _ = io.WriteString(w, rc.response)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) answer(status int, body string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status, rc.response = status, body
}

func (rc *receiver) requests() []receivedRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]receivedRequest(nil), rc.got...)
}

// queuedJob is the arguments of the delivery's River job waiting to run,
// failing unless there is exactly one: the dashboard queues deliveries,
// the webhook worker makes them.
func (s *site) queuedJob(t *testing.T, deliveryID string) webhook.DeliverArgs {
	t.Helper()
	query := `SELECT args::text FROM river_job WHERE kind = 'webhook.deliver' AND state = 'available' ORDER BY id`
	if s.db.Dialect() == store.SQLite {
		query = `SELECT json(args) FROM river_job WHERE kind = 'webhook.deliver' AND state = 'available' ORDER BY id`
	}
	rows, err := s.db.Reader().Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var found []webhook.DeliverArgs
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var args webhook.DeliverArgs
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			t.Fatal(err)
		}
		if args.DeliveryID == deliveryID {
			found = append(found, args)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Fatalf("delivery %s has %d jobs waiting to run, want 1", deliveryID, len(found))
	}
	return found[0]
}

// deliver runs the delivery's queued job once with the real webhook
// worker, as River would, at the site's clock: one attempt to the
// receiver, recorded in the delivery log.
func (s *site) deliver(t *testing.T, deliveryID string) {
	t.Helper()
	args := s.queuedJob(t, deliveryID)
	w := &webhook.Worker{DB: s.db, Version: "test", AllowPrivate: true, AttemptTimeout: 5 * time.Second, Now: s.clock.Now}
	at := s.clock.Now()
	// A failed attempt is an error River retries; the delivery log says how
	// it went, which is what the tests read.
	_ = w.Work(context.Background(), &river.Job[webhook.DeliverArgs]{
		JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 10, AttemptedAt: &at, Kind: "webhook.deliver"},
		Args:   args,
	})
}

// endpoint registers an endpoint of repo's account as an operator would,
// past the dashboard, and returns it with its secret.
func (s *site) endpoint(t *testing.T, repo account.Repository, rawURL string, events ...string) webhook.Endpoint {
	t.Helper()
	ep, _, err := webhook.Create(context.Background(), s.db.Writer(), repo.AccountID, rawURL, events, "seeded", "", s.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// stored is the endpoint as the store has it now.
func (s *site) stored(t *testing.T, repo account.Repository, endpointID string) webhook.Endpoint {
	t.Helper()
	ep, err := webhook.Get(context.Background(), s.db.Reader(), repo.AccountID, endpointID)
	if err != nil {
		t.Fatalf("endpoint %s: %v", endpointID, err)
	}
	return ep
}

func (s *site) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.Reader().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var (
	secretOnPage  = regexp.MustCompile(`id="endpoint-secret"[^>]*>([^<]+)<`)
	endpointRowID = regexp.MustCompile(`<tr id="endpoint-(hook_[0-9A-Z]+)"`)
	deliveryRowID = regexp.MustCompile(`<tr id="delivery-(wh_[0-9A-Z]+)"`)
	nextPage      = regexp.MustCompile(`<a rel="next" id="next-page" href="([^"]+)"`)
)

func wantContains(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Fatalf("%s does not show %q:\n%s", what, want, body)
		}
	}
}

func wantAbsent(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(body, u) {
			t.Fatalf("%s shows %q:\n%s", what, u, body)
		}
	}
}

// postSeeOther posts a form that must answer 303 and returns where to.
func (b *browser) postSeeOther(path string, form url.Values) string {
	b.t.Helper()
	res, body := b.post(path, form)
	wantStatus(b.t, res, body, http.StatusSeeOther)
	return res.Header.Get("Location")
}

// The whole life of an endpoint, from its pages: registered (the secret
// shown once), edited, paused and resumed, pinged (the ping delivered by
// the real worker to a loopback receiver, signed with the secret shown),
// its secret rotated with an overlap, the ping redelivered and refused
// (the receiver's body shown escaped), filtered, deleted.
func TestEndpointLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		rc := newReceiver(t)
		br := s.signedIn(t, s.repo)
		csrf := br.csrf()

		res, body := br.get("/dashboard/webhooks")
		wantStatus(t, res, body, http.StatusOK)
		wantContains(t, "the empty list", body, "No webhook endpoint is registered", `id="create-endpoint"`)

		res, body = br.get("/dashboard/webhooks/new")
		wantStatus(t, res, body, http.StatusOK)
		for _, name := range event.Names {
			wantContains(t, "the new-endpoint form", body, fmt.Sprintf(`<input type="checkbox" id="event-%s" name="events" value="%s">`, name, name),
				fmt.Sprintf(`<label for="event-%s">`, name))
		}
		wantContains(t, "the new-endpoint form", body, `<label for="url">URL</label>`, `<label for="description">`, `id="register-endpoint"`)

		// Registered: the secret is on this response only.
		res, body = br.post("/dashboard/webhooks", url.Values{"csrf": {csrf}, "url": {" " + rc.URL + "/hook "},
			"events": {event.ReviewFailed, event.FindingCreated}, "description": {"CI <bot>"}})
		res, body = br.followed(res, body)
		wantStatus(t, res, body, http.StatusOK)
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Fatalf("the page with the secret has Cache-Control %q, want no-store", cc)
		}
		wantContains(t, "the registered page", body, `data-copy="endpoint-secret"`, `id="endpoint-secret-status" aria-live="polite"`, "only time")
		m := secretOnPage.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no secret on the registered page:\n%s", body)
		}
		secret := html.UnescapeString(m[1])
		res, body = br.get("/dashboard/webhooks")
		wantStatus(t, res, body, http.StatusOK)
		ids := endpointRowID.FindAllStringSubmatch(body, -1)
		if len(ids) != 1 {
			t.Fatalf("the list has %d endpoints, want 1:\n%s", len(ids), body)
		}
		hook := ids[0][1]
		wantContains(t, "the list", body, rc.URL+"/hook<", "review.failed, finding.created", "CI &lt;bot&gt;", "enabled")
		ep := s.stored(t, s.repo, hook)
		if ep.Secret != secret || !strings.HasPrefix(secret, webhook.SecretPrefix) || ep.URL != rc.URL+"/hook" || ep.Description != "CI <bot>" {
			t.Fatalf("stored %+v; the page showed secret %q", ep, secret)
		}

		// Never again: not on the endpoint's page.
		page := "/dashboard/webhooks/" + hook
		res, body = br.get(page)
		wantStatus(t, res, body, http.StatusOK)
		wantAbsent(t, "the endpoint page", html.UnescapeString(body), secret, `id="endpoint-secret"`)
		wantContains(t, "the endpoint page", body, `id="send-ping"`, `id="rotate-secret"`, `id="disable-endpoint"`, `id="delete-endpoint"`,
			`data-confirm="Delete the endpoint`, `id="save-endpoint"`, `value="review.failed" checked`, `value="finding.created" checked`,
			`value="review.completed">`, `<option value="86400" selected>`)

		// Edited: no event ticked subscribes to every event.
		loc := br.postSeeOther(page, url.Values{"csrf": {csrf}, "url": {rc.URL + "/v2"}, "description": {""}})
		if loc != page+"?notice=updated" {
			t.Fatalf("after saving: Location %q", loc)
		}
		res, body = br.get(loc)
		wantStatus(t, res, body, http.StatusOK)
		wantContains(t, "the saved endpoint", body, "The endpoint was saved.", "every event", rc.URL+"/v2")
		if ep := s.stored(t, s.repo, hook); ep.URL != rc.URL+"/v2" || len(ep.Events) != len(event.Names) || ep.Description != "" {
			t.Fatalf("after saving, stored %+v", ep)
		}

		// Paused and resumed.
		if loc := br.postSeeOther(page+"/disable", url.Values{"csrf": {csrf}}); loc != page+"?notice=disabled" {
			t.Fatalf("after disabling: Location %q", loc)
		}
		_, body = br.get(page)
		wantContains(t, "the disabled endpoint", body, "disabled: "+webhook.ReasonDisabledByCustomer, `id="enable-endpoint"`)
		wantAbsent(t, "the disabled endpoint", body, `id="disable-endpoint"`)
		_, body = br.get("/dashboard/webhooks")
		wantContains(t, "the list", body, `<span class="tag">disabled</span> `+webhook.ReasonDisabledByCustomer)
		_, body = br.get(page + "/deliveries")
		wantContains(t, "the deliveries of a disabled endpoint", body, `id="endpoint-disabled">The endpoint is disabled (`+webhook.ReasonDisabledByCustomer+`)`)
		br.postSeeOther(page+"/enable", url.Values{"csrf": {csrf}})
		if s.stored(t, s.repo, hook).Disabled {
			t.Fatal("enabling left the endpoint disabled")
		}

		// Pinged: queued, shown with a notice, then delivered by the worker.
		loc = br.postSeeOther(page+"/ping", url.Values{"csrf": {csrf}})
		ping, ok := strings.CutPrefix(loc, page+"/deliveries?pinged=")
		if !ok {
			t.Fatalf("after a ping: Location %q, want the endpoint's deliveries", loc)
		}
		res, body = br.get(loc)
		wantStatus(t, res, body, http.StatusOK)
		wantAbsent(t, "the deliveries of an enabled endpoint", body, `id="endpoint-disabled"`)
		wantContains(t, "the deliveries after a ping", body, "A ping is queued as delivery", `<tr id="delivery-`+ping+`">`,
			`<code>ping</code>`, `status-pending">pending<`)
		s.deliver(t, ping)
		got := rc.requests()
		if len(got) != 1 {
			t.Fatalf("the receiver got %d requests, want the ping", len(got))
		}
		v := verify.Verifier{Secret: secret, Now: s.clock.Now, RequireStandard: true}
		if err := v.Check(got[0].header, got[0].body); err != nil {
			t.Fatalf("the ping is not signed with the secret the page showed: %v", err)
		}
		rc.answer(http.StatusOK, "<b>thanks</b>")

		// Rotated with a one-hour overlap: the new secret once, and until
		// when the old one signs.
		s.clock.Advance(time.Minute)
		res, body = br.followed(br.post(page+"/rotate-secret", url.Values{"csrf": {csrf}, "overlap": {"3600"}}))
		wantStatus(t, res, body, http.StatusOK)
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Fatalf("the rotated secret's page has Cache-Control %q", cc)
		}
		m = secretOnPage.FindStringSubmatch(body)
		if m == nil || html.UnescapeString(m[1]) == secret {
			t.Fatalf("the rotation page shows no new secret:\n%s", body)
		}
		rotated := html.UnescapeString(m[1])
		until := s.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		wantContains(t, "the rotation page", body, `<time datetime="`+until+`" id="previous-secret-expires">`)
		if ep := s.stored(t, s.repo, hook); ep.Secret != rotated || ep.PreviousSecret != secret {
			t.Fatal("the rotation page's secret is not the one stored, or the previous one no longer signs")
		}
		_, body = br.get(page)
		wantAbsent(t, "the endpoint page after a rotation", html.UnescapeString(body), rotated, secret)
		wantContains(t, "the endpoint page after a rotation", body, "the previous secret also signs until <time datetime=\""+until+"\"")

		// Redelivered to a receiver that refuses it: signed with both
		// secrets during the overlap, and its answer shown, escaped.
		rc.answer(http.StatusInternalServerError, "<script>alert(1)</script>")
		s.clock.Advance(time.Minute)
		delivery := "/dashboard/deliveries/" + ping
		_, body = br.get(delivery)
		wantContains(t, "the delivered ping", body, "HTTP 200", `status-succeeded">succeeded<`, `id="redeliver"`)
		if loc := br.postSeeOther(delivery+"/redeliver", url.Values{"csrf": {csrf}}); loc != delivery+"?notice=redelivered" {
			t.Fatalf("after redelivering: Location %q", loc)
		}
		if args := s.queuedJob(t, ping); args.Before != 1 {
			t.Fatalf("the redelivery's job starts after %d attempts, want 1", args.Before)
		}
		s.deliver(t, ping)
		got = rc.requests()
		if len(got) != 2 {
			t.Fatalf("the receiver got %d requests, want the ping and its redelivery", len(got))
		}
		for _, sec := range []string{secret, rotated} {
			v := verify.Verifier{Secret: sec, Now: s.clock.Now, RequireStandard: true}
			if err := v.Check(got[1].header, got[1].body); err != nil {
				t.Fatalf("during the overlap the redelivery is not signed with %s secret: %v", map[bool]string{true: "the previous", false: "the new"}[sec == secret], err)
			}
		}
		res, body = br.get(delivery)
		wantStatus(t, res, body, http.StatusOK)
		wantContains(t, "the refused redelivery", body, `<tr id="attempt-1">`, `<tr id="attempt-2">`, "HTTP 500", "HTTP 500 Internal Server Error",
			"&lt;script&gt;alert(1)&lt;/script&gt;", `status-failed">failed<`,
			`<time datetime="`+s.clock.Now().Add(webhook.RetryDelays[0]).UTC().Format(time.RFC3339)+`">`)
		wantAbsent(t, "the refused redelivery", body, "<script>alert(1)")

		// Filtered by status.
		_, body = br.get(page + "/deliveries?status=failed")
		wantContains(t, "the failed deliveries", body, `<tr id="delivery-`+ping+`">`, `<option value="failed" selected>`)
		_, body = br.get(page + "/deliveries?status=succeeded")
		wantContains(t, "the succeeded deliveries", body, "No succeeded delivery")
		wantAbsent(t, "the succeeded deliveries", body, ping)

		// Deleted: gone from the list, its pages and its delivery's.
		if loc := br.postSeeOther(page+"/delete", url.Values{"csrf": {csrf}}); loc != "/dashboard/webhooks?notice=deleted" {
			t.Fatalf("after deleting: Location %q", loc)
		}
		_, body = br.get("/dashboard/webhooks?notice=deleted")
		wantContains(t, "the list after deleting", body, "The endpoint was deleted.")
		wantAbsent(t, "the list after deleting", body, hook)
		for _, p := range []string{page, page + "/deliveries", delivery} {
			res, body := br.get(p)
			wantStatus(t, res, body, http.StatusNotFound)
		}
	})
}

// A refused form comes back with each field's reason beside it, its values
// kept, and status 400 (the API's invalid-request status); nothing is
// stored. The same holds for an edit and a rotation's overlap.
func TestEndpointFormsShowEachFieldsReason(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t), func(c *Config) { c.WebhookPolicy.AllowPrivate = false })
		br := s.signedIn(t, s.repo)
		csrf := br.csrf()

		res, body := br.post("/dashboard/webhooks", url.Values{"csrf": {csrf}, "url": {"ftp://example.com/x"},
			"events": {event.ReviewFailed, "review.exploded"}, "description": {strings.Repeat("x", webhook.MaxDescriptionLength+1)}})
		wantStatus(t, res, body, http.StatusBadRequest)
		wantContains(t, "the refused form", body,
			`id="form-problem"`,
			`value="ftp://example.com/x" required spellcheck="false" autocomplete="off" placeholder="https://example.com/quorum-events" aria-invalid="true" aria-describedby="url-error">`,
			`<p class="field-error" id="url-error">URL: must be an http or https URL</p>`,
			`<fieldset aria-describedby="events-hint events-error">`,
			`value="review.failed" checked aria-invalid="true">`,
			`id="events-error">Events: unknown event &#34;review.exploded&#34;`,
			`aria-invalid="true" aria-describedby="description-error">`+strings.Repeat("x", webhook.MaxDescriptionLength+1)+`</textarea>`,
			`id="description-error">Description: longer than 1024 characters`)
		if n := s.count(t, `SELECT count(*) FROM webhook_endpoints`); n != 0 {
			t.Fatalf("a refused form stored %d endpoints", n)
		}

		// The SSRF policy, as the API's: a literal non-public address.
		res, body = br.post("/dashboard/webhooks", url.Values{"csrf": {csrf}, "url": {"http://127.0.0.1:9/hook"}})
		wantStatus(t, res, body, http.StatusBadRequest)
		wantContains(t, "the refused loopback URL", body, `id="url-error">URL: 127.0.0.1 is not a public address (loopback)`)
		wantAbsent(t, "the refused loopback URL", body, `id="events-error"`, `id="description-error"`)

		ep := s.endpoint(t, s.repo, "https://hooks.example.com/a", event.ReviewFailed)
		page := "/dashboard/webhooks/" + ep.ID
		res, body = br.post(page, url.Values{"csrf": {csrf}, "url": {"http://10.0.0.7/hook"}, "events": {event.ReviewCompleted}, "description": {"new"}})
		wantStatus(t, res, body, http.StatusBadRequest)
		wantContains(t, "the refused edit", body, `id="url-error">URL: 10.0.0.7 is not a public address (private)`,
			`value="http://10.0.0.7/hook"`, `value="review.completed" checked`, ">new</textarea>",
			// The facts are the stored endpoint's.
			`<h1 class="mono url">https://hooks.example.com/a</h1>`)
		if got := s.stored(t, s.repo, ep.ID); got.URL != ep.URL || got.Description != ep.Description || len(got.Events) != 1 {
			t.Fatalf("a refused edit changed the endpoint: %+v", got)
		}

		// An operator's loopback endpoint: its other fields can be edited
		// as long as its address is left as it is.
		private := s.endpoint(t, s.repo, "http://127.0.0.1:9/operator")
		loc := br.postSeeOther("/dashboard/webhooks/"+private.ID, url.Values{"csrf": {csrf}, "url": {private.URL}, "description": {"kept"}})
		if got := s.stored(t, s.repo, private.ID); loc != "/dashboard/webhooks/"+private.ID+"?notice=updated" || got.Description != "kept" {
			t.Fatalf("editing the description of an operator's loopback endpoint: Location %q, stored %+v", loc, got)
		}
		res, body = br.post("/dashboard/webhooks/"+private.ID, url.Values{"csrf": {csrf}, "url": {"http://127.0.0.1:9/other"}})
		wantStatus(t, res, body, http.StatusBadRequest)

		for _, overlap := range []string{"-1", "604801", "a day"} {
			res, body = br.post(page+"/rotate-secret", url.Values{"csrf": {csrf}, "overlap": {overlap}})
			wantStatus(t, res, body, http.StatusBadRequest)
			wantContains(t, "the refused rotation", body, `<select id="overlap" name="overlap" aria-invalid="true" aria-describedby="overlap-hint overlap-error">`,
				`id="overlap-error">Overlap: must be a number of seconds from 0 to 604800</p>`)
			if got := s.stored(t, s.repo, ep.ID); got.Secret != ep.Secret {
				t.Fatalf("overlap %q: a refused rotation changed the secret", overlap)
			}
		}
		// None given: the default overlap; 0: none.
		res, body = br.followed(br.post(page+"/rotate-secret", url.Values{"csrf": {csrf}}))
		wantStatus(t, res, body, http.StatusOK)
		wantContains(t, "the default rotation", body, `<time datetime="`+s.clock.Now().Add(webhook.DefaultOverlap).UTC().Format(time.RFC3339)+`" id="previous-secret-expires">`)
		res, body = br.followed(br.post(page+"/rotate-secret", url.Values{"csrf": {csrf}, "overlap": {"0"}}))
		wantStatus(t, res, body, http.StatusOK)
		wantContains(t, "a rotation without overlap", body, "The previous secret no longer signs.")
		if got := s.stored(t, s.repo, ep.ID); got.PreviousSecret != "" {
			t.Fatal("after a rotation without overlap the previous secret still signs")
		}
	})
}

// Past the operator's limit the form says so, with the API's status.
func TestEndpointLimitIsAClearMessage(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t), func(c *Config) { c.WebhookMaxEndpoints = 1 })
	br := s.signedIn(t, s.repo)
	csrf := br.csrf()
	res, body := br.post("/dashboard/webhooks", url.Values{"csrf": {csrf}, "url": {"https://hooks.example.com/1"}})
	res, body = br.followed(res, body)
	wantStatus(t, res, body, http.StatusOK)
	res, body = br.post("/dashboard/webhooks", url.Values{"csrf": {csrf}, "url": {"https://hooks.example.com/2"}, "description": {"second"}})
	wantStatus(t, res, body, http.StatusConflict)
	wantContains(t, "the form past the limit", body, `<div class="problem" role="alert" id="form-problem"><p>The account has 1 webhook endpoints, the most it may have; delete one to register another.</p>`,
		`value="https://hooks.example.com/2"`, ">second</textarea>")
	if n := s.count(t, `SELECT count(*) FROM webhook_endpoints`); n != 1 {
		t.Fatalf("%d endpoints stored past a limit of 1", n)
	}
}

// webhookPosts are the dashboard's state changes of an endpoint or a
// delivery, with {endpoint} and {delivery} in their paths for the ids.
var webhookPosts = []struct {
	path string
	form url.Values
}{
	{"/dashboard/webhooks", url.Values{"url": {"https://hooks.example.com/new"}}},
	{"/dashboard/webhooks/{endpoint}", url.Values{"url": {"https://hooks.example.com/changed"}}},
	{"/dashboard/webhooks/{endpoint}/rotate-secret", nil},
	{"/dashboard/webhooks/{endpoint}/disable", nil},
	{"/dashboard/webhooks/{endpoint}/enable", nil},
	{"/dashboard/webhooks/{endpoint}/delete", nil},
	{"/dashboard/webhooks/{endpoint}/ping", nil},
	{"/dashboard/deliveries/{delivery}/redeliver", nil},
}

// state is what any of webhookPosts would change.
func (s *site) webhookState(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	rows, err := s.db.Reader().Query(context.Background(), `SELECT id, url, secret, coalesce(disabled_at, 0), coalesce(deleted_at, 0) FROM webhook_endpoints ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var eid, u, secret string
		var disabled, deleted int64
		if err := rows.Scan(&eid, &u, &secret, &disabled, &deleted); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, eid, u, secret, disabled, deleted)
	}
	fmt.Fprintln(&b, s.count(t, `SELECT count(*) FROM webhook_deliveries`), s.count(t, `SELECT count(*) FROM river_job`))
	return b.String()
}

// Reads need webhooks:read; a token without webhooks:write sees none of
// the controls, and each change it sends anyway is a 403 that changes
// nothing; so is one without the session's CSRF token.
func TestWebhookPagesFollowTheTokensScopes(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	ctx := context.Background()
	ep := s.endpoint(t, s.repo, "https://hooks.example.com/a")
	d, err := webhook.Ping(ctx, s.db, s.repo.AccountID, ep.ID, s.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	before := s.webhookState(t)

	ro := s.signedIn(t, s.repo, token.ScopeWebhooksRead)
	for path, controls := range map[string][]string{
		"/dashboard/webhooks":                          {`id="create-endpoint"`, "/dashboard/webhooks/new"},
		"/dashboard/webhooks/" + ep.ID:                 {`id="send-ping"`, `id="rotate-secret"`, `id="disable-endpoint"`, `id="delete-endpoint"`, `id="save-endpoint"`, `id="endpoint-form"`, `method="post" action="/dashboard/webhooks/`},
		"/dashboard/webhooks/" + ep.ID + "/deliveries": {`method="post" action="/dashboard/webhooks`, `method="post" action="/dashboard/deliveries`},
		"/dashboard/deliveries/" + d.ID:                {`id="redeliver"`, `method="post" action="/dashboard/deliveries`},
	} {
		res, body := ro.get(path)
		wantStatus(t, res, body, http.StatusOK)
		wantAbsent(t, "a read-only token's "+path, body, controls...)
	}
	res, body := ro.get("/dashboard/webhooks/new")
	wantStatus(t, res, body, http.StatusForbidden)
	wantContains(t, "the new-endpoint form without webhooks:write", body, `lacks the &#34;webhooks:write&#34; scope`)

	csrf := ro.csrfOf("/dashboard/webhooks")
	all := s.signedIn(t, s.repo)
	for _, p := range webhookPosts {
		path := strings.NewReplacer("{endpoint}", ep.ID, "{delivery}", d.ID).Replace(p.path)
		form := url.Values{"csrf": {csrf}}
		for k, v := range p.form {
			form[k] = v
		}
		res, body := ro.post(path, form)
		wantStatus(t, res, body, http.StatusForbidden)
		wantContains(t, "a change without webhooks:write", body, `lacks the &#34;webhooks:write&#34; scope`)
		form.Del("csrf")
		res, body = all.post(path, form)
		wantStatus(t, res, body, http.StatusForbidden)
		wantContains(t, "a change without the CSRF token", body, "security token is missing or stale")
	}
	if after := s.webhookState(t); after != before {
		t.Fatalf("refused changes changed the store:\nbefore %s\nafter  %s", before, after)
	}

	// Without webhooks:read, no page shows.
	rev := s.signedIn(t, s.repo, token.ScopeReviewsRead)
	for _, path := range []string{"/dashboard/webhooks", "/dashboard/webhooks/" + ep.ID, "/dashboard/webhooks/" + ep.ID + "/deliveries", "/dashboard/deliveries/" + d.ID} {
		res, body := rev.get(path)
		wantStatus(t, res, body, http.StatusForbidden)
		wantContains(t, path+" without webhooks:read", body, `lacks the &#34;webhooks:read&#34; scope`)
	}
}

// csrfOf is the CSRF token of a signed-in page at path (csrf reads the
// repositories page, which a webhooks-only token may not see).
func (b *browser) csrfOf(path string) string {
	b.t.Helper()
	_, body := b.get(path)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no CSRF field on %s:\n%s", path, body)
	}
	return m[1]
}

// Another account's endpoint and delivery are not found, to read or to
// change, and stay as they were.
func TestAnotherAccountsWebhooksAreNotFound(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		ep := s.endpoint(t, s.other, "https://globex.example.com/hook")
		d, err := webhook.Ping(context.Background(), s.db, s.other.AccountID, ep.ID, s.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		before := s.webhookState(t)
		br := s.signedIn(t, s.repo)
		csrf := br.csrf()
		for _, path := range []string{"/dashboard/webhooks/" + ep.ID, "/dashboard/webhooks/" + ep.ID + "/deliveries", "/dashboard/deliveries/" + d.ID} {
			res, body := br.get(path)
			wantStatus(t, res, body, http.StatusNotFound)
			wantAbsent(t, "acme's page of globex's "+path, body, "globex.example.com")
		}
		_, body := br.get("/dashboard/webhooks")
		wantAbsent(t, "acme's list", body, ep.ID)
		for _, p := range webhookPosts[1:] {
			form := url.Values{"csrf": {csrf}}
			for k, v := range p.form {
				form[k] = v
			}
			res, body := br.post(strings.NewReplacer("{endpoint}", ep.ID, "{delivery}", d.ID).Replace(p.path), form)
			wantStatus(t, res, body, http.StatusNotFound)
		}
		if after := s.webhookState(t); after != before {
			t.Fatalf("acme changed globex's webhooks:\nbefore %s\nafter  %s", before, after)
		}
	})
}

// Malformed ids are not found; malformed or repeated parameters are a 400;
// none is a 500.
func TestBadWebhookParametersAre400Or404(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	ep := s.endpoint(t, s.repo, "https://hooks.example.com/a")
	br := s.signedIn(t, s.repo)
	deliveries := "/dashboard/webhooks/" + ep.ID + "/deliveries"
	for path, want := range map[string]int{
		"/dashboard/webhooks/nope":                                           http.StatusNotFound,
		"/dashboard/webhooks/" + strings.ToLower(ep.ID):                      http.StatusNotFound,
		"/dashboard/webhooks/" + ep.ID + "x":                                 http.StatusNotFound,
		"/dashboard/webhooks/nope/deliveries":                                http.StatusNotFound,
		"/dashboard/webhooks/" + ep.ID + "/ping":                             http.StatusNotFound,
		"/dashboard/deliveries/wh_nope":                                      http.StatusNotFound,
		"/dashboard/deliveries/" + strings.Replace(ep.ID, "hook_", "wh_", 1): http.StatusNotFound,
		"/dashboard/webhooks?before=garbage":                                 http.StatusBadRequest,
		"/dashboard/webhooks?before=":                                        http.StatusBadRequest,
		"/dashboard/webhooks?before=-1." + ep.ID:                             http.StatusBadRequest,
		"/dashboard/webhooks?before=1.wh_01":                                 http.StatusBadRequest,
		"/dashboard/webhooks?before=99999999999999999999." + ep.ID:           http.StatusBadRequest,
		"/dashboard/webhooks?before=1." + ep.ID + "&before=2." + ep.ID:       http.StatusBadRequest,
		"/dashboard/webhooks?notice=%3Cb%3E":                                 http.StatusBadRequest,
		"/dashboard/webhooks/" + ep.ID + "?notice=deleted":                   http.StatusBadRequest,
		deliveries + "?status=bogus":                                         http.StatusBadRequest,
		deliveries + "?status=failed&status=pending":                         http.StatusBadRequest,
		deliveries + "?before=1." + ep.ID:                                    http.StatusBadRequest,
		deliveries + "?pinged=%3Cscript%3E":                                  http.StatusBadRequest,
		deliveries + "?status=":                                              http.StatusOK,
		"/dashboard/webhooks?before=1." + ep.ID:                              http.StatusOK,
	} {
		res, body := br.get(path)
		if res.StatusCode != want {
			t.Errorf("GET %s: status %d, want %d; body:\n%s", path, res.StatusCode, want, body)
		}
	}
}

// Both lists are keyset-paginated newest first: every row once, the
// status filter kept across pages.
func TestWebhookListsArePaginated(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		ctx := context.Background()
		var made []string
		for range endpointsPerPage + 1 {
			made = append(made, s.endpoint(t, s.repo, "https://hooks.example.com/x").ID)
			s.clock.Advance(time.Second)
		}
		s.endpoint(t, s.other, "https://globex.example.com/x")
		br := s.signedIn(t, s.repo, token.ScopeWebhooksRead)
		res, body := br.get("/dashboard/webhooks")
		wantStatus(t, res, body, http.StatusOK)
		first := endpointRowID.FindAllStringSubmatch(body, -1)
		next := nextPage.FindStringSubmatch(body)
		if len(first) != endpointsPerPage || next == nil {
			t.Fatalf("the first page has %d endpoints and next link %v, want %d and one", len(first), next, endpointsPerPage)
		}
		if first[0][1] != made[len(made)-1] {
			t.Fatalf("the first page starts with %s, want the newest, %s", first[0][1], made[len(made)-1])
		}
		res, body = br.get(strings.ReplaceAll(next[1], "&amp;", "&"))
		wantStatus(t, res, body, http.StatusOK)
		second := endpointRowID.FindAllStringSubmatch(body, -1)
		if len(second) != 1 || second[0][1] != made[0] || nextPage.MatchString(body) {
			t.Fatalf("the second page has %v, want only the oldest, %s, and no next link", second, made[0])
		}

		// Deliveries: the failed ones of 2 pages' worth, in pages.
		hook := made[0]
		var failed []string
		for i := range 2*deliveriesPerPage + 2 {
			d, err := webhook.Ping(ctx, s.db, s.repo.AccountID, hook, s.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				if _, err := s.db.Writer().Exec(ctx, `UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1`, d.ID); err != nil {
					t.Fatal(err)
				}
				failed = append([]string{d.ID}, failed...)
			}
			s.clock.Advance(time.Second)
		}
		var seen []string
		path := "/dashboard/webhooks/" + hook + "/deliveries?status=failed"
		for pages := 0; path != ""; pages++ {
			if pages > 2 {
				t.Fatal("more pages than deliveries")
			}
			res, body := br.get(path)
			wantStatus(t, res, body, http.StatusOK)
			for _, m := range deliveryRowID.FindAllStringSubmatch(body, -1) {
				seen = append(seen, m[1])
			}
			path = ""
			if m := nextPage.FindStringSubmatch(body); m != nil {
				path = strings.ReplaceAll(m[1], "&amp;", "&")
				if !strings.Contains(path, "status=failed") {
					t.Fatalf("the next page %q drops the status filter", path)
				}
			}
		}
		if strings.Join(seen, " ") != strings.Join(failed, " ") {
			t.Fatalf("paging the failed deliveries showed\n%v\nwant, newest first,\n%v", seen, failed)
		}
	})
}
