// Package account owns the tenants: accounts (the owner login of a
// platform's installations), their installations and repositories. Every
// token belongs to one account and sees only its repositories.
package account

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
)

// The platforms an account can be on. The same login on two platforms is
// two accounts, which never share data.
const (
	PlatformGitHub = "github"
	PlatformGitea  = "gitea"
)

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

// ErrInvalidLogin is returned for a login GitHub would not allow.
var ErrInvalidLogin = errors.New("invalid login")

// maxLogin is the longest login GitHub allows.
const maxLogin = 39

// ValidateLogin checks login against GitHub's rules for user and
// organization names: 1 to 39 ASCII letters, digits and hyphens, not
// starting with a hyphen. (GitHub now also refuses a trailing or doubled
// hyphen, but older accounts have them, so they are let through.) An
// underscore is allowed too, for the "_shortcode" suffix of enterprise
// managed users.
func ValidateLogin(login string) error {
	ok := login != "" && len(login) <= maxLogin && login[0] != '-' && login[0] != '_'
	for i := 0; ok && i < len(login); i++ {
		c := login[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	if !ok {
		return fmt.Errorf("%w %q: GitHub logins are 1 to %d letters, digits and hyphens, not starting with a hyphen", ErrInvalidLogin, login, maxLogin)
	}
	return nil
}

// Ensure returns the account with this login on the platform, creating it
// when missing. Logins compare case-insensitively, as on GitHub.
func Ensure(ctx context.Context, q store.Querier, platform, login, typ string) (Account, error) {
	a, _, err := EnsureCreated(ctx, q, platform, login, typ)
	return a, err
}

// EnsureCreated is Ensure that also reports whether the account was
// created by this call.
func EnsureCreated(ctx context.Context, q store.Querier, platform, login, typ string) (Account, bool, error) {
	if err := ValidateLogin(login); err != nil {
		return Account{}, false, fmt.Errorf("ensure account: %w", err)
	}
	if typ == "" {
		typ = "Organization"
	}
	now := time.Now()
	n, err := q.Exec(ctx, `INSERT INTO accounts (id, platform, login, type, created_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (platform, lower(login)) DO NOTHING`, id.New(id.Account, now), platform, login, typ, store.Micros(now))
	if err != nil {
		return Account{}, false, fmt.Errorf("ensure account %s: %w", login, err)
	}
	a, err := Find(ctx, q, platform, login)
	return a, n > 0, err
}

// Owner is a platform account as the platform's events name it.
type Owner struct {
	ExternalID int64 // the platform's account id, which a rename keeps; 0 when unknown
	Login      string
	Type       string
}

// ErrLoginTaken is returned when the login an event names belongs to an
// account of another platform account id: the login was renamed away from
// that account and taken by another, and handing the known account's data
// to the newcomer would cross tenants.
var ErrLoginTaken = errors.New("login held by another platform account")

// EnsureOwner returns the account of o: the one with its platform account
// id, else the one with its login (which takes the id on), creating it
// when missing. A known account whose login changed is renamed (see
// Update). Without an id it is Ensure.
func EnsureOwner(ctx context.Context, q store.Querier, platform string, o Owner) (Account, error) {
	if o.ExternalID == 0 {
		return Ensure(ctx, q, platform, o.Login, o.Type)
	}
	if err := ValidateLogin(o.Login); err != nil {
		return Account{}, fmt.Errorf("ensure account: %w", err)
	}
	for inserted := false; ; inserted = true {
		a, err := findExternal(ctx, q, platform, o.ExternalID)
		if err == nil {
			return Update(ctx, q, a, o)
		}
		if !errors.Is(err, ErrNotFound) {
			return Account{}, err
		}
		var ext sql.NullInt64
		a = Account{Platform: platform}
		err = q.QueryRow(ctx, `SELECT id, login, type, external_id FROM accounts WHERE platform = $1 AND lower(login) = lower($2)`,
			platform, o.Login).Scan(&a.ID, &a.Login, &a.Type, &ext)
		switch {
		case err == nil && ext.Valid:
			// Found by login but not by id: the id differs.
			return Account{}, fmt.Errorf("ensure account %s (id %d): %w", o.Login, o.ExternalID, ErrLoginTaken)
		case err == nil:
			return Update(ctx, q, a, o)
		case !errors.Is(err, store.ErrNotFound):
			return Account{}, fmt.Errorf("find account %s: %w", o.Login, err)
		case inserted:
			return Account{}, fmt.Errorf("ensure account %s (id %d): not found after insert", o.Login, o.ExternalID)
		}
		typ := o.Type
		if typ == "" {
			typ = "Organization"
		}
		now := time.Now()
		// Another writer may take the id or the login first: look again.
		if _, err := q.Exec(ctx, `INSERT INTO accounts (id, platform, login, type, external_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT DO NOTHING`, id.New(id.Account, now), platform, o.Login, typ, o.ExternalID, store.Micros(now)); err != nil {
			return Account{}, fmt.Errorf("ensure account %s: %w", o.Login, err)
		}
	}
}

// Update records what the platform now says of acct, the account of o: its
// platform account id when acct has none yet (and no other account has
// it), its type (the platform's word wins over the default an operator's
// command gave it), and its login when renamed (unless another account
// holds the new login). It returns the account as stored.
func Update(ctx context.Context, q store.Querier, acct Account, o Owner) (Account, error) {
	if o.ExternalID == 0 {
		return acct, nil
	}
	if o.Type != "" && o.Type != acct.Type {
		if _, err := q.Exec(ctx, `UPDATE accounts SET type = $1 WHERE id = $2 AND (external_id IS NULL OR external_id = $3)`,
			o.Type, acct.ID, o.ExternalID); err != nil {
			return Account{}, fmt.Errorf("set the type of account %s: %w", acct.Login, err)
		}
	}
	_, err := q.Exec(ctx, `UPDATE accounts SET external_id = $1 WHERE id = $2 AND external_id IS NULL
AND NOT EXISTS (SELECT 1 FROM accounts o WHERE o.platform = $3 AND o.external_id = $1)`, o.ExternalID, acct.ID, acct.Platform)
	if err != nil {
		return Account{}, fmt.Errorf("set the id of account %s: %w", acct.Login, err)
	}
	if o.Login != "" && o.Login != acct.Login {
		_, err := q.Exec(ctx, `UPDATE accounts SET login = $1 WHERE id = $2 AND external_id = $3
AND NOT EXISTS (SELECT 1 FROM accounts o WHERE o.platform = $4 AND lower(o.login) = lower($1) AND o.id <> $2)`,
			o.Login, acct.ID, o.ExternalID, acct.Platform)
		if err != nil {
			return Account{}, fmt.Errorf("rename account %s to %s: %w", acct.Login, o.Login, err)
		}
	}
	return Get(ctx, q, acct.ID)
}

func findExternal(ctx context.Context, q store.Querier, platform string, externalID int64) (Account, error) {
	return scanAccount(q.QueryRow(ctx, `SELECT id, login, type FROM accounts WHERE platform = $1 AND external_id = $2`,
		platform, externalID), platform, externalID)
}

// Find returns the account with this login.
func Find(ctx context.Context, q store.Querier, platform, login string) (Account, error) {
	return scanAccount(q.QueryRow(ctx, `SELECT id, login, type FROM accounts WHERE platform = $1 AND lower(login) = lower($2)`,
		platform, login), platform, login)
}

// scanAccount reads an account's id, login and type; key names it in
// errors.
func scanAccount(row store.Row, platform string, key any) (Account, error) {
	a := Account{Platform: platform}
	err := row.Scan(&a.ID, &a.Login, &a.Type)
	if errors.Is(err, store.ErrNotFound) {
		return Account{}, ErrNotFound
	}
	if err != nil {
		return Account{}, fmt.Errorf("find account %v: %w", key, err)
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
