package dashboard

import (
	"errors"
	"net/http"
	"strings"

	"github.com/quorum-review/quorum/internal/token"
)

// cookieName is the session cookie's name: with the __Host- prefix over
// TLS, which browsers accept only Secure, for path /, without a domain, so
// no other host or path can set it.
func (s *Server) cookieName() string {
	if s.cfg.SecureCookies {
		return "__Host-quorum_session"
	}
	return "quorum_session"
}

// sessionOf finds the request's session, or errNoSession.
func (s *Server) sessionOf(r *http.Request) (*session, error) {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return nil, errNoSession
	}
	sess, err := s.sessions.lookup(r.Context(), c.Value)
	if err != nil {
		return nil, err
	}
	return &sess, nil
}

// setCookie gives the browser its session id (value "" and maxAge < 0
// clear it).
func (s *Server) setCookie(w http.ResponseWriter, value string, sess *session) {
	c := &http.Cookie{
		Name:     s.cookieName(),
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		Secure:   s.cfg.SecureCookies,
		SameSite: http.SameSiteLaxMode,
	}
	if sess != nil {
		// Max-Age, not Expires: the browser's clock may be wrong.
		c.MaxAge = max(1, int(sess.expiresAt.Sub(s.now()).Seconds()))
	} else {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

type signInView struct {
	Next    string
	Problem string
	Notice  string
}

func (s *Server) signInPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	v := signInView{Next: safeNext(r.URL.Query().Get("next"))}
	if r.URL.Query().Get("signed-out") != "" {
		v.Notice = "You are signed out."
	}
	s.render(w, r, http.StatusOK, "sign-in", nil, "Sign in", v)
}

// signIn exchanges a personal access token for a session. The sign-in form
// carries no CSRF token (there is no session yet); cross-origin POSTs are
// refused before it runs, so another site cannot sign a browser in.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := readForm(r); err != nil {
		s.renderError(w, r, nil, err)
		return
	}
	v := signInView{Next: safeNext(r.PostForm.Get("next"))}
	secret := strings.TrimSpace(r.PostForm.Get("token"))
	p, err := s.tokens.Authenticate(r.Context(), secret)
	if err != nil {
		switch {
		case errors.Is(err, token.ErrMalformed):
			v.Problem = "That is not a quorum token: they are \"qrm_\" followed by 36 letters and digits. `quorum token create` issues one."
		case errors.Is(err, token.ErrUnknown), errors.Is(err, token.ErrRevoked):
			v.Problem = "The token does not exist or was revoked."
		case errors.Is(err, token.ErrExpired):
			v.Problem = "The token has expired. Issue a new one with `quorum token create`."
		default:
			s.renderError(w, r, nil, err)
			return
		}
		s.render(w, r, http.StatusUnauthorized, "sign-in", nil, "Sign in", v)
		return
	}
	// The browser's previous session, if any, ends: its id is about to be
	// replaced, and a session nobody can name should not live on (nor
	// one an attacker planted and kept a copy of).
	if c, err := r.Cookie(s.cookieName()); err == nil && c.Value != "" && len(c.Value) <= 64 {
		if err := s.sessions.end(r.Context(), hashID(c.Value)); err != nil {
			s.renderError(w, r, nil, err)
			return
		}
	}
	id, sess, err := s.sessions.create(r.Context(), p)
	if err != nil {
		s.renderError(w, r, nil, err)
		return
	}
	s.setCookie(w, id, &sess)
	http.Redirect(w, r, v.Next, http.StatusSeeOther)
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request, sess *session) error {
	if err := s.sessions.end(r.Context(), sess.hash); err != nil {
		return err
	}
	s.setCookie(w, "", nil)
	http.Redirect(w, r, Prefix+"sign-in?signed-out=1", http.StatusSeeOther)
	return nil
}
