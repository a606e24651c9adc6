package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/quorum-review/quorum/internal/token"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	authKey
)

// auth is what authenticate learned about the request's credentials.
type auth struct {
	principal token.Principal
	ok        bool
	// err is why there is no principal: an *Error, or a database failure
	// that need reports once rateLimit has set its headers.
	err error
}

// PrincipalFrom returns who the request acts for, if it authenticated.
func PrincipalFrom(ctx context.Context) (token.Principal, bool) {
	a, _ := ctx.Value(authKey).(*auth)
	if a == nil || !a.ok {
		return token.Principal{}, false
	}
	return a.principal, true
}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// statusWriter remembers what was written, for logs and for recovering from
// a panic before anything was sent.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe gives each request an id, turns a panic into a 500 and logs the
// request.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var raw [12]byte
		_, _ = rand.Read(raw[:])
		rid := hex.EncodeToString(raw[:])
		w.Header().Set("X-Request-Id", rid)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, rid))
		sw := &statusWriter{ResponseWriter: w}
		if headerBytes(r) > MaxHeaderBytes {
			defer s.logRequest(r, rid, sw, start)
			s.writeError(sw, r, errorf(codeHeadersTooLarge, "The request line and headers take more than %d bytes.", MaxHeaderBytes))
			return
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.LogAttrs(r.Context(), slog.LevelError, "panic in handler",
					slog.String("request_id", rid), slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					s.writeError(sw, r, &Error{Code: codeInternal, Detail: "The server failed to handle the request. Quote the request id when reporting it."})
				}
			}
			s.logRequest(r, rid, sw, start)
		}()
		next.ServeHTTP(sw, r)
	})
}

// logRequest logs a request that was answered.
func (s *Server) logRequest(r *http.Request, rid string, sw *statusWriter, start time.Time) {
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("request_id", rid), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", sw.status), slog.Int("bytes", sw.bytes),
		slog.Duration("duration", time.Since(start)))
}

// Request header limits. Go's HTTP server refuses headers past its
// MaxHeaderBytes itself, with a plain-text 431 that quorum cannot shape;
// below that, the API refuses headers past MaxHeaderBytes with a problem
// document. Serve with http.Server.MaxHeaderBytes = ServerMaxHeaderBytes.
const (
	// MaxHeaderBytes bounds the request line and headers the API reads.
	MaxHeaderBytes = 64 << 10
	// ServerMaxHeaderBytes is the http.Server's limit (Go's default, 1 MiB).
	ServerMaxHeaderBytes = 1 << 20
)

// headerBytes is about how many bytes the request line and headers took on
// the wire, as Go's server counts them against MaxHeaderBytes.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // ": " and CRLF
		}
	}
	return n
}

// titleNoToken is the 401 title when no credentials were sent at all.
const titleNoToken = "missing PAT"

// authenticate resolves a bearer token, when one is sent, into a principal
// (or the reason it is refused) for need and rateLimit to act on. A request
// without one passes on as anonymous.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		if h == "" || isProbe(r) {
			next.ServeHTTP(w, r)
			return
		}
		a := &auth{}
		// "Bearer", exactly one space, the token (RFC 6750 §2.1 with the
		// single space every client sends): anything else is refused, not
		// trimmed into shape.
		scheme, cred, _ := strings.Cut(h, " ")
		switch {
		case !strings.EqualFold(scheme, "Bearer") || cred == "":
			a.err = &Error{Code: codeUnauthorized, Title: titleNoToken,
				Detail: "The Authorization header must be \"Bearer <token>\": the word Bearer, one space, and a personal access token."}
		case strings.ContainsFunc(cred, unicode.IsSpace):
			a.err = errorf(codeUnauthorized, "The Authorization header must be \"Bearer <token>\": the word Bearer, one space, and the token, with no other white space.")
		default:
			p, err := s.tokens.Authenticate(r.Context(), cred)
			switch {
			case err == nil:
				a.principal, a.ok = p, true
			case errors.Is(err, token.ErrMalformed):
				a.err = errorf(codeUnauthorized, "The token is malformed: quorum tokens are \"qrm_\" followed by 36 letters and digits.")
			case errors.Is(err, token.ErrUnknown):
				a.err = errorf(codeUnauthorized, "The token does not exist or was revoked.")
			case errors.Is(err, token.ErrRevoked):
				a.err = errorf(codeUnauthorized, "The token does not exist or was revoked.")
			case errors.Is(err, token.ErrExpired):
				a.err = errorf(codeUnauthorized, "The token has expired.")
			default:
				a.err = err
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey, a)))
	})
}

// need lets the request through only with a principal holding scope.
func (s *Server) need(scope string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, _ := r.Context().Value(authKey).(*auth)
		switch {
		case a == nil:
			s.writeError(w, r, &Error{Code: codeUnauthorized, Title: titleNoToken,
				Detail: "This endpoint needs a personal access token: send \"Authorization: Bearer <token>\"."})
		case !a.ok:
			s.writeError(w, r, a.err)
		case !a.principal.Has(scope):
			s.writeError(w, r, errorf(codeForbidden, "The token lacks the %q scope this endpoint requires.", scope))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// isProbe reports the health endpoints, which a load balancer polls: they
// are neither authenticated nor rate limited.
func isProbe(r *http.Request) bool { return r.URL.Path == "/healthz" || r.URL.Path == "/readyz" }

// rateLimit counts the request against its token, or its client address
// when it has none, and sets the RateLimit headers on every response.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isProbe(r) {
			next.ServeHTTP(w, r)
			return
		}
		key := "addr:" + s.clientAddr(r)
		if p, ok := PrincipalFrom(r.Context()); ok {
			key = "token:" + p.TokenID
		}
		d := s.limiter.take(key)
		h := w.Header()
		h.Set("RateLimit-Limit", strconv.Itoa(d.limit))
		h.Set("RateLimit-Remaining", strconv.Itoa(d.remaining))
		h.Set("RateLimit-Reset", strconv.Itoa(d.resetSeconds))
		if !d.allowed {
			h.Set("Retry-After", strconv.Itoa(d.resetSeconds))
			s.writeError(w, r, errorf(codeRateLimited, "The limit of %d requests per %s is used up; it resets in %d s.", d.limit, s.cfg.RateWindow, d.resetSeconds))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clientAddr is the request's client IP address.
func (s *Server) clientAddr(r *http.Request) string {
	if s.cfg.TrustProxy {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			parts := strings.Split(xff, ",")
			return strings.TrimSpace(parts[len(parts)-1])
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
