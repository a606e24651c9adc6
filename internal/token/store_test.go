package token_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

type fixture struct {
	db      *store.DB
	clock   *storetest.Clock
	tokens  *token.Store
	account account.Account
}

func setup(t *testing.T, b storetest.Backend) fixture {
	t.Helper()
	db := b.Open(t)
	// Nanoseconds on purpose: stored times are microseconds.
	c := storetest.NewClock(time.Date(2026, 11, 23, 2, 0, 0, 123456789, time.UTC))
	a, err := account.Ensure(context.Background(), db.Writer(), account.PlatformGitHub, "acme", "Organization")
	if err != nil {
		t.Fatal(err)
	}
	return fixture{db: db, clock: c, tokens: token.NewStore(db, c.Now), account: a}
}

func TestCreateValidatesScopes(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b)
		ctx := context.Background()
		for _, scopes := range [][]string{nil, {}, {"reviews:write"}, {token.ScopeReviewsRead, "admin"}} {
			if _, secret, err := f.tokens.Create(ctx, f.account.ID, "ci", scopes, 0); err == nil || secret != "" {
				t.Errorf("Create with scopes %q: secret %q, err %v; want an error and no secret", scopes, secret, err)
			}
		}
		if got := countTokens(t, f.db); got != 0 {
			t.Errorf("%d tokens stored after refused creates, want 0", got)
		}

		tok, secret, err := f.tokens.Create(ctx, f.account.ID, "ci",
			[]string{token.ScopeReviewsRead, token.ScopeFindingsRead, token.ScopeReviewsRead}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !token.WellFormed(secret) {
			t.Errorf("secret %q is not well formed", secret)
		}
		if want := []string{token.ScopeFindingsRead, token.ScopeReviewsRead}; !slices.Equal(tok.Scopes, want) {
			t.Errorf("scopes %q, want %q (sorted, without duplicates)", tok.Scopes, want)
		}
		if tok.ExpiresAt != nil || tok.RevokedAt != nil || tok.LastUsedAt != nil {
			t.Errorf("new token without ttl: %+v", tok)
		}
		if want := f.clock.Now().Truncate(time.Microsecond); !tok.CreatedAt.Equal(want) {
			t.Errorf("created_at %v, want %v", tok.CreatedAt, want)
		}
	})
}

func countTokens(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(context.Background(), `SELECT COUNT(*) FROM api_tokens`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateStoresOnlyHash(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b)
		tok, secret, err := f.tokens.Create(context.Background(), f.account.ID, "deploy", []string{token.ScopeReviewsRead}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// Every column of the row, as text.
		var cols [9]string
		err = f.db.Reader().QueryRow(context.Background(), `SELECT id, account_id, name, hash, scopes,
	CAST(created_at AS TEXT), COALESCE(CAST(expires_at AS TEXT), ''), COALESCE(CAST(revoked_at AS TEXT), ''),
	COALESCE(CAST(last_used_at AS TEXT), '')
FROM api_tokens WHERE id = $1`, tok.ID).Scan(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7], &cols[8])
		if err != nil {
			t.Fatal(err)
		}
		random := secret[len(token.Prefix) : len(token.Prefix)+30]
		for i, c := range cols {
			if strings.Contains(c, secret) || strings.Contains(c, random) {
				t.Errorf("column %d of the token row holds the secret: %q", i, c)
			}
		}
		if cols[3] != token.Hash(secret) {
			t.Errorf("hash column %q, want %q", cols[3], token.Hash(secret))
		}
	})
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b)
		ctx := context.Background()
		tok, secret, err := f.tokens.Create(ctx, f.account.ID, "ci", []string{token.ScopeReviewsRead, token.ScopeFindingsRead}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.tokens.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if p.TokenID != tok.ID || p.AccountID != f.account.ID || !p.Has(token.ScopeReviewsRead) || !p.Has(token.ScopeFindingsRead) || p.Has(token.ScopeWebhooksWrite) {
			t.Errorf("principal %+v, want token %s of account %s with reviews:read and findings:read", p, tok.ID, f.account.ID)
		}

		never, _ := token.Generate()
		for name, c := range map[string]struct {
			secret string
			want   error
		}{
			"malformed":         {"qrm_nope", token.ErrMalformed},
			"empty":             {"", token.ErrMalformed},
			"bad checksum":      {secret[:len(secret)-1] + flip(secret[len(secret)-1]), token.ErrMalformed},
			"unknown":           {never, token.ErrUnknown},
			"upper-case prefix": {strings.ToUpper(secret[:4]) + secret[4:], token.ErrMalformed},
		} {
			if _, err := f.tokens.Authenticate(ctx, c.secret); !errors.Is(err, c.want) {
				t.Errorf("%s: Authenticate(%q) = %v, want %v", name, c.secret, err, c.want)
			}
		}

		// Expiry: still valid a microsecond before, expired at the instant.
		f.clock.Advance(time.Hour - time.Microsecond)
		if _, err := f.tokens.Authenticate(ctx, secret); err != nil {
			t.Errorf("a microsecond before expiry: %v", err)
		}
		f.clock.Advance(tok.ExpiresAt.Sub(f.clock.Now()))
		if _, err := f.tokens.Authenticate(ctx, secret); !errors.Is(err, token.ErrExpired) {
			t.Errorf("at expiry (%v): %v, want ErrExpired", f.clock.Now(), err)
		}
		f.clock.Advance(24 * time.Hour)
		if _, err := f.tokens.Authenticate(ctx, secret); !errors.Is(err, token.ErrExpired) {
			t.Errorf("a day after expiry: %v, want ErrExpired", err)
		}
	})
}

func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	storetest.ForEachTarget(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db := storetest.Open(t, cfg)
		// Another replica: a second *store.DB on the same database.
		replica := storetest.OpenUnmigrated(t, cfg)
		c := storetest.NewClock(time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC))
		a, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		here, there := token.NewStore(db, c.Now), token.NewStore(replica, c.Now)

		tok, secret, err := here.Create(ctx, a.ID, "ci", []string{token.ScopeReviewsRead}, 0)
		if err != nil {
			t.Fatal(err)
		}
		keep, keepSecret, err := here.Create(ctx, a.ID, "keep", []string{token.ScopeReviewsRead}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []*token.Store{here, there} {
			if _, err := s.Authenticate(ctx, secret); err != nil {
				t.Fatalf("before revocation: %v", err)
			}
		}

		c.Advance(time.Minute)
		revoked, err := here.Revoke(ctx, tok.ID)
		if err != nil {
			t.Fatal(err)
		}
		if revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(c.Now()) {
			t.Errorf("revoked_at %v, want %v", revoked.RevokedAt, c.Now())
		}
		// No clock moves: revocation takes effect on the very next request,
		// on this replica and on the other.
		for name, s := range map[string]*token.Store{"same replica": here, "other replica": there} {
			if _, err := s.Authenticate(ctx, secret); !errors.Is(err, token.ErrRevoked) {
				t.Errorf("%s after revocation: %v, want ErrRevoked", name, err)
			}
			if _, err := s.Authenticate(ctx, keepSecret); err != nil {
				t.Errorf("%s: the token that was not revoked: %v", name, err)
			}
		}

		c.Advance(time.Minute)
		again, err := there.Revoke(ctx, tok.ID)
		if !errors.Is(err, token.ErrRevoked) {
			t.Errorf("revoking twice: %v, want ErrRevoked", err)
		}
		if again.RevokedAt == nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
			t.Errorf("revoking twice moved revoked_at: %v, want %v", again.RevokedAt, revoked.RevokedAt)
		}
		if _, err := here.Revoke(ctx, "tok_01KAQZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, token.ErrNoToken) {
			t.Errorf("revoking an unknown id: %v, want ErrNoToken", err)
		}
		if _, err := here.Authenticate(ctx, keepSecret); err != nil {
			t.Errorf("token %s after the others' revocation: %v", keep.ID, err)
		}
	})
}

func TestList(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b)
		ctx := context.Background()
		other, err := account.Ensure(ctx, f.db.Writer(), account.PlatformGitHub, "globex", "User")
		if err != nil {
			t.Fatal(err)
		}
		var secrets []string
		var mine, all []string
		for i, acct := range []account.Account{f.account, other, f.account} {
			f.clock.Advance(time.Second)
			tok, secret, err := f.tokens.Create(ctx, acct.ID, "t", []string{token.ScopeReviewsRead}, 0)
			if err != nil {
				t.Fatal(err)
			}
			secrets = append(secrets, secret)
			all = append(all, tok.ID)
			if i != 1 {
				mine = append(mine, tok.ID)
			}
		}

		got, err := f.tokens.List(ctx, f.account.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ids := tokenIDs(got); !slices.Equal(ids, mine) {
			t.Errorf("List(acme) = %v, want %v", ids, mine)
		}
		for _, tok := range got {
			if tok.Account != "acme" || tok.AccountID != f.account.ID {
				t.Errorf("token %s lists account %s (%s), want acme", tok.ID, tok.Account, tok.AccountID)
			}
		}
		everyone, err := f.tokens.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if ids := tokenIDs(everyone); !slices.Equal(ids, all) {
			t.Errorf("List(all) = %v, want %v (oldest first)", ids, all)
		}
		text, err := json.Marshal(everyone)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(text), s[4:34]) || strings.Contains(string(text), token.Hash(s)) {
				t.Errorf("List output holds a secret or its hash: %s", text)
			}
		}
		none, err := f.tokens.List(ctx, "acct_nobody")
		if err != nil || len(none) != 0 {
			t.Errorf("List of an account without tokens = %v, %v; want none", none, err)
		}
	})
}

func tokenIDs(ts []token.Token) []string {
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	return ids
}

func TestLastUsedIsBatched(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b)
		ctx := context.Background()
		tok, secret, err := f.tokens.Create(ctx, f.account.ID, "ci", []string{token.ScopeReviewsRead}, 0)
		if err != nil {
			t.Fatal(err)
		}
		start := f.clock.Now().Truncate(time.Microsecond)
		auth := func() {
			t.Helper()
			if _, err := f.tokens.Authenticate(ctx, secret); err != nil {
				t.Fatal(err)
			}
		}
		flush := func() {
			t.Helper()
			if err := f.tokens.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}

		// Many uses, no write until Flush.
		for range 50 {
			auth()
			f.clock.Advance(100 * time.Millisecond)
		}
		if got := lastUsed(t, f.db, tok.ID); got != nil {
			t.Fatalf("last_used_at written before Flush: %v", got)
		}
		flush()
		want := start.Add(49 * 100 * time.Millisecond)
		if got := lastUsed(t, f.db, tok.ID); got == nil || !got.Equal(want) {
			t.Fatalf("after Flush last_used_at = %v, want the last use %v", got, want)
		}

		// Flush wrote once: with the column cleared behind its back, another
		// Flush has nothing to write.
		clearLastUsed(t, f.db, tok.ID)
		flush()
		if got := lastUsed(t, f.db, tok.ID); got != nil {
			t.Errorf("a second Flush wrote again: %v", got)
		}
		setLastUsed(t, f.db, tok.ID, want)

		// Uses within a minute of the written one are not written again.
		f.clock.Advance(30 * time.Second)
		auth()
		flush()
		if got := lastUsed(t, f.db, tok.ID); got == nil || !got.Equal(want) {
			t.Errorf("a use within a minute was written: last_used_at = %v, want %v", got, want)
		}

		// A use a minute or more after the written one is.
		f.clock.Advance(time.Minute)
		later := f.clock.Now().Truncate(time.Microsecond)
		auth()
		flush()
		if got := lastUsed(t, f.db, tok.ID); got == nil || !got.Equal(later) {
			t.Errorf("a use a minute later: last_used_at = %v, want %v", got, later)
		}

		// List shows it.
		ts, err := f.tokens.List(ctx, f.account.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 1 || ts[0].LastUsedAt == nil || !ts[0].LastUsedAt.Equal(later) {
			t.Errorf("List = %+v, want last_used_at %v", ts, later)
		}
	})
}

func TestFlushFailureKeepsUse(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b)
		ctx := context.Background()
		tok, secret, err := f.tokens.Create(ctx, f.account.ID, "ci", []string{token.ScopeReviewsRead}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.tokens.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		// A Flush that cannot write (here: its context is over) must not
		// lose the use, nor count it as written.
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if err := f.tokens.Flush(canceled); err == nil {
			t.Fatal("Flush with a canceled context succeeded")
		}
		if got := lastUsed(t, f.db, tok.ID); got != nil {
			t.Fatalf("last_used_at = %v after a failed Flush", got)
		}
		if err := f.tokens.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		want := f.clock.Now().Truncate(time.Microsecond)
		if got := lastUsed(t, f.db, tok.ID); got == nil || !got.Equal(want) {
			t.Errorf("after a failed Flush and a good one, last_used_at = %v, want %v", got, want)
		}
	})
}

func lastUsed(t *testing.T, db *store.DB, tokenID string) *time.Time {
	t.Helper()
	var us *int64
	if err := db.Reader().QueryRow(context.Background(), `SELECT last_used_at FROM api_tokens WHERE id = $1`, tokenID).Scan(&us); err != nil {
		t.Fatal(err)
	}
	if us == nil {
		return nil
	}
	at := store.FromMicros(*us)
	return &at
}

func clearLastUsed(t *testing.T, db *store.DB, tokenID string) {
	t.Helper()
	if _, err := db.Writer().Exec(context.Background(), `UPDATE api_tokens SET last_used_at = NULL WHERE id = $1`, tokenID); err != nil {
		t.Fatal(err)
	}
}

func setLastUsed(t *testing.T, db *store.DB, tokenID string, at time.Time) {
	t.Helper()
	if _, err := db.Writer().Exec(context.Background(), `UPDATE api_tokens SET last_used_at = $2 WHERE id = $1`, tokenID, store.Micros(at)); err != nil {
		t.Fatal(err)
	}
}
