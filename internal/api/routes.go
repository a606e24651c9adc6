package api

import (
	"net/http"
	"strings"

	"github.com/quorum-review/quorum/internal/metrics"
	"github.com/quorum-review/quorum/internal/token"
)

// routes lists the whole HTTP surface; each /v1 route shows its scope.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	// Each route tells the HTTP metrics its pattern (the path's, without
	// the method, which they count apart).
	handle := func(pattern string, h http.Handler) {
		route := pattern
		if _, path, ok := strings.Cut(pattern, " "); ok {
			route = path
		}
		mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			metrics.SetRoute(r, route)
			h.ServeHTTP(w, r)
		}))
	}
	handle("GET /v1/reviews", s.need(token.ScopeReviewsRead, s.listReviews()))
	handle("GET /v1/reviews/{id}", s.need(token.ScopeReviewsRead, s.getReview()))
	handle("GET /v1/findings/{id}", s.need(token.ScopeFindingsRead, s.getFinding()))
	handle("POST /v1/webhooks", s.need(token.ScopeWebhooksWrite, s.createWebhook()))
	handle("GET /v1/webhooks", s.need(token.ScopeWebhooksRead, s.listWebhooks()))
	handle("GET /v1/webhooks/{id}", s.need(token.ScopeWebhooksRead, s.getWebhook()))
	handle("PATCH /v1/webhooks/{id}", s.need(token.ScopeWebhooksWrite, s.updateWebhook()))
	handle("DELETE /v1/webhooks/{id}", s.need(token.ScopeWebhooksWrite, s.deleteWebhook()))
	handle("POST /v1/webhooks/{id}/rotate-secret", s.need(token.ScopeWebhooksWrite, s.rotateWebhookSecret()))
	handle("POST /v1/webhooks/{id}/ping", s.need(token.ScopeWebhooksWrite, s.pingWebhook()))
	handle("GET /v1/webhooks/{id}/deliveries", s.need(token.ScopeWebhooksRead, s.listDeliveries()))
	handle("GET /v1/deliveries/{id}", s.need(token.ScopeWebhooksRead, s.getDelivery()))
	handle("POST /v1/deliveries/{id}/redeliver", s.need(token.ScopeWebhooksWrite, s.redeliver()))
	handle("GET /v1/openapi.json", s.serveOpenAPI())

	handle("GET /healthz", s.healthz())
	handle("GET /readyz", s.readyz())
	handle("GET /docs", http.RedirectHandler("/docs/api/errors", http.StatusFound))
	handle("GET /docs/api/errors", s.errorsPage())
	if s.cfg.Dashboard != nil {
		handle("GET /{$}", http.RedirectHandler("/dashboard/", http.StatusFound))
		handle("/dashboard/", s.cfg.Dashboard)
	}

	// Everything else: 405 with Allow when the path exists under another
	// method, else 404 — both as problem+json, never the mux's plain text.
	mux.Handle("/", s.unrouted(mux))

	return s.observe(s.authenticate(s.rateLimit(mux)))
}

// probeMethods are tried to tell a 405 from a 404.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

func (s *Server) unrouted(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range probeMethods {
			if m == r.Method {
				continue
			}
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeError(w, r, errorf(codeMethodNotAllowed, "%s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		s.writeError(w, r, errorf(codeNotFound, "No endpoint at %s.", r.URL.Path))
	})
}
