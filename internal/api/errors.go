package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// Problem types: the anchor on {docs_url}/api/errors of each error code.
const (
	codeInvalid          = "invalid-request"
	codeUnauthorized     = "unauthorized"
	codeForbidden        = "forbidden"
	codeNotFound         = "not-found"
	codeMethodNotAllowed = "method-not-allowed"
	codeConflict         = "conflict"
	codeTooLarge         = "payload-too-large"
	codeUnsupportedMedia = "unsupported-media-type"
	codeRateLimited      = "rate-limited"
	codeHeadersTooLarge  = "headers-too-large"
	codeInternal         = "internal"
	codeUnavailable      = "unavailable"
)

// problemTypes is the one table from error code to status and title; the
// docs page is generated from it too.
var problemTypes = []struct {
	code, title, explain string
	status               int
}{
	{codeInvalid, "invalid request", "A parameter is missing or has a value the endpoint does not accept. `invalid_params` lists each one with the reason; fix them and send the request again.", http.StatusBadRequest},
	{codeUnauthorized, "invalid PAT", "The request carries no personal access token, or one that is malformed, unknown, expired or revoked. Send `Authorization: Bearer qrm_…` with a current token; `quorum token create` issues one.", http.StatusUnauthorized},
	{codeForbidden, "missing scope", "The token is valid but lacks the scope the endpoint requires; `detail` names it. Issue a token with that scope.", http.StatusForbidden},
	{codeNotFound, "not found", "No such resource, or it belongs to an account the token may not see: the two are deliberately indistinguishable.", http.StatusNotFound},
	{codeMethodNotAllowed, "method not allowed", "The path exists but not with this method. The `Allow` header lists the methods it accepts.", http.StatusMethodNotAllowed},
	{codeConflict, "conflict", "The request cannot be carried out in the resource's present state: for example, the account already has as many webhook endpoints as the operator allows (`quorum serve --webhook-max-endpoints`). `detail` says which; delete one to register another.", http.StatusConflict},
	{codeTooLarge, "payload too large", "The request body is larger than the endpoint accepts.", http.StatusRequestEntityTooLarge},
	{codeUnsupportedMedia, "unsupported media type", "The request body must be `application/json`, in UTF-8 (a `charset` parameter, when given, must be `utf-8`).", http.StatusUnsupportedMediaType},
	{codeHeadersTooLarge, "request headers too large", "The request line and headers together are larger than the API accepts (64 KiB). Past 1 MiB the server refuses them before quorum sees them, with a plain-text 431 rather than this document.", http.StatusRequestHeaderFieldsTooLarge},
	{codeRateLimited, "rate limit exceeded", "Too many requests for this token (or, without one, this client address) in the current window. Wait `Retry-After` seconds; `RateLimit-Remaining` and `RateLimit-Reset` on every response help stay under the limit.", http.StatusTooManyRequests},
	{codeInternal, "internal error", "Something failed on the server. Nothing about it is shown here; the `request_id` finds it in the server's log. Retry with exponential backoff.", http.StatusInternalServerError},
	{codeUnavailable, "service unavailable", "The service cannot serve requests now (its database is unreachable or its schema is not current). Retry later.", http.StatusServiceUnavailable},
}

// Error is an API error: a problem code, a message safe to show, and for
// invalid requests the parameters at fault.
type Error struct {
	Code   string
	Detail string
	Params []InvalidParam
	// Title overrides the code's title (e.g. "missing token").
	Title string
}

// InvalidParam is one rejected request parameter.
type InvalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Detail) }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ProblemPager is a handler mounted in the API (the dashboard) that shows
// the API's own errors on its paths to people, as pages.
type ProblemPager interface {
	ServeProblem(w http.ResponseWriter, r *http.Request, status int, detail string)
}

// problem is the RFC 9457 body.
type problem struct {
	Type          string         `json:"type"`
	Title         string         `json:"title"`
	Status        int            `json:"status"`
	Detail        string         `json:"detail"`
	RequestID     string         `json:"request_id,omitempty"`
	InvalidParams []InvalidParam `json:"invalid_params,omitempty"`
}

// writeError turns any error into problem+json. Errors that are not *Error
// are internal: logged with the request id, shown as a bare 500.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
		// The client went away; nobody reads this response.
		s.log.LogAttrs(r.Context(), slog.LevelDebug, "request abandoned by the client",
			slog.String("request_id", requestIDFrom(r.Context())), slog.String("path", r.URL.Path))
		return
	}
	if !errors.As(err, &e) {
		s.log.LogAttrs(r.Context(), slog.LevelError, "internal error",
			slog.String("request_id", requestIDFrom(r.Context())),
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("error", err.Error()))
		e = &Error{Code: codeInternal, Detail: "The server failed to handle the request. Quote the request id when reporting it."}
	}
	s.writeProblem(w, r, e)
}

func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, e *Error) {
	p := problem{
		Type:          s.cfg.DocsURL + "/api/errors#" + e.Code,
		Detail:        e.Detail,
		RequestID:     requestIDFrom(r.Context()),
		InvalidParams: e.Params,
	}
	for _, t := range problemTypes {
		if t.code == e.Code {
			p.Title, p.Status = t.title, t.status
		}
	}
	if p.Status == 0 {
		p.Title, p.Status = "internal error", http.StatusInternalServerError
	}
	if e.Title != "" {
		p.Title = e.Title
	}
	if pp, ok := s.cfg.Dashboard.(ProblemPager); ok && strings.HasPrefix(r.URL.Path, "/dashboard/") {
		// A person's browser asked: the rate limit, a panic or headers too
		// large are a page of the dashboard's, not JSON.
		pp.ServeProblem(w, r, p.Status, e.Detail)
		return
	}
	h := w.Header()
	switch p.Status {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="quorum", error="invalid_token"`)
		if e.Title == titleNoToken {
			// RFC 6750 §3.1: no error code when no credentials were sent.
			h.Set("WWW-Authenticate", `Bearer realm="quorum"`)
		}
	case http.StatusForbidden:
		h.Set("WWW-Authenticate", `Bearer realm="quorum", error="insufficient_scope"`)
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeJSON writes a 200 JSON body.
func writeJSON(w http.ResponseWriter, v any) { writeBody(w, encodeJSON(v)) }

// encodeJSON encodes a response body, with a final newline.
func encodeJSON(v any) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		// Our own types always marshal; this is a programming error.
		panic(fmt.Sprintf("api: marshal response: %v", err))
	}
	return append(body, '\n')
}

// writeBody writes an encoded 200 JSON body.
func writeBody(w http.ResponseWriter, body []byte) { writeRaw(w, http.StatusOK, body) }

// writeRaw writes an encoded JSON body with the given status.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
