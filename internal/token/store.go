package token

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
)

// Reasons a token does not authenticate.
var (
	ErrUnknown = errors.New("token does not exist")
	ErrRevoked = errors.New("token was revoked")
	ErrExpired = errors.New("token has expired")
	ErrNoToken = errors.New("no such token id")
)

// Token is a stored token's record; the secret itself is never stored.
type Token struct {
	ID         string     `json:"id"`
	AccountID  string     `json:"account_id"`
	Account    string     `json:"account"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// Principal is who an authenticated request acts for.
type Principal struct {
	TokenID   string
	AccountID string
	Scopes    []string
}

// Has reports whether the principal holds scope.
func (p Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Store issues, lists, revokes and checks tokens.
type Store struct {
	db  *store.DB
	now func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // token id → last use not yet written
	// written remembers when each token's last use was last written, so a
	// busy token is written at most once per usedEvery.
	written map[string]time.Time
}

// usedEvery is how stale last_used_at may be.
const usedEvery = time.Minute

// FlushInterval is how often the server writes the uses it noted (see
// RunFlusher): a token's first use shows in last_used_at within it.
const FlushInterval = 5 * time.Second

// NewStore returns a token store; now is the clock.
func NewStore(db *store.DB, now func() time.Time) *Store {
	return &Store{db: db, now: now, used: map[string]time.Time{}, written: map[string]time.Time{}}
}

// Create issues a token for the account, returning its record and the
// secret, which is shown once and never stored.
func (s *Store) Create(ctx context.Context, accountID, name string, scopes []string, ttl time.Duration) (Token, string, error) {
	if len(scopes) == 0 {
		return Token{}, "", errors.New("create token: at least one scope")
	}
	for _, sc := range scopes {
		if !ValidScope(sc) {
			return Token{}, "", fmt.Errorf("create token: unknown scope %q (known: %s)", sc, strings.Join(AllScopes, ", "))
		}
	}
	secret, err := Generate()
	if err != nil {
		return Token{}, "", fmt.Errorf("create token: %w", err)
	}
	now := s.now().UTC()
	t := Token{ID: id.New(id.Token, now), AccountID: accountID, Name: name, Scopes: dedupe(scopes), CreatedAt: now.Truncate(time.Microsecond)}
	var expires *int64
	if ttl > 0 {
		e := now.Add(ttl).Truncate(time.Microsecond)
		t.ExpiresAt = &e
		us := store.Micros(e)
		expires = &us
	}
	_, err = s.db.Writer().Exec(ctx, `INSERT INTO api_tokens (id, account_id, name, hash, scopes, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, t.ID, accountID, name, Hash(secret), strings.Join(t.Scopes, " "), store.Micros(now), expires)
	if err != nil {
		return Token{}, "", fmt.Errorf("create token: %w", err)
	}
	return t, secret, nil
}

func dedupe(scopes []string) []string {
	out := slices.Clone(scopes)
	slices.Sort(out)
	return slices.Compact(out)
}

const tokenColumns = `t.id, t.account_id, a.login, t.name, t.scopes, t.created_at, t.expires_at, t.revoked_at, t.last_used_at`

// List returns every token, or one account's when accountID is not empty,
// oldest first.
func (s *Store) List(ctx context.Context, accountID string) ([]Token, error) {
	s.Flush(ctx)
	rows, err := s.db.Reader().Query(ctx, `SELECT `+tokenColumns+` FROM api_tokens t JOIN accounts a ON a.id = t.account_id
WHERE $1 = '' OR t.account_id = $1 ORDER BY t.created_at, t.id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Revoke revokes a token; the next request that carries it is refused, on
// every replica, since authentication reads the database each time.
func (s *Store) Revoke(ctx context.Context, tokenID string) (Token, error) {
	now := store.Micros(s.now())
	n, err := s.db.Writer().Exec(ctx, `UPDATE api_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, tokenID, now)
	if err != nil {
		return Token{}, fmt.Errorf("revoke token %s: %w", tokenID, err)
	}
	t, err := scanToken(s.db.Writer().QueryRow(ctx, `SELECT `+tokenColumns+` FROM api_tokens t JOIN accounts a ON a.id = t.account_id WHERE t.id = $1`, tokenID))
	if errors.Is(err, store.ErrNotFound) {
		return Token{}, fmt.Errorf("revoke %s: %w", tokenID, ErrNoToken)
	}
	if err != nil {
		return Token{}, fmt.Errorf("revoke token %s: %w", tokenID, err)
	}
	if n == 0 {
		return t, fmt.Errorf("revoke %s: %w", tokenID, ErrRevoked)
	}
	return t, nil
}

// Authenticate checks a presented secret and returns who it acts for. The
// error is ErrMalformed, ErrUnknown, ErrRevoked or ErrExpired, or a database
// failure.
func (s *Store) Authenticate(ctx context.Context, secret string) (Principal, error) {
	if !WellFormed(secret) {
		return Principal{}, ErrMalformed
	}
	want := Hash(secret)
	var (
		p                  Principal
		hash, scopes       string
		expires, revokedAt *int64
	)
	err := s.db.Reader().QueryRow(ctx, `SELECT id, account_id, hash, scopes, expires_at, revoked_at FROM api_tokens WHERE hash = $1`, want).
		Scan(&p.TokenID, &p.AccountID, &hash, &scopes, &expires, &revokedAt)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, ErrUnknown
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	// The index lookup already matched; compare again in constant time so
	// correctness never rests on how the database compares strings.
	if subtle.ConstantTimeCompare([]byte(hash), []byte(want)) != 1 {
		return Principal{}, ErrUnknown
	}
	now := s.now()
	if revokedAt != nil {
		return Principal{}, ErrRevoked
	}
	if expires != nil && !now.Before(store.FromMicros(*expires)) {
		return Principal{}, ErrExpired
	}
	p.Scopes = strings.Fields(scopes)
	s.markUsed(p.TokenID, now)
	return p, nil
}

// markUsed notes a use in memory; Flush writes it.
func (s *Store) markUsed(tokenID string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.written[tokenID]; ok && at.Sub(w) < usedEvery {
		return
	}
	s.used[tokenID] = at
}

// Flush writes pending last-use times. Run it periodically and at shutdown.
func (s *Store) Flush(ctx context.Context) error {
	s.mu.Lock()
	pending := s.used
	s.used = map[string]time.Time{}
	s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	err := s.db.InTx(ctx, func(tx store.Tx) error {
		for tid, at := range pending {
			if _, err := tx.Exec(ctx, `UPDATE api_tokens SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`,
				tid, store.Micros(at)); err != nil {
				return fmt.Errorf("record token use: %w", err)
			}
		}
		return nil
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for tid, at := range pending {
		if err != nil {
			// Not written: keep the use for the next Flush, unless a later
			// one is already waiting.
			if later, ok := s.used[tid]; !ok || later.Before(at) {
				s.used[tid] = at
			}
		} else if at.After(s.written[tid]) {
			s.written[tid] = at
		}
	}
	// Forget writes too old to throttle anything, so the map holds only
	// tokens used in the last minute.
	now := s.now()
	for tid, w := range s.written {
		if now.Sub(w) >= usedEvery {
			delete(s.written, tid)
		}
	}
	return err
}

// RunFlusher writes last-use times every interval until ctx ends, then once
// more.
func (s *Store) RunFlusher(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = s.Flush(fctx)
			cancel()
			return
		case <-t.C:
			_ = s.Flush(ctx)
		}
	}
}

func scanToken(row store.Row) (Token, error) {
	var (
		t                          Token
		scopes                     string
		created                    int64
		expires, revoked, lastUsed *int64
	)
	if err := row.Scan(&t.ID, &t.AccountID, &t.Account, &t.Name, &scopes, &created, &expires, &revoked, &lastUsed); err != nil {
		return Token{}, err
	}
	t.Scopes = strings.Fields(scopes)
	t.CreatedAt = store.FromMicros(created)
	t.ExpiresAt = optTime(expires)
	t.RevokedAt = optTime(revoked)
	t.LastUsedAt = optTime(lastUsed)
	return t, nil
}

func optTime(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := store.FromMicros(*us)
	return &t
}
