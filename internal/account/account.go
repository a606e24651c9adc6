// Package account owns the tenants: accounts (the owner login of a
// platform's installations), their installations and repositories. Every
// token belongs to one account and sees only its repositories.
package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
)

// PlatformGitHub is the only platform so far.
const PlatformGitHub = "github"

// ErrNotFound is returned for an account or repository that does not exist.
var ErrNotFound = errors.New("not found")

// Account is a tenant: a user or organization on a platform.
type Account struct {
	ID       string
	Platform string
	Login    string
	Type     string // "User" or "Organization"
}

// Repository is a repository of an account.
type Repository struct {
	ID        string
	AccountID string
	Owner     string
	Name      string
}

// Ensure returns the account with this login on the platform, creating it
// when missing. Logins compare case-insensitively, as on GitHub.
func Ensure(ctx context.Context, q store.Querier, platform, login, typ string) (Account, error) {
	if login == "" {
		return Account{}, errors.New("ensure account: empty login")
	}
	if typ == "" {
		typ = "Organization"
	}
	now := time.Now()
	_, err := q.Exec(ctx, `INSERT INTO accounts (id, platform, login, type, created_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (platform, lower(login)) DO NOTHING`, id.New(id.Account, now), platform, login, typ, store.Micros(now))
	if err != nil {
		return Account{}, fmt.Errorf("ensure account %s: %w", login, err)
	}
	return Find(ctx, q, platform, login)
}

// Find returns the account with this login.
func Find(ctx context.Context, q store.Querier, platform, login string) (Account, error) {
	a := Account{Platform: platform}
	err := q.QueryRow(ctx, `SELECT id, login, type FROM accounts WHERE platform = $1 AND lower(login) = lower($2)`,
		platform, login).Scan(&a.ID, &a.Login, &a.Type)
	if errors.Is(err, store.ErrNotFound) {
		return Account{}, ErrNotFound
	}
	if err != nil {
		return Account{}, fmt.Errorf("find account %s: %w", login, err)
	}
	return a, nil
}

// Get returns the account with this id.
func Get(ctx context.Context, q store.Querier, accountID string) (Account, error) {
	a := Account{ID: accountID}
	err := q.QueryRow(ctx, `SELECT platform, login, type FROM accounts WHERE id = $1`, accountID).Scan(&a.Platform, &a.Login, &a.Type)
	if errors.Is(err, store.ErrNotFound) {
		return Account{}, ErrNotFound
	}
	if err != nil {
		return Account{}, fmt.Errorf("load account %s: %w", accountID, err)
	}
	return a, nil
}

// EnsureRepository returns the account's repository owner/name, creating it
// when missing.
func EnsureRepository(ctx context.Context, q store.Querier, accountID, owner, name string) (Repository, error) {
	now := time.Now()
	_, err := q.Exec(ctx, `INSERT INTO repositories (id, account_id, owner, name, created_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (account_id, lower(owner), lower(name)) DO NOTHING`, id.New(id.Repository, now), accountID, owner, name, store.Micros(now))
	if err != nil {
		return Repository{}, fmt.Errorf("ensure repository %s/%s: %w", owner, name, err)
	}
	r := Repository{AccountID: accountID}
	err = q.QueryRow(ctx, `SELECT id, owner, name FROM repositories WHERE account_id = $1 AND lower(owner) = lower($2) AND lower(name) = lower($3)`,
		accountID, owner, name).Scan(&r.ID, &r.Owner, &r.Name)
	if err != nil {
		return Repository{}, fmt.Errorf("load repository %s/%s: %w", owner, name, err)
	}
	return r, nil
}
