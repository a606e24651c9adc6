package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

// send is do with a body of the given content type; it checks the
// response against the OpenAPI document too.
func (b *bundle) send(t *testing.T, method, path, secret, contentType string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(method, b.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	r := response{status: res.StatusCode, header: res.Header, body: raw}
	key, err := conform(res.Request, r, nil)
	if err != nil {
		t.Errorf("%s %s: response does not conform to api/openapi.yaml: %v\nbody: %s", method, path, err, raw)
	}
	b.cover.add(key)
	return r
}

// sendJSON sends v as an application/json body.
func (b *bundle) sendJSON(t *testing.T, method, path, secret string, v any) response {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b.send(t, method, path, secret, "application/json", body)
}

// webhookTokens issues acme tokens: one with both webhook scopes, one that
// may only read them, and one with neither.
func webhookTokens(t *testing.T, b *bundle, accountID string) (all, readOnly, none string) {
	t.Helper()
	_, all = b.token(t, accountID, 0, token.ScopeWebhooksRead, token.ScopeWebhooksWrite)
	_, readOnly = b.token(t, accountID, 0, token.ScopeWebhooksRead)
	_, none = b.token(t, accountID, 0, token.ScopeReviewsRead, token.ScopeFindingsRead)
	return all, readOnly, none
}

// withJobs lets the bundle's database enqueue delivery jobs (nothing works
// them), as an api-role process does.
func withJobs(t *testing.T, db *store.DB) {
	t.Helper()
	if _, err := db.ConfigureJobs(store.JobsConfig{}); err != nil {
		t.Fatal(err)
	}
}

// recordAttempt writes an attempt of a delivery as the delivery worker
// would, and sets its status.
func recordAttempt(t *testing.T, db *store.DB, deliveryID string, number int, at time.Time, code *int, errText, body, status string) {
	t.Helper()
	ctx := t.Context()
	if _, err := db.Writer().Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, number, attempted_at, status_code, latency_us, error, response_body)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, deliveryID, number, store.Micros(at), code, 12345, errText, body); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec(ctx, `UPDATE webhook_deliveries SET status = $1, attempts = $2, next_attempt_at = NULL WHERE id = $3`,
		status, number, deliveryID); err != nil {
		t.Fatal(err)
	}
}

// created is POST /v1/webhooks's body.
type created struct {
	webhook.Endpoint
	Secret         string  `json:"secret"`
	DisabledReason *string `json:"disabled_reason"`
}

// rotated is POST /v1/webhooks/{id}/rotate-secret's body.
type rotated struct {
	webhook.Endpoint
	Secret         string     `json:"secret"`
	PreviousUntil  *time.Time `json:"previous_secret_expires_at"`
	DisabledReason *string    `json:"disabled_reason"`
}

// endpointBody is GET /v1/webhooks/{id}'s body, decoded strictly: a secret
// field would fail to decode.
type endpointBody struct {
	webhook.Endpoint
	DisabledReason *string `json:"disabled_reason"`
}

type endpointPage struct {
	Webhooks   []endpointBody `json:"webhooks"`
	NextCursor *string        `json:"next_cursor"`
}

type deliveryPage struct {
	Deliveries []webhook.Delivery `json:"deliveries"`
	NextCursor *string            `json:"next_cursor"`
}

type deliveryBody struct {
	webhook.Delivery
	AttemptLog []webhook.Attempt `json:"attempt_log"`
}

// driveWebhooks is the conformance test's part for the webhook registration
// and delivery-log API: every operation through its success and error
// paths, each response validated against the document.
func driveWebhooks(t *testing.T, b *bundle, open func(testing.TB) *store.DB) {
	withJobs(t, b.db)
	acme, globex := b.repo.AccountID, b.other.AccountID
	all, readOnly, none := webhookTokens(t, b, acme)
	globexAll, _, _ := webhookTokens(t, b, globex)
	missingHook, missingDelivery := id.New(id.Endpoint, b.clock.Now()), id.New(id.Delivery, b.clock.Now())

	var hook created
	t.Run("create", func(t *testing.T) {
		r := b.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{
			"url": "https://ci.example.com/hooks/quorum", "events": []string{event.ReviewCompleted}, "description": "CI",
		}).want(t, http.StatusCreated)
		r.json(t, &hook)
		if !strings.HasPrefix(hook.Secret, webhook.SecretPrefix) || !id.Valid(id.Endpoint, hook.ID) ||
			!slices.Equal(hook.Events, []string{event.ReviewCompleted}) || hook.Description != "CI" {
			t.Errorf("created %+v", hook)
		}
		if loc := r.header.Get("Location"); loc != "/v1/webhooks/"+hook.ID {
			t.Errorf("Location %q", loc)
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q, want no-store on a response with a secret", cc)
		}
		// Every event when none are given; the customer's own secret kept.
		var own created
		b.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{
			"url": "http://ci.example.com:8080/all", "secret": "It's a Secret to Everybody",
		}).want(t, http.StatusCreated).json(t, &own)
		if own.Secret != "It's a Secret to Everybody" || !slices.Equal(own.Events, event.Names) {
			t.Errorf("created with own secret and no events: %+v", own)
		}
		// A charset parameter is still JSON.
		b.send(t, http.MethodPost, "/v1/webhooks", all, "application/json; charset=utf-8", []byte(`{"url":"https://x.example.com/"}`)).want(t, http.StatusCreated)

		b.sendJSON(t, http.MethodPost, "/v1/webhooks", "", map[string]any{"url": "https://x.example.com/"}).want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		p := b.sendJSON(t, http.MethodPost, "/v1/webhooks", readOnly, map[string]any{"url": "https://x.example.com/"}).want(t, http.StatusForbidden).problem(t, codeForbidden)
		if !strings.Contains(p.Detail, token.ScopeWebhooksWrite) {
			t.Errorf("403 detail %q does not name webhooks:write", p.Detail)
		}
	})

	t.Run("validation", func(t *testing.T) {
		for _, c := range []struct {
			name string
			body string
			want string
		}{
			{"ftp scheme", `{"url":"ftp://ci.example.com/x"}`, "url"},
			{"javascript", `{"url":"javascript:alert(1)"}`, "url"},
			{"relative", `{"url":"/hooks"}`, "url"},
			{"userinfo", `{"url":"https://user:pass@ci.example.com/x"}`, "url"},
			{"no url", `{"events":["review.completed"]}`, "url"},
			{"too long", `{"url":"https://ci.example.com/` + strings.Repeat("a", 2048) + `"}`, "url"},
			{"unknown event", `{"url":"https://ci.example.com/x","events":["review.completed","review.exploded"]}`, "events"},
			{"short secret", `{"url":"https://ci.example.com/x","secret":"abc"}`, "secret"},
			{"several", `{"url":"gopher://x","events":["nope"]}`, "url,events"},
			{"unknown field", `{"url":"https://ci.example.com/x","colour":"red"}`, "colour"},
			{"wrong type", `{"url":"https://ci.example.com/x","events":"review.completed"}`, "events"},
			{"wrong type url", `{"url":42}`, "url"},
			{"not an object", `["https://ci.example.com/x"]`, "body"},
			{"not json", `{"url":`, "body"},
			{"two objects", `{"url":"https://a.example.com/"} {}`, "body"},
			{"empty", ``, "body"},
		} {
			t.Run(c.name, func(t *testing.T) {
				p := b.send(t, http.MethodPost, "/v1/webhooks", all, "application/json", []byte(c.body)).want(t, http.StatusBadRequest).problem(t, codeInvalid)
				if got := paramNames(p); got != c.want {
					t.Errorf("invalid_params %v, want %s", p.InvalidParams, c.want)
				}
			})
		}
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
			b.send(t, http.MethodPost, "/v1/webhooks", all, ct, []byte(`{"url":"https://ci.example.com/x"}`)).
				want(t, http.StatusUnsupportedMediaType).problem(t, codeUnsupportedMedia)
		}
		huge := []byte(`{"url":"https://ci.example.com/x","description":"` + strings.Repeat("d", maxBodyBytes) + `"}`)
		b.send(t, http.MethodPost, "/v1/webhooks", all, "application/json", huge).want(t, http.StatusRequestEntityTooLarge).problem(t, codeTooLarge)
		b.send(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, "application/json", huge).want(t, http.StatusRequestEntityTooLarge).problem(t, codeTooLarge)
		b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/rotate-secret", all, "application/json", huge).want(t, http.StatusRequestEntityTooLarge).problem(t, codeTooLarge)
		full := *b
		full.serve(t, func(c *Config) { c.WebhookMaxEndpoints = 1 })
		full.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{"url": "https://ci.example.com/x"}).want(t, http.StatusConflict).problem(t, codeConflict)
	})

	t.Run("get never shows the secret", func(t *testing.T) {
		r := b.get(t, "/v1/webhooks/"+hook.ID, readOnly).want(t, http.StatusOK)
		var got endpointBody
		r.json(t, &got) // strict: a secret field fails here
		if got.ID != hook.ID || got.URL != hook.URL || !got.CreatedAt.Equal(hook.CreatedAt) {
			t.Errorf("get %+v, want %+v", got, hook)
		}
		if bytes.Contains(r.body, []byte(hook.Secret)) || bytes.Contains(r.body, []byte(`"secret"`)) {
			t.Errorf("GET shows the secret: %s", r.body)
		}
		b.get(t, "/v1/webhooks/"+hook.ID, "").want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.get(t, "/v1/webhooks/"+hook.ID, none).want(t, http.StatusForbidden).problem(t, codeForbidden)
		b.get(t, "/v1/webhooks/"+missingHook, all).want(t, http.StatusNotFound).problem(t, codeNotFound)
		b.get(t, "/v1/webhooks/not-an-id", all).want(t, http.StatusNotFound).problem(t, codeNotFound)
	})

	t.Run("list", func(t *testing.T) {
		for range 3 {
			b.clock.Advance(time.Second)
			b.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{"url": "https://more.example.com/"}).want(t, http.StatusCreated)
		}
		b.sendJSON(t, http.MethodPost, "/v1/webhooks", globexAll, map[string]any{"url": "https://globex.example.com/"}).want(t, http.StatusCreated)
		var seen []endpointBody
		path := "/v1/webhooks?limit=2"
		for pages := 0; ; pages++ {
			r := b.get(t, path, readOnly).want(t, http.StatusOK)
			if bytes.Contains(r.body, []byte(`"secret"`)) {
				t.Errorf("a listing shows secrets: %s", r.body)
			}
			var page endpointPage
			r.json(t, &page)
			seen = append(seen, page.Webhooks...)
			if page.NextCursor == nil {
				break
			}
			if pages > 5 {
				t.Fatal("too many pages")
			}
			path = "/v1/webhooks?limit=2&cursor=" + *page.NextCursor
		}
		if len(seen) != 6 {
			t.Fatalf("listed %d endpoints, want acme's 6", len(seen))
		}
		for i := 1; i < len(seen); i++ {
			if seen[i].CreatedAt.After(seen[i-1].CreatedAt) {
				t.Errorf("not newest first at %d: %v after %v", i, seen[i].CreatedAt, seen[i-1].CreatedAt)
			}
		}
		for _, q := range []string{"limit=0", "limit=101", "cursor=AAAA", "limit=1&limit=2"} {
			b.get(t, "/v1/webhooks?"+q, all).want(t, http.StatusBadRequest).problem(t, codeInvalid)
		}
		// A reviews cursor does not open a webhook listing.
		var reviews reviewList
		seedReviews(t, b, b.repo, 2, 1)
		_, reader := b.token(t, acme, 0, token.ScopeReviewsRead)
		b.get(t, listPath(b.repo, "limit=1"), reader).want(t, http.StatusOK).json(t, &reviews)
		if reviews.NextCursor != nil {
			b.get(t, "/v1/webhooks?cursor="+*reviews.NextCursor, all).want(t, http.StatusBadRequest).problem(t, codeInvalid)
		}
		b.get(t, "/v1/webhooks", "").want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.get(t, "/v1/webhooks", none).want(t, http.StatusForbidden).problem(t, codeForbidden)
	})

	t.Run("patch", func(t *testing.T) {
		b.clock.Advance(time.Minute)
		var got endpointBody
		b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, map[string]any{"description": "CI, renamed"}).want(t, http.StatusOK).json(t, &got)
		if got.Description != "CI, renamed" || got.URL != hook.URL || !slices.Equal(got.Events, hook.Events) || !got.UpdatedAt.After(hook.UpdatedAt) {
			t.Errorf("patched %+v", got)
		}
		b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, map[string]any{"events": []string{}}).want(t, http.StatusOK).json(t, &got)
		if !slices.Equal(got.Events, event.Names) {
			t.Errorf("events after patching []: %v, want every event", got.Events)
		}
		b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, map[string]any{"disabled": true}).want(t, http.StatusOK).json(t, &got)
		if !got.Disabled || got.DisabledReason == nil || *got.DisabledReason != webhook.ReasonDisabledByCustomer {
			t.Errorf("paused: %+v", got)
		}
		got = endpointBody{}
		r := b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, map[string]any{"disabled": false}).want(t, http.StatusOK)
		r.json(t, &got)
		if got.Disabled || bytes.Contains(r.body, []byte("disabled_reason")) {
			t.Errorf("resumed: %s", r.body)
		}
		p := b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, map[string]any{"url": "https://u:p@x.example.com/", "events": []string{"nope"}}).
			want(t, http.StatusBadRequest).problem(t, codeInvalid)
		if paramNames(p) != "url,events" {
			t.Errorf("invalid_params %v", p.InvalidParams)
		}
		b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, map[string]any{"secret": "x"}).want(t, http.StatusBadRequest).problem(t, codeInvalid)
		b.send(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, "text/plain", []byte(`{}`)).want(t, http.StatusUnsupportedMediaType).problem(t, codeUnsupportedMedia)
		b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, "", map[string]any{}).want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, readOnly, map[string]any{}).want(t, http.StatusForbidden).problem(t, codeForbidden)
		b.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+missingHook, all, map[string]any{}).want(t, http.StatusNotFound).problem(t, codeNotFound)
	})

	t.Run("rotate secret", func(t *testing.T) {
		var r1 rotated
		res := b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/rotate-secret", all, "", nil).want(t, http.StatusOK)
		res.json(t, &r1)
		if r1.Secret == hook.Secret || !strings.HasPrefix(r1.Secret, webhook.SecretPrefix) {
			t.Errorf("rotated secret %q (was %q)", r1.Secret, hook.Secret)
		}
		if want := b.clock.Now().Add(24 * time.Hour).Truncate(time.Microsecond); r1.PreviousUntil == nil || !r1.PreviousUntil.Equal(want) {
			t.Errorf("previous secret valid until %v, want %v (the default overlap)", r1.PreviousUntil, want)
		}
		stored, err := webhook.Get(t.Context(), b.db.Reader(), acme, hook.ID)
		if err != nil || stored.Secret != r1.Secret || stored.PreviousSecret != hook.Secret {
			t.Errorf("stored secret %q previous %q (%v); want the new one and the created one", stored.Secret, stored.PreviousSecret, err)
		}
		if res.header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", res.header.Get("Cache-Control"))
		}
		if g := b.get(t, "/v1/webhooks/"+hook.ID, all); bytes.Contains(g.body, []byte(r1.Secret)) {
			t.Error("GET shows the rotated secret")
		}
		var r2 rotated
		b.sendJSON(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/rotate-secret", all, map[string]any{"overlap_seconds": 0, "secret": "a-secret-of-my-own-1234"}).
			want(t, http.StatusOK).json(t, &r2)
		if r2.Secret != "a-secret-of-my-own-1234" || r2.PreviousUntil != nil {
			t.Errorf("rotation without overlap: %+v", r2)
		}
		p := b.sendJSON(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/rotate-secret", all, map[string]any{"overlap_seconds": -1}).
			want(t, http.StatusBadRequest).problem(t, codeInvalid)
		if paramNames(p) != "overlap_seconds" {
			t.Errorf("invalid_params %v", p.InvalidParams)
		}
		b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/rotate-secret", all, "text/plain", []byte("x")).want(t, http.StatusUnsupportedMediaType).problem(t, codeUnsupportedMedia)
		b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/rotate-secret", "", "", nil).want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/rotate-secret", readOnly, "", nil).want(t, http.StatusForbidden).problem(t, codeForbidden)
		b.send(t, http.MethodPost, "/v1/webhooks/"+missingHook+"/rotate-secret", all, "", nil).want(t, http.StatusNotFound).problem(t, codeNotFound)
	})

	var ping webhook.Delivery
	t.Run("ping and deliveries", func(t *testing.T) {
		r := b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/ping", all, "", nil).want(t, http.StatusAccepted)
		r.json(t, &ping)
		if ping.EndpointID != hook.ID || ping.Event != webhook.PingEvent || ping.Status != webhook.StatusPending {
			t.Errorf("ping delivery %+v", ping)
		}
		if loc := r.header.Get("Location"); loc != "/v1/deliveries/"+ping.ID {
			t.Errorf("Location %q", loc)
		}
		b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/ping", "", "", nil).want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/ping", readOnly, "", nil).want(t, http.StatusForbidden).problem(t, codeForbidden)
		b.send(t, http.MethodPost, "/v1/webhooks/"+missingHook+"/ping", all, "", nil).want(t, http.StatusNotFound).problem(t, codeNotFound)

		// A second ping, then the first one's attempts: a 500 and a refusal.
		b.clock.Advance(time.Second)
		var second webhook.Delivery
		b.send(t, http.MethodPost, "/v1/webhooks/"+hook.ID+"/ping", all, "", nil).want(t, http.StatusAccepted).json(t, &second)
		code := 500
		recordAttempt(t, b.db, ping.ID, 1, b.clock.Now(), &code, "receiver answered 500", "oops", webhook.StatusFailed)
		recordAttempt(t, b.db, ping.ID, 2, b.clock.Now().Add(time.Minute), nil, "address 127.0.0.1 is not allowed", "", webhook.StatusDeadLettered)

		var page deliveryPage
		b.get(t, "/v1/webhooks/"+hook.ID+"/deliveries", readOnly).want(t, http.StatusOK).json(t, &page)
		if len(page.Deliveries) != 2 || page.Deliveries[0].ID != second.ID || page.Deliveries[1].ID != ping.ID || page.NextCursor != nil {
			t.Errorf("deliveries %+v, want the two pings newest first", page)
		}
		b.get(t, "/v1/webhooks/"+hook.ID+"/deliveries?limit=1", readOnly).want(t, http.StatusOK).json(t, &page)
		if len(page.Deliveries) != 1 || page.NextCursor == nil {
			t.Fatalf("first page of 1: %+v", page)
		}
		cursor := *page.NextCursor
		b.get(t, "/v1/webhooks/"+hook.ID+"/deliveries?limit=1&cursor="+cursor, readOnly).want(t, http.StatusOK).json(t, &page)
		if len(page.Deliveries) != 1 || page.Deliveries[0].ID != ping.ID || page.NextCursor != nil {
			t.Errorf("second page of 1: %+v", page)
		}
		// The cursor belongs to its listing: not another status's.
		b.get(t, "/v1/webhooks/"+hook.ID+"/deliveries?status=pending&cursor="+cursor, readOnly).want(t, http.StatusBadRequest).problem(t, codeInvalid)
		b.get(t, "/v1/webhooks/"+hook.ID+"/deliveries?status=dead_lettered", readOnly).want(t, http.StatusOK).json(t, &page)
		if len(page.Deliveries) != 1 || page.Deliveries[0].ID != ping.ID || page.Deliveries[0].Status != webhook.StatusDeadLettered {
			t.Errorf("dead letters %+v", page)
		}
		p := b.get(t, "/v1/webhooks/"+hook.ID+"/deliveries?status=lost&limit=0", readOnly).want(t, http.StatusBadRequest).problem(t, codeInvalid)
		if paramNames(p) != "limit,status" {
			t.Errorf("invalid_params %v", p.InvalidParams)
		}
		b.get(t, "/v1/webhooks/"+hook.ID+"/deliveries", "").want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.get(t, "/v1/webhooks/"+hook.ID+"/deliveries", none).want(t, http.StatusForbidden).problem(t, codeForbidden)
		b.get(t, "/v1/webhooks/"+missingHook+"/deliveries", all).want(t, http.StatusNotFound).problem(t, codeNotFound)

		var got deliveryBody
		b.get(t, "/v1/deliveries/"+ping.ID, readOnly).want(t, http.StatusOK).json(t, &got)
		if got.ID != ping.ID || got.Attempts != 2 || len(got.AttemptLog) != 2 || got.AttemptLog[0].StatusCode == nil || *got.AttemptLog[0].StatusCode != 500 ||
			got.AttemptLog[0].ResponseBody != "oops" || got.AttemptLog[1].StatusCode != nil || got.AttemptLog[1].LatencyMS != 12.345 {
			t.Errorf("delivery %+v", got)
		}
		if !bytes.Contains(b.get(t, "/v1/deliveries/"+second.ID, readOnly).body, []byte(`"attempt_log":[]`)) {
			t.Error("a delivery without attempts must carry attempt_log: []")
		}
		b.get(t, "/v1/deliveries/"+ping.ID, "").want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.get(t, "/v1/deliveries/"+ping.ID, none).want(t, http.StatusForbidden).problem(t, codeForbidden)
		b.get(t, "/v1/deliveries/"+missingDelivery, all).want(t, http.StatusNotFound).problem(t, codeNotFound)

		b.clock.Advance(time.Hour)
		var again webhook.Delivery
		r = b.send(t, http.MethodPost, "/v1/deliveries/"+ping.ID+"/redeliver", all, "", nil).want(t, http.StatusAccepted)
		r.json(t, &again)
		if again.ID != ping.ID || again.Status != webhook.StatusPending {
			t.Errorf("redelivered %+v, want the same delivery id, pending", again)
		}
		b.send(t, http.MethodPost, "/v1/deliveries/"+ping.ID+"/redeliver", "", "", nil).want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.send(t, http.MethodPost, "/v1/deliveries/"+ping.ID+"/redeliver", readOnly, "", nil).want(t, http.StatusForbidden).problem(t, codeForbidden)
		b.send(t, http.MethodPost, "/v1/deliveries/"+missingDelivery+"/redeliver", all, "", nil).want(t, http.StatusNotFound).problem(t, codeNotFound)
	})

	t.Run("delete", func(t *testing.T) {
		var doomed created
		b.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{"url": "https://doomed.example.com/"}).want(t, http.StatusCreated).json(t, &doomed)
		var waiting webhook.Delivery
		b.send(t, http.MethodPost, "/v1/webhooks/"+doomed.ID+"/ping", all, "", nil).want(t, http.StatusAccepted).json(t, &waiting)
		b.do(t, http.MethodDelete, "/v1/webhooks/"+doomed.ID).want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
		b.do(t, http.MethodDelete, "/v1/webhooks/"+doomed.ID, "Authorization", "Bearer "+readOnly).want(t, http.StatusForbidden).problem(t, codeForbidden)
		r := b.do(t, http.MethodDelete, "/v1/webhooks/"+doomed.ID, "Authorization", "Bearer "+all).want(t, http.StatusNoContent)
		if len(r.body) != 0 {
			t.Errorf("204 with a body: %s", r.body)
		}
		b.do(t, http.MethodDelete, "/v1/webhooks/"+doomed.ID, "Authorization", "Bearer "+all).want(t, http.StatusNotFound).problem(t, codeNotFound)
		b.get(t, "/v1/webhooks/"+doomed.ID, all).want(t, http.StatusNotFound).problem(t, codeNotFound)
		b.get(t, "/v1/webhooks/"+doomed.ID+"/deliveries", all).want(t, http.StatusNotFound).problem(t, codeNotFound)
		b.send(t, http.MethodPost, "/v1/webhooks/"+doomed.ID+"/ping", all, "", nil).want(t, http.StatusNotFound).problem(t, codeNotFound)
		// One truth: a deleted endpoint's delivery is gone with it, to
		// reading as to redelivery, and no next attempt is due.
		b.get(t, "/v1/deliveries/"+waiting.ID, all).want(t, http.StatusNotFound).problem(t, codeNotFound)
		b.send(t, http.MethodPost, "/v1/deliveries/"+waiting.ID+"/redeliver", all, "", nil).want(t, http.StatusNotFound).problem(t, codeNotFound)
		var status string
		var next *int64
		if err := b.db.Reader().QueryRow(t.Context(), `SELECT status, next_attempt_at FROM webhook_deliveries WHERE id = $1`, waiting.ID).Scan(&status, &next); err != nil {
			t.Fatal(err)
		}
		if status != webhook.StatusDeadLettered || next != nil {
			t.Errorf("a deleted endpoint's waiting delivery is %s, next attempt %v; want dead_lettered, none", status, next)
		}
	})

	t.Run("rate limited", func(t *testing.T) {
		tight := *b
		tight.serve(t, func(c *Config) { c.RateLimit = 1 })
		for _, rt := range webhookRoutes(hook.ID, ping.ID) {
			_, secret := tight.token(t, acme, 0, token.ScopeWebhooksRead, token.ScopeWebhooksWrite)
			tight.get(t, "/v1/webhooks?limit=1", secret).want(t, http.StatusOK)
			tight.send(t, rt.method, rt.path, secret, rt.contentType(), []byte(rt.body)).want(t, http.StatusTooManyRequests).problem(t, codeRateLimited)
		}
	})

	t.Run("database closed", func(t *testing.T) {
		closed := setup(t, open)
		closed.cover = b.cover
		withJobs(t, closed.db)
		secret, _, _ := webhookTokens(t, closed, closed.repo.AccountID)
		var h created
		closed.sendJSON(t, http.MethodPost, "/v1/webhooks", secret, map[string]any{"url": "https://x.example.com/"}).want(t, http.StatusCreated).json(t, &h)
		var d webhook.Delivery
		closed.send(t, http.MethodPost, "/v1/webhooks/"+h.ID+"/ping", secret, "", nil).want(t, http.StatusAccepted).json(t, &d)
		closed.db.Close()
		for _, rt := range webhookRoutes(h.ID, d.ID) {
			wantInternal(t, closed, closed.send(t, rt.method, rt.path, secret, rt.contentType(), []byte(rt.body)), "")
		}
	})
}

// webhookRoute is one request to each webhook operation, valid but for
// what the test breaks.
type webhookRoute struct {
	method, path, body string
}

func (r webhookRoute) contentType() string {
	if r.body == "" {
		return ""
	}
	return "application/json"
}

func webhookRoutes(hookID, deliveryID string) []webhookRoute {
	return []webhookRoute{
		{http.MethodPost, "/v1/webhooks", `{"url":"https://x.example.com/"}`},
		{http.MethodGet, "/v1/webhooks", ""},
		{http.MethodGet, "/v1/webhooks/" + hookID, ""},
		{http.MethodPatch, "/v1/webhooks/" + hookID, `{"description":"d"}`},
		{http.MethodPost, "/v1/webhooks/" + hookID + "/rotate-secret", ""},
		{http.MethodPost, "/v1/webhooks/" + hookID + "/ping", ""},
		{http.MethodGet, "/v1/webhooks/" + hookID + "/deliveries", ""},
		{http.MethodGet, "/v1/deliveries/" + deliveryID, ""},
		{http.MethodPost, "/v1/deliveries/" + deliveryID + "/redeliver", ""},
		{http.MethodDelete, "/v1/webhooks/" + hookID, ""},
	}
}

// TestWebhookTenancy asks for another account's endpoint and delivery
// through every operation: each is a 404 exactly like a missing one, and
// changes nothing.
func TestWebhookTenancy(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		{
			b := setup(t, be.Open)
			withJobs(t, b.db)
			acmeAll, _, _ := webhookTokens(t, b, b.repo.AccountID)
			globexAll, _, _ := webhookTokens(t, b, b.other.AccountID)
			var theirs created
			b.sendJSON(t, http.MethodPost, "/v1/webhooks", globexAll, map[string]any{"url": "https://globex.example.com/"}).want(t, http.StatusCreated).json(t, &theirs)
			var delivery webhook.Delivery
			b.send(t, http.MethodPost, "/v1/webhooks/"+theirs.ID+"/ping", globexAll, "", nil).want(t, http.StatusAccepted).json(t, &delivery)
			missingHook, missingDelivery := id.New(id.Endpoint, b.clock.Now()), id.New(id.Delivery, b.clock.Now())

			foreign, missing := webhookRoutes(theirs.ID, delivery.ID), webhookRoutes(missingHook, missingDelivery)
			for i := range foreign {
				if foreign[i].path == "/v1/webhooks" {
					continue
				}
				f := b.send(t, foreign[i].method, foreign[i].path, acmeAll, foreign[i].contentType(), []byte(foreign[i].body)).want(t, http.StatusNotFound).problem(t, codeNotFound)
				m := b.send(t, missing[i].method, missing[i].path, acmeAll, missing[i].contentType(), []byte(missing[i].body)).want(t, http.StatusNotFound).problem(t, codeNotFound)
				f.RequestID, m.RequestID = "", ""
				f.Detail = strings.NewReplacer(theirs.ID, "<id>", delivery.ID, "<id>").Replace(f.Detail)
				m.Detail = strings.NewReplacer(missingHook, "<id>", missingDelivery, "<id>").Replace(m.Detail)
				if !reflect.DeepEqual(f, m) {
					t.Errorf("%s %s: another account's gives %+v, a missing one %+v", foreign[i].method, foreign[i].path, f, m)
				}
			}
			var page endpointPage
			b.get(t, "/v1/webhooks", acmeAll).want(t, http.StatusOK).json(t, &page)
			if len(page.Webhooks) != 0 {
				t.Errorf("acme lists globex's endpoints: %+v", page.Webhooks)
			}
			// Nothing of globex's changed.
			var got endpointBody
			b.get(t, "/v1/webhooks/"+theirs.ID, globexAll).want(t, http.StatusOK).json(t, &got)
			if !got.UpdatedAt.Equal(theirs.UpdatedAt) || got.Description != theirs.Description {
				t.Errorf("globex's endpoint changed: %+v", got)
			}
			stored, err := webhook.Get(t.Context(), b.db.Reader(), b.other.AccountID, theirs.ID)
			if err != nil || stored.Secret != theirs.Secret {
				t.Errorf("globex's secret changed: %v", err)
			}
		}
	})
}
