package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/token"
)

// errNoSession means the cookie names no live session: never issued,
// signed out, expired, or its token revoked or expired.
var errNoSession = errors.New("no session")

// session is a signed-in browser: who it acts for, with the scopes of the
// token it was exchanged for, read again on every request.
type session struct {
	hash      string
	principal token.Principal
	csrf      string
	expiresAt time.Time
}

// sessions keeps dashboard sessions in the store, so every replica knows
// every session.
type sessions struct {
	db  *store.DB
	now func() time.Time
	ttl time.Duration
}

// randomText is n random bytes, URL-safe base64.
func randomText(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// create exchanges a principal for a new session and returns the id the
// browser keeps. The session ends at ttl, or when the token expires if
// sooner. Expired sessions of anyone are swept first, a bounded delete on
// an index.
func (s *sessions) create(ctx context.Context, p token.Principal) (string, session, error) {
	id, err := randomText(32)
	if err != nil {
		return "", session{}, err
	}
	csrf, err := randomText(32)
	if err != nil {
		return "", session{}, err
	}
	w := s.db.Writer()
	var tokenExpires *int64
	if err := w.QueryRow(ctx, `SELECT expires_at FROM api_tokens WHERE id = $1`, p.TokenID).Scan(&tokenExpires); err != nil {
		return "", session{}, fmt.Errorf("read token expiry: %w", err)
	}
	now := s.now()
	expires := now.Add(s.ttl)
	if tokenExpires != nil && store.FromMicros(*tokenExpires).Before(expires) {
		expires = store.FromMicros(*tokenExpires)
	}
	if _, err := w.Exec(ctx, `DELETE FROM dashboard_sessions WHERE expires_at <= $1`, store.Micros(now)); err != nil {
		return "", session{}, fmt.Errorf("sweep expired sessions: %w", err)
	}
	sess := session{hash: hashID(id), principal: p, csrf: csrf, expiresAt: expires}
	if _, err := w.Exec(ctx, `INSERT INTO dashboard_sessions (id_hash, token_id, account_id, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		sess.hash, p.TokenID, p.AccountID, csrf, store.Micros(now), store.Micros(expires)); err != nil {
		return "", session{}, fmt.Errorf("store session: %w", err)
	}
	return id, sess, nil
}

// lookup finds the live session id names, with its token's scopes as they
// are now. The read pool sees every committed session (SQLite's WAL
// readers; PostgreSQL's one pool), so a page never waits behind writes.
func (s *sessions) lookup(ctx context.Context, id string) (session, error) {
	if id == "" || len(id) > 64 {
		return session{}, errNoSession
	}
	var (
		sess               session
		scopes             string
		expires            int64
		tokExpires, revoke *int64
	)
	err := s.db.Reader().QueryRow(ctx, `SELECT s.id_hash, s.token_id, s.account_id, s.csrf, s.expires_at, t.scopes, t.expires_at, t.revoked_at
FROM dashboard_sessions s JOIN api_tokens t ON t.id = s.token_id WHERE s.id_hash = $1`, hashID(id)).
		Scan(&sess.hash, &sess.principal.TokenID, &sess.principal.AccountID, &sess.csrf, &expires, &scopes, &tokExpires, &revoke)
	if errors.Is(err, store.ErrNotFound) {
		return session{}, errNoSession
	}
	if err != nil {
		return session{}, fmt.Errorf("find session: %w", err)
	}
	now := s.now()
	sess.expiresAt = store.FromMicros(expires)
	if revoke != nil || (tokExpires != nil && !now.Before(store.FromMicros(*tokExpires))) || !now.Before(sess.expiresAt) {
		// Gone for good: forget it now rather than at the next sweep.
		_ = s.end(ctx, sess.hash)
		return session{}, errNoSession
	}
	sess.principal.Scopes = strings.Fields(scopes)
	return sess, nil
}

// end deletes a session (sign-out).
func (s *sessions) end(ctx context.Context, hash string) error {
	if _, err := s.db.Writer().Exec(ctx, `DELETE FROM dashboard_sessions WHERE id_hash = $1`, hash); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// validCSRF reports whether got is the session's form token.
func (sess session) validCSRF(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) == 1
}

// secretWindow is how long after registering an endpoint or rotating its
// secret the session may see the secret, once.
const secretWindow = 10 * time.Minute

// offerSecret lets the session see endpointID's secret once, within
// secretWindow; kind is "created" or "rotated".
func (s *sessions) offerSecret(ctx context.Context, hash, endpointID, kind string) error {
	_, err := s.db.Writer().Exec(ctx, `UPDATE dashboard_sessions SET secret_endpoint = $2, secret_kind = $3, secret_until = $4 WHERE id_hash = $1`,
		hash, endpointID, kind, store.Micros(s.now().Add(secretWindow)))
	if err != nil {
		return fmt.Errorf("offer the secret: %w", err)
	}
	return nil
}

// takeSecret reports whether the session may see endpointID's secret now,
// and why ("created" or "rotated"); it may only once: one statement clears
// the offer and returns it, so of two requests at the same time one finds
// it gone.
func (s *sessions) takeSecret(ctx context.Context, hash, endpointID string) (kind string, ok bool, err error) {
	err = s.db.Writer().QueryRow(ctx, `UPDATE dashboard_sessions SET secret_endpoint = NULL, secret_until = NULL
WHERE id_hash = $1 AND secret_endpoint = $2 AND secret_until > $3 RETURNING secret_kind`,
		hash, endpointID, store.Micros(s.now())).Scan(&kind)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("take the secret: %w", err)
	}
	return kind, true, nil
}
