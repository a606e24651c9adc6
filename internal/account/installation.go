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

// Installation is the platform's app installed on an account: the
// repositories it was given are the ones quorum reviews.
type Installation struct {
	ID         string
	AccountID  string
	Platform   string
	ExternalID int64 // the platform's installation id
	Suspended  bool
	Deleted    bool
}

// RepoRef names a repository on the platform.
type RepoRef struct {
	Owner      string
	Name       string
	ExternalID int64 // the platform's repository id; 0 when unknown
}

// Install records that the app was installed (or installed again) on the
// account, as the platform's installation externalID, with repos: the
// installation is current (neither suspended nor deleted) and holds repos.
// A known installation stays on the account it was first recorded on, as
// do its repositories: the installation returned says which.
func Install(ctx context.Context, q store.Querier, acct Account, externalID int64, repos []RepoRef, now time.Time) (Installation, error) {
	_, err := q.Exec(ctx, `INSERT INTO installations (id, account_id, platform, external_id, created_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (platform, external_id) DO UPDATE SET suspended_at = NULL, deleted_at = NULL`,
		id.New(id.Installation, now), acct.ID, acct.Platform, externalID, store.Micros(now))
	if err != nil {
		return Installation{}, fmt.Errorf("install %d on %s: %w", externalID, acct.Login, err)
	}
	inst, err := FindInstallation(ctx, q, acct.Platform, externalID)
	if err != nil {
		return Installation{}, err
	}
	if _, err := AddRepositories(ctx, q, inst, repos, now); err != nil {
		return Installation{}, err
	}
	return inst, nil
}

// EnsureInstallation returns the installation externalID, recording it on
// acct when quorum has not heard of it (its installation event was missed,
// or came before quorum was set up). It leaves a known one as it is.
func EnsureInstallation(ctx context.Context, q store.Querier, acct Account, externalID int64, now time.Time) (Installation, error) {
	_, err := q.Exec(ctx, `INSERT INTO installations (id, account_id, platform, external_id, created_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (platform, external_id) DO NOTHING`,
		id.New(id.Installation, now), acct.ID, acct.Platform, externalID, store.Micros(now))
	if err != nil {
		return Installation{}, fmt.Errorf("ensure installation %d: %w", externalID, err)
	}
	return FindInstallation(ctx, q, acct.Platform, externalID)
}

// FindInstallation returns the platform's installation externalID, or
// ErrNotFound.
func FindInstallation(ctx context.Context, q store.Querier, platform string, externalID int64) (Installation, error) {
	inst := Installation{Platform: platform, ExternalID: externalID}
	var suspended, deleted sql.NullInt64
	err := q.QueryRow(ctx, `SELECT id, account_id, suspended_at, deleted_at FROM installations WHERE platform = $1 AND external_id = $2`,
		platform, externalID).Scan(&inst.ID, &inst.AccountID, &suspended, &deleted)
	if errors.Is(err, store.ErrNotFound) {
		return Installation{}, ErrNotFound
	}
	if err != nil {
		return Installation{}, fmt.Errorf("find installation %d: %w", externalID, err)
	}
	inst.Suspended, inst.Deleted = suspended.Valid, deleted.Valid
	return inst, nil
}

// Suspend marks the installation suspended (GitHub sends it no events
// then) or, with suspended false, current again.
func Suspend(ctx context.Context, q store.Querier, inst Installation, suspended bool, now time.Time) error {
	var at any
	if suspended {
		at = store.Micros(now)
	}
	if _, err := q.Exec(ctx, `UPDATE installations SET suspended_at = $1 WHERE id = $2`, at, inst.ID); err != nil {
		return fmt.Errorf("suspend installation %d: %w", inst.ExternalID, err)
	}
	return nil
}

// Uninstall marks the installation deleted and its repositories removed,
// and returns the repositories it held.
func Uninstall(ctx context.Context, q store.Querier, inst Installation, now time.Time) ([]Repository, error) {
	repos, err := InstallationRepositories(ctx, q, inst)
	if err != nil {
		return nil, err
	}
	if _, err := q.Exec(ctx, `UPDATE installations SET deleted_at = $1 WHERE id = $2`, store.Micros(now), inst.ID); err != nil {
		return nil, fmt.Errorf("uninstall %d: %w", inst.ExternalID, err)
	}
	if _, err := q.Exec(ctx, `UPDATE repositories SET removed_at = $1 WHERE installation_id = $2 AND removed_at IS NULL`,
		store.Micros(now), inst.ID); err != nil {
		return nil, fmt.Errorf("uninstall %d: %w", inst.ExternalID, err)
	}
	return repos, nil
}

// AddRepositories gives the installation repos (creating them, or taking
// them back after a removal) and returns them as stored.
func AddRepositories(ctx context.Context, q store.Querier, inst Installation, repos []RepoRef, now time.Time) ([]Repository, error) {
	out := make([]Repository, 0, len(repos))
	for _, ref := range repos {
		var ext any
		if ref.ExternalID != 0 {
			ext = ref.ExternalID
		}
		_, err := q.Exec(ctx, `INSERT INTO repositories (id, account_id, installation_id, owner, name, external_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (account_id, lower(owner), lower(name)) DO UPDATE SET installation_id = excluded.installation_id,
  external_id = COALESCE(excluded.external_id, repositories.external_id), removed_at = NULL`,
			id.New(id.Repository, now), inst.AccountID, inst.ID, ref.Owner, ref.Name, ext, store.Micros(now))
		if err != nil {
			return nil, fmt.Errorf("add repository %s/%s: %w", ref.Owner, ref.Name, err)
		}
		r, err := FindRepository(ctx, q, inst.AccountID, ref.Owner, ref.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RemoveRepositories takes repos away from the installation (their reviews
// stay readable) and returns those it held.
func RemoveRepositories(ctx context.Context, q store.Querier, inst Installation, repos []RepoRef, now time.Time) ([]Repository, error) {
	var out []Repository
	for _, ref := range repos {
		r, err := FindRepository(ctx, q, inst.AccountID, ref.Owner, ref.Name)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		n, err := q.Exec(ctx, `UPDATE repositories SET removed_at = $1 WHERE id = $2 AND installation_id = $3 AND removed_at IS NULL`,
			store.Micros(now), r.ID, inst.ID)
		if err != nil {
			return nil, fmt.Errorf("remove repository %s/%s: %w", ref.Owner, ref.Name, err)
		}
		if n > 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

// InstallationRepositories lists the repositories the installation holds
// now, by owner and name.
func InstallationRepositories(ctx context.Context, q store.Querier, inst Installation) ([]Repository, error) {
	rows, err := q.Query(ctx, `SELECT id, owner, name FROM repositories WHERE installation_id = $1 AND removed_at IS NULL ORDER BY lower(owner), lower(name)`, inst.ID)
	if err != nil {
		return nil, fmt.Errorf("list repositories of installation %d: %w", inst.ExternalID, err)
	}
	defer rows.Close()
	var out []Repository
	for rows.Next() {
		r := Repository{AccountID: inst.AccountID}
		if err := rows.Scan(&r.ID, &r.Owner, &r.Name); err != nil {
			return nil, fmt.Errorf("list repositories of installation %d: %w", inst.ExternalID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list repositories of installation %d: %w", inst.ExternalID, err)
	}
	return out, nil
}

// FindRepository is the account's repository owner/name, compared without
// case, or ErrNotFound: a repository of another account is not found.
func FindRepository(ctx context.Context, q store.Querier, accountID, owner, name string) (Repository, error) {
	r := Repository{AccountID: accountID}
	err := q.QueryRow(ctx, `SELECT id, owner, name FROM repositories WHERE account_id = $1 AND lower(owner) = lower($2) AND lower(name) = lower($3)`,
		accountID, owner, name).Scan(&r.ID, &r.Owner, &r.Name)
	if errors.Is(err, store.ErrNotFound) {
		return Repository{}, ErrNotFound
	}
	if err != nil {
		return Repository{}, fmt.Errorf("load repository %s/%s: %w", owner, name, err)
	}
	return r, nil
}

// Holds reports whether the platform's installation externalID holds
// owner/name now, as recorded.
func Holds(ctx context.Context, q store.Querier, platform string, externalID int64, owner, name string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM repositories r JOIN installations i ON i.id = r.installation_id
WHERE i.platform = $1 AND i.external_id = $2 AND lower(r.owner) = lower($3) AND lower(r.name) = lower($4) AND r.removed_at IS NULL`,
		platform, externalID, owner, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("repositories of installation %d: %w", externalID, err)
	}
	return n > 0, nil
}
