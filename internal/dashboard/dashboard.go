// Package dashboard serves quorum's web dashboard: reviews, findings and
// webhook endpoints for people, in the browser. Pages are rendered on the
// server with html/template and work without JavaScript; one small
// embedded script adds conveniences (copying a secret). A personal access
// token is exchanged for a session kept in the store; the token's scopes
// decide what a page shows and what a form may do, exactly as in the API.
package dashboard

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

// Prefix is where the dashboard is served; the API leaves every path under
// it to the dashboard.
const Prefix = "/dashboard/"

// DefaultSessionTTL is how long a sign-in lasts when Config says nothing.
const DefaultSessionTTL = 12 * time.Hour

// Config holds the dashboard's settings.
type Config struct {
	// SecureCookies marks the session cookie Secure and gives it the
	// __Host- prefix: set it when the dashboard is reached over TLS.
	SecureCookies bool
	// SessionTTL bounds a sign-in (DefaultSessionTTL when 0); a session
	// also ends when its token expires or is revoked.
	SessionTTL time.Duration
	// DocsURL prefixes the problem type links of error pages, as the API's.
	DocsURL string
	// Version is shown in the footer.
	Version string
	// PlatformURLs maps an account's platform (account.PlatformGitHub, …)
	// to the web address pull requests are linked on, e.g.
	// "https://github.com"; a platform missing here gets no links.
	PlatformURLs map[string]string
	// WebhookPolicy and WebhookMaxEndpoints are the API's rules for
	// endpoints; the dashboard's forms follow the same.
	WebhookPolicy       webhook.Policy
	WebhookMaxEndpoints int
}

// Server is the dashboard's HTTP handler.
type Server struct {
	cfg      Config
	db       *store.DB
	tokens   *token.Store
	reviews  *review.Store
	sessions *sessions
	log      *slog.Logger
	now      func() time.Time
	pages    pages
	handler  http.Handler
	patterns []string
}

// New builds the dashboard over the store; tokens authenticates sign-ins.
func New(cfg Config, db *store.DB, tokens *token.Store, log *slog.Logger, now func() time.Time) (*Server, error) {
	cfg.SessionTTL = cmp.Or(cfg.SessionTTL, DefaultSessionTTL)
	cfg.WebhookMaxEndpoints = cmp.Or(cfg.WebhookMaxEndpoints, webhook.DefaultMaxEndpoints)
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		db:       db,
		tokens:   tokens,
		reviews:  review.NewStore(db),
		sessions: &sessions{db: db, now: now, ttl: cfg.SessionTTL},
		log:      log,
		now:      now,
		pages:    p,
	}
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP serves the dashboard.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// contentSecurityPolicy allows only the dashboard's own script, style and
// images: no inline script or style, no framing, forms only to itself.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the security headers of every dashboard response.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// routes lists the dashboard's pages. Every state change is a POST from
// a form; cross-origin POSTs are refused before any handler runs (Go's
// CrossOriginProtection reads Sec-Fetch-Site and Origin), and a signed-in
// form must also carry its session's CSRF token.
func (s *Server) routes() http.Handler {
	mux := &routeMux{ServeMux: http.NewServeMux()}
	mux.Handle("GET "+Prefix+"assets/{name}", serveAsset())
	mux.Handle("GET "+Prefix+"sign-in", http.HandlerFunc(s.signInPage))
	mux.Handle("POST "+Prefix+"sign-in", http.HandlerFunc(s.signIn))
	mux.Handle("POST "+Prefix+"sign-out", s.page("", s.signOut))
	mux.Handle("GET "+Prefix+"{$}", s.page("", s.home))
	mux.Handle("GET "+Prefix+"repositories", s.page(token.ScopeReviewsRead, s.repositories))
	mux.Handle("GET "+Prefix+"insights", s.page(token.ScopeReviewsRead, s.insights))
	s.reviewRoutes(mux)
	s.webhookRoutes(mux)
	mux.ServeMux.Handle(Prefix, s.page("", func(w http.ResponseWriter, r *http.Request, _ *session) error {
		return notFound("There is no dashboard page at %s.", r.URL.Path)
	}))
	s.patterns = mux.patterns

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, nil, &pageError{Status: http.StatusForbidden, Title: "cross-site form refused",
			Explain: "The dashboard takes forms only from its own pages: a form another site sends in your browser's name is refused.",
			Detail:  "The form was sent from another site, so it was refused. Open the dashboard and send it from there."})
	}))
	return secure(cop.Handler(mux))
}

// routeMux is a ServeMux that remembers the patterns it was given, for
// Routes.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// Routes lists the dashboard's routes ("GET /dashboard/reviews/{id}"), for
// the documents that must name them (the OpenAPI description,
// docs/dashboard.md).
func (s *Server) Routes() []string { return slices.Clone(s.patterns) }

// pageError is an error a page shows as it is, with its HTTP status.
type pageError struct {
	Status int
	Detail string
	// Title and Explain, when set, replace those of the API's problem type
	// for the status, where the API's would mislead (a stale form is a
	// 403, but not a missing scope).
	Title, Explain string
}

func (e *pageError) Error() string { return e.Detail }

func notFound(format string, args ...any) error {
	return &pageError{Status: http.StatusNotFound, Detail: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return &pageError{Status: http.StatusBadRequest, Detail: fmt.Sprintf(format, args...)}
}

// handlerFunc is a page of a signed-in user.
type handlerFunc func(w http.ResponseWriter, r *http.Request, sess *session) error

// page runs h for a signed-in session holding scope ("": any session). A
// browser without a session is sent to sign in and back; a POST must carry
// the session's CSRF token.
func (s *Server) page(scope string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		sess, err := s.sessionOf(r)
		if errors.Is(err, errNoSession) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, Prefix+"sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			s.renderError(w, r, nil, &pageError{Status: http.StatusUnauthorized, Title: "not signed in",
				Explain: "A dashboard session ends on sign-out, when its token is revoked or expires, and after --dashboard-session-ttl.",
				Detail:  "You are not signed in (the session ended, or its token was revoked). Sign in and send the form again."})
			return
		}
		if err != nil {
			s.renderError(w, r, nil, err)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := readForm(r); err != nil {
				s.renderError(w, r, sess, err)
				return
			}
			if !sess.validCSRF(r.PostForm.Get("csrf")) {
				s.renderError(w, r, sess, &pageError{Status: http.StatusForbidden, Title: "form expired",
					Explain: "Each form carries a token of the session that showed it, so that no other page can send it in your name; a form from before a sign-in, or from another session, is refused.",
					Detail:  "The form's security token is missing or stale. Reload the page and send the form again."})
				return
			}
		}
		if scope != "" && !sess.principal.Has(scope) {
			s.renderError(w, r, sess, &pageError{Status: http.StatusForbidden,
				Detail: fmt.Sprintf("Your token lacks the %q scope this page needs. Sign in with a token that has it.", scope)})
			return
		}
		if err := h(w, r, sess); err != nil {
			s.renderError(w, r, sess, err)
		}
	})
}

// readForm parses a posted form, or says why it cannot be read: a body
// past maxFormBytes is a 413, anything else unreadable a 400, never a
// "stale security token" that would send people to reload in vain.
func readForm(r *http.Request) error {
	err := r.ParseForm()
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &pageError{Status: http.StatusRequestEntityTooLarge,
			Detail: fmt.Sprintf("The form is larger than %d KiB, more than any dashboard form needs. Shorten what you typed and send it again.", maxFormBytes>>10)}
	}
	return badRequest("The form could not be read (%v). Send it from the dashboard's own page.", err)
}

// maxFormBytes bounds a form's body: the largest form (an endpoint) holds
// a URL, a description and a few event names.
const maxFormBytes = 64 << 10

// home leads to the first page the token may see.
func (s *Server) home(w http.ResponseWriter, r *http.Request, sess *session) error {
	switch {
	case sess.principal.Has(token.ScopeReviewsRead):
		http.Redirect(w, r, Prefix+"repositories", http.StatusSeeOther)
	case sess.principal.Has(token.ScopeWebhooksRead):
		http.Redirect(w, r, Prefix+"webhooks", http.StatusSeeOther)
	default:
		return &pageError{Status: http.StatusForbidden,
			Detail: "Your token has none of the scopes the dashboard shows (reviews:read, webhooks:read). Sign in with a token that has one."}
	}
	return nil
}

// safeNext is where to go after signing in: a dashboard path of this
// site, never another site (an open redirect). The path must stay under
// Prefix once its dot segments are resolved, as http.Redirect and
// browsers resolve them; and it may hold no backslash, space or control
// character, which browsers drop or read as "/" (so that
// "/dashboard/../\t/evil.example" would become "//evil.example"), and
// which make a broken Location header.
func safeNext(next string) string {
	p, _, _ := strings.Cut(next, "?")
	p, _, _ = strings.Cut(p, "#")
	if !strings.HasPrefix(next, Prefix) || !strings.HasPrefix(path.Clean(p)+"/", Prefix) ||
		strings.ContainsFunc(next, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) {
		return Prefix
	}
	return next
}
