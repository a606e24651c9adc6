package api

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/storetest"
)

// Registration refuses what it used to take loosely, on both databases:
// duplicate keys, invalid UTF-8 (raw or as a lone surrogate escape), NUL,
// an empty secret, a port out of range, a charset other than UTF-8, and
// literal loopback or private addresses without --webhook-allow-private
// (a host name is not resolved: localhost is accepted, and refused when
// delivered to). The same text rules hold for PATCH and rotate-secret.
func TestRegistrationValidation(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		withJobs(t, b.db)
		all, _, _ := webhookTokens(t, b, b.repo.AccountID)
		const ok = `"url":"https://ci.example.com/hook"`
		for _, tc := range []struct {
			name, body, want string
		}{
			{"duplicate key", `{"url":"https://a.example.com/","url":"https://b.example.com/"}`, "url"},
			{"duplicate nested after array", `{"events":["review.completed"],` + ok + `,"events":[]}`, "events"},
			{"invalid UTF-8", `{` + ok + `,"description":"caf` + "\xff" + `"}`, "body"},
			{"lone surrogate", `{` + ok + `,"description":"a\ud800b"}`, "body"},
			{"NUL description", `{` + ok + `,"description":"a\u0000b"}`, "description"},
			{"NUL secret", `{` + ok + `,"secret":"0123456789abcdef\u0000"}`, "secret"},
			{"empty secret", `{` + ok + `,"secret":""}`, "secret"},
			{"port 99999", `{"url":"https://ci.example.com:99999/hook"}`, "url"},
			{"port 0", `{"url":"https://ci.example.com:0/hook"}`, "url"},
			{"loopback", `{"url":"http://127.0.0.1:8080/hook"}`, "url"},
			{"loopback v6", `{"url":"http://[::1]/hook"}`, "url"},
			{"private", `{"url":"https://10.1.2.3/hook"}`, "url"},
			{"link-local metadata", `{"url":"http://169.254.169.254/latest"}`, "url"},
			{"mapped loopback", `{"url":"http://[::ffff:127.0.0.1]/"}`, "url"},
			{"mapped private", `{"url":"http://[::ffff:10.0.0.1]/"}`, "url"},
			{"NAT64 metadata", `{"url":"http://[64:ff9b::a9fe:a9fe]/"}`, "url"},
		} {
			p := b.send(t, http.MethodPost, "/v1/webhooks", all, "application/json", []byte(tc.body)).
				want(t, http.StatusBadRequest).problem(t, codeInvalid)
			if got := paramNames(p); got != tc.want {
				t.Errorf("%s: invalid_params %v, want %s", tc.name, p.InvalidParams, tc.want)
			}
		}
		b.send(t, http.MethodPost, "/v1/webhooks", all, "application/json; charset=utf-16", []byte(`{`+ok+`}`)).
			want(t, http.StatusUnsupportedMediaType).problem(t, codeUnsupportedMedia)
		b.send(t, http.MethodPost, "/v1/webhooks", all, "application/json; charset=UTF-8", []byte(`{`+ok+`,"description":"caf\u00e9 \ud83d\ude00"}`)).
			want(t, http.StatusCreated)

		b.send(t, http.MethodPost, "/v1/webhooks", all, "application/json", []byte(`{"url":"http://localhost:9000/hook"}`)).
			want(t, http.StatusCreated)

		var hook created
		b.send(t, http.MethodPost, "/v1/webhooks", all, "application/json", []byte(`{`+ok+`}`)).want(t, http.StatusCreated).json(t, &hook)
		for _, tc := range []struct{ method, path, body, want string }{
			{http.MethodPatch, "/v1/webhooks/" + hook.ID, `{"description":"a\u0000b"}`, "description"},
			{http.MethodPatch, "/v1/webhooks/" + hook.ID, `{"url":"http://127.0.0.1/x"}`, "url"},
			{http.MethodPatch, "/v1/webhooks/" + hook.ID, `{"description":"x","description":"y"}`, "description"},
			{http.MethodPost, "/v1/webhooks/" + hook.ID + "/rotate-secret", `{"secret":"0123456789abcdef\u0000"}`, "secret"},
			{http.MethodPost, "/v1/webhooks/" + hook.ID + "/rotate-secret", `{"secret":""}`, "secret"},
		} {
			p := b.send(t, tc.method, tc.path, all, "application/json", []byte(tc.body)).want(t, http.StatusBadRequest).problem(t, codeInvalid)
			if got := paramNames(p); got != tc.want {
				t.Errorf("%s %s %s: invalid_params %v, want %s", tc.method, tc.path, tc.body, p.InvalidParams, tc.want)
			}
		}

		// With the operator's flag, loopback receivers are accepted (tests
		// and development).
		open := *b
		open.serve(t, func(c *Config) { c.WebhookAllowPrivate = true })
		open.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{"url": "http://127.0.0.1:8080/hook"}).want(t, http.StatusCreated)
		open.sendJSON(t, http.MethodPatch, "/v1/webhooks/"+hook.ID, all, map[string]any{"url": "http://localhost:8080/hook"}).want(t, http.StatusOK)
	})
}

// An account may have --webhook-max-endpoints live endpoints; past that a
// registration is a 409, also when many race for the last places. Deleting
// one makes room.
func TestEndpointLimit(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open, func(c *Config) { c.WebhookMaxEndpoints = 5 })
		withJobs(t, b.db)
		all, _, _ := webhookTokens(t, b, b.repo.AccountID)
		var first created
		b.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{"url": "https://ci.example.com/0"}).want(t, http.StatusCreated).json(t, &first)
		var wg sync.WaitGroup
		codes := make(chan int, 10)
		for range 10 {
			wg.Go(func() {
				codes <- b.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{"url": "https://ci.example.com/n"}).status
			})
		}
		wg.Wait()
		close(codes)
		created, refused := 0, 0
		for c := range codes {
			switch c {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
				refused++
			default:
				t.Errorf("status %d", c)
			}
		}
		if created != 4 || refused != 6 {
			t.Fatalf("10 concurrent registrations with 4 places left: %d created, %d refused", created, refused)
		}
		p := b.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{"url": "https://ci.example.com/x"}).want(t, http.StatusConflict).problem(t, codeConflict)
		if !strings.Contains(p.Detail, "5 webhook endpoints") {
			t.Errorf("detail %q", p.Detail)
		}
		// Another account has its own places.
		globex, _, _ := webhookTokens(t, b, b.other.AccountID)
		b.sendJSON(t, http.MethodPost, "/v1/webhooks", globex, map[string]any{"url": "https://globex.example.com/"}).want(t, http.StatusCreated)
		b.do(t, http.MethodDelete, "/v1/webhooks/"+first.ID, "Authorization", "Bearer "+all).want(t, http.StatusNoContent)
		b.sendJSON(t, http.MethodPost, "/v1/webhooks", all, map[string]any{"url": "https://ci.example.com/y"}).want(t, http.StatusCreated)
	})
}
