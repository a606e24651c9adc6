package dashboard

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/token"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages holds one template set per page: the layout, the shared parts
// (templates/_*.html) and the page's own "content" block.
type pages map[string]*template.Template

var funcs = template.FuncMap{
	"asset": assetPath,
	// when is a time as people read it; iso is the same for <time datetime>.
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"short": func(sha string) string {
		if len(sha) > 12 {
			return sha[:12]
		}
		return sha
	},
	"join": strings.Join,
}

func parsePages() (pages, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/_*.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: layout: %w", err)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := pages{}
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".html")
		if base == "layout" || strings.HasPrefix(base, "_") {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, name)
		if err != nil {
			return nil, fmt.Errorf("dashboard: page %s: %w", base, err)
		}
		p[base] = t
	}
	return p, nil
}

// view is what every page's template sees: the page's own data in Data,
// and what the layout needs.
type view struct {
	Title     string
	Signed    bool
	CSRF      string
	Version   string
	RequestID string
	scopes    []string
	Data      any
}

// Can reports whether the signed-in token holds scope, to show only the
// links and buttons it may use.
func (v view) Can(scope string) bool {
	return token.Principal{Scopes: v.scopes}.Has(scope)
}

// render writes page name with data; sess is nil on signed-out pages.
// The page is rendered to a buffer first, so a template failure is an
// error page, never half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, sess *session, title string, data any) {
	t, ok := s.pages[name]
	if !ok {
		s.renderError(w, r, sess, fmt.Errorf("dashboard: no page template %q", name))
		return
	}
	v := view{Title: title, Version: s.cfg.Version, RequestID: w.Header().Get("X-Request-Id"), Data: data}
	if sess != nil {
		v.Signed, v.CSRF, v.scopes = true, sess.csrf, sess.principal.Scopes
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		if name == "error" {
			// The error page itself failed: plain text, never a loop.
			http.Error(w, "The dashboard failed to render this page. Quote the request id "+v.RequestID+" when reporting it.", http.StatusInternalServerError)
			s.log.LogAttrs(r.Context(), slog.LevelError, "dashboard error page failed", slog.String("error", err.Error()))
			return
		}
		s.renderError(w, r, sess, fmt.Errorf("dashboard: render %s: %w", name, err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorView is an error page: the API's problem type, shown to people.
type errorView struct {
	api.ProblemType
	Detail  string
	TypeURL string
}

// renderError shows err as the API's problem type for its status. An error
// that is not a pageError is logged and shown only as an internal error.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, sess *session, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the browser went away
	}
	var pe *pageError
	if !errors.As(err, &pe) {
		s.log.LogAttrs(r.Context(), slog.LevelError, "dashboard internal error",
			slog.String("request_id", w.Header().Get("X-Request-Id")),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
		pe = &pageError{Status: http.StatusInternalServerError,
			Detail: "The server failed to show this page. Quote the request id below when reporting it."}
	}
	pt := api.ProblemTypeFor(pe.Status)
	if pe.Title != "" {
		pt.Title, pt.Explain = pe.Title, pe.Explain
	}
	s.render(w, r, pe.Status, "error", sess, pt.Title, errorView{
		ProblemType: pt,
		Detail:      pe.Detail,
		TypeURL:     s.cfg.DocsURL + "/api/errors#" + pt.Code,
	})
}

// ServeProblem shows an error the API's middleware answered a dashboard
// request with (the rate limit, a panic, headers too large) as a page.
func (s *Server) ServeProblem(w http.ResponseWriter, r *http.Request, status int, detail string) {
	secureHeaders(w.Header())
	s.renderError(w, r, nil, &pageError{Status: status, Detail: detail})
}
