package gitea

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/store"
)

// HookEvents are the webhook events a connected repository sends quorum:
// pull requests opened, reopened, closed and edited, pushes to them, and
// their comments (which can ask for a review); and pushes, only because
// Gitea's test delivery is a push, which it does not send to a hook
// without them (services/webhook.PrepareWebhook): quorum answers them 202
// and stores nothing. Gitea's names, as its API's CreateHookOption takes
// them.
var HookEvents = []string{"pull_request_only", "pull_request_sync", "pull_request_comment", "push"}

// Repository is what connecting reads of a repository from Gitea.
type Repository struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	FullName string `json:"full_name"`
	Owner    struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
	} `json:"owner"`
	Private     bool   `json:"private"`
	Empty       bool   `json:"empty"`
	HTMLURL     string `json:"html_url"`
	Permissions *struct {
		Admin bool `json:"admin"`
		Push  bool `json:"push"`
		Pull  bool `json:"pull"`
	} `json:"permissions"`
}

// Connection is a connected repository, as Connect and Disconnect report
// it.
type Connection struct {
	Repository Repository
	// Account is the quorum account the repository's reviews belong to:
	// its owner's, on platform gitea.
	Account account.Account
	// AccountCreated says the account did not exist before.
	AccountCreated bool
	// HookID is Gitea's id of quorum's webhook on the repository.
	HookID int64
	// HookURL is the address Gitea delivers to.
	HookURL string
	// Already says the repository was connected with a working hook to the
	// same address: nothing was changed.
	Already bool
	// CanPush says whether the bot may push (write access): without it
	// Gitea takes its reviews but does not count its approvals.
	CanPush bool
}

// Connect connects owner/repo to quorum: it checks that the bot account
// can administer the repository (creating a webhook needs it), creates the
// webhook to webhookURL (which gets ?repository=<id>) with a secret it
// generates, and records the repository as an installation of the owner's
// account, announcing installation.created. A repository already connected
// to the same address with its webhook still in place is left as it is; one
// whose webhook is gone or points elsewhere gets a new one.
func Connect(ctx context.Context, api *Client, db *store.DB, owner, name, webhookURL string, now time.Time) (Connection, error) {
	if !validName(owner) || !validName(name) {
		return Connection{}, fmt.Errorf("gitea connect: %q is not a repository name (owner/name)", owner+"/"+name)
	}
	hookURL, err := hookAddress(webhookURL)
	if err != nil {
		return Connection{}, err
	}
	repo, err := getRepository(ctx, api, owner, name)
	if err != nil {
		return Connection{}, err
	}
	conn := Connection{Repository: repo, CanPush: repo.Permissions != nil && repo.Permissions.Push}
	if repo.Permissions == nil || !repo.Permissions.Admin {
		return conn, fmt.Errorf("gitea connect: the bot account cannot administer %s, so it cannot create the webhook: make it an administrator of the repository (Settings → Collaborators → Administrator), or of its organization's team that owns it", repo.FullName)
	}
	hookURL = withRepository(hookURL, repo.ID)
	conn.HookURL = hookURL

	known, err := connectedHook(ctx, db.Reader(), repo.ID)
	if err != nil {
		return conn, err
	}
	if known.HookID != 0 && known.URL == hookURL {
		status, err := hookStatus(ctx, api, owner, name, known.HookID)
		if err != nil {
			return conn, err
		}
		if status == hookActive {
			conn.HookID, conn.Already = known.HookID, true
			acct, err := account.Get(ctx, db.Reader(), known.AccountID)
			conn.Account = acct
			return conn, err
		}
	}

	secret, err := newSecret()
	if err != nil {
		return conn, err
	}
	var hook struct {
		ID int64 `json:"id"`
	}
	_, err = api.Do(ctx, http.MethodPost, Path("repos", owner, name, "hooks"), map[string]any{
		"type":   "gitea",
		"active": true,
		"events": HookEvents,
		"config": map[string]string{"url": hookURL, "content_type": "json", "secret": secret},
	}, &hook)
	if err != nil {
		return conn, fmt.Errorf("gitea connect: create the webhook on %s: %w%s", repo.FullName, err, scopeHint(err))
	}
	conn.HookID = hook.ID

	ownerType, err := ownerKind(ctx, api, repo.Owner.Login)
	if err == nil {
		err = db.InTx(ctx, func(tx store.Tx) error {
			return record(ctx, tx, &conn, ownerType, hook.ID, secret, now)
		})
	}
	if err != nil {
		// No webhook without its secret kept: Gitea's deliveries would all
		// be refused.
		_, derr := api.Do(context.WithoutCancel(ctx), http.MethodDelete, Path("repos", owner, name, "hooks", strconv.FormatInt(hook.ID, 10)), nil, nil)
		return conn, errors.Join(fmt.Errorf("gitea connect: %w", err), derr)
	}
	if known.HookID != 0 && known.HookID != hook.ID {
		// The old webhook, to another address: its secret is gone, so it
		// could only fail.
		_, _ = api.Do(ctx, http.MethodDelete, Path("repos", owner, name, "hooks", strconv.FormatInt(known.HookID, 10)), nil, nil)
	}
	return conn, nil
}

// record records a connection: the owner's account, the repository as an
// installation of it, the hook and its secret, and installation.created.
func record(ctx context.Context, tx store.Tx, conn *Connection, ownerType string, hookID int64, secret string, now time.Time) error {
	repo := conn.Repository
	_, ferr := account.Find(ctx, tx, account.PlatformGitea, repo.Owner.Login)
	conn.AccountCreated = errors.Is(ferr, account.ErrNotFound)
	acct, err := account.EnsureOwner(ctx, tx, account.PlatformGitea, account.Owner{ExternalID: repo.Owner.ID, Login: repo.Owner.Login, Type: ownerType})
	if err != nil {
		return err
	}
	conn.Account = acct
	ref := account.RepoRef{Owner: repo.Owner.Login, Name: repo.Name, ExternalID: repo.ID}
	inst, err := account.Install(ctx, tx, acct, repo.ID, []account.RepoRef{ref}, now)
	if err != nil {
		return err
	}
	if inst.AccountID != acct.ID {
		// Recorded before under another account (the owner renamed,
		// or the repository moved): its reviews stay there.
		if conn.Account, err = account.Get(ctx, tx, inst.AccountID); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO gitea_hooks (installation_id, repository_id, hook_id, secret, webhook_url, created_at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (installation_id) DO UPDATE SET repository_id = excluded.repository_id, hook_id = excluded.hook_id, secret = excluded.secret,
  webhook_url = excluded.webhook_url, created_at = excluded.created_at, last_delivery_at = NULL`,
		inst.ID, repo.ID, hookID, secret, conn.HookURL, store.Micros(now))
	if err != nil {
		return fmt.Errorf("record the webhook of %s: %w", repo.FullName, err)
	}
	return event.RecordInstallation(ctx, tx, now, conn.Account.ID, event.InstallationCreated, installationData(conn.Account, repo))
}

// Disconnect removes quorum's webhook from owner/name and records the
// repository's installation as deleted, announcing installation.deleted.
// Its reviews stay in the API. A webhook already removed on Gitea is not
// an error; a repository quorum never connected is.
func Disconnect(ctx context.Context, api *Client, db *store.DB, owner, name string, now time.Time) (Connection, error) {
	if !validName(owner) || !validName(name) {
		return Connection{}, fmt.Errorf("gitea disconnect: %q is not a repository name (owner/name)", owner+"/"+name)
	}
	repo, err := getRepository(ctx, api, owner, name)
	if err != nil {
		return Connection{}, err
	}
	conn := Connection{Repository: repo}
	known, err := connectedHook(ctx, db.Reader(), repo.ID)
	if err != nil {
		return conn, err
	}
	if known.HookID == 0 {
		return conn, fmt.Errorf("gitea disconnect: %s is not connected to this quorum", repo.FullName)
	}
	conn.HookID, conn.HookURL = known.HookID, known.URL
	_, err = api.Do(ctx, http.MethodDelete, Path("repos", owner, name, "hooks", strconv.FormatInt(known.HookID, 10)), nil, nil)
	if err != nil && StatusOf(err) != http.StatusNotFound {
		return conn, fmt.Errorf("gitea disconnect: delete the webhook of %s: %w%s", repo.FullName, err, scopeHint(err))
	}
	err = db.InTx(ctx, func(tx store.Tx) error {
		inst, err := account.FindInstallation(ctx, tx, account.PlatformGitea, repo.ID)
		if err != nil {
			return err
		}
		acct, err := account.Get(ctx, tx, inst.AccountID)
		if err != nil {
			return err
		}
		conn.Account = acct
		if _, err := account.Uninstall(ctx, tx, inst, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM gitea_hooks WHERE installation_id = $1`, inst.ID); err != nil {
			return fmt.Errorf("forget the webhook of %s: %w", repo.FullName, err)
		}
		return event.RecordInstallation(ctx, tx, now, acct.ID, event.InstallationDeleted, installationData(acct, repo))
	})
	if err != nil {
		return conn, fmt.Errorf("gitea disconnect: %w", err)
	}
	return conn, nil
}

// TestDelivery asks Gitea to send the hook a test delivery (a push of the
// default branch's head) and returns false, with no error, when the
// repository has no commit yet, and so nothing to send.
func TestDelivery(ctx context.Context, api *Client, conn Connection) (bool, error) {
	if conn.Repository.Empty {
		return false, nil
	}
	_, err := api.Do(ctx, http.MethodPost, Path("repos", conn.Repository.Owner.Login, conn.Repository.Name, "hooks", strconv.FormatInt(conn.HookID, 10), "tests"), nil, nil)
	if err != nil {
		return false, fmt.Errorf("gitea connect: ask for a test delivery: %w", err)
	}
	return true, nil
}

// LastDelivery returns when a delivery signed with the repository's hook
// secret last reached quorum (zero when none has).
func LastDelivery(ctx context.Context, db *store.DB, repositoryID int64) (time.Time, error) {
	var at *int64
	err := db.Reader().QueryRow(ctx, `SELECT last_delivery_at FROM gitea_hooks WHERE repository_id = $1`, repositoryID).Scan(&at)
	if err != nil || at == nil {
		if errors.Is(err, store.ErrNotFound) {
			err = nil
		}
		return time.Time{}, err
	}
	return time.UnixMicro(*at), nil
}

// hookAddress checks the address Gitea should deliver to.
func hookAddress(webhookURL string) (string, error) {
	u, err := url.Parse(webhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return "", fmt.Errorf("gitea connect: the webhook URL %q must be http(s)://host[:port]/gitea/webhook, without credentials", webhookURL)
	}
	if u.Query().Has("repository") {
		return "", fmt.Errorf("gitea connect: the webhook URL %q already names a repository; give it without ?repository=", webhookURL)
	}
	return u.String(), nil
}

// withRepository adds the repository's id to the hook's address: Gitea's
// deliveries name no hook, and intake finds the secret to check by it.
func withRepository(hookURL string, id int64) string {
	u, _ := url.Parse(hookURL) // checked by hookAddress
	q := u.Query()
	q.Set("repository", strconv.FormatInt(id, 10))
	u.RawQuery = q.Encode()
	return u.String()
}

func getRepository(ctx context.Context, api *Client, owner, name string) (Repository, error) {
	var repo Repository
	_, err := api.Do(ctx, http.MethodGet, Path("repos", owner, name), nil, &repo)
	switch StatusOf(err) {
	case 0:
		if err != nil {
			return repo, err
		}
		if repo.ID == 0 || repo.Owner.Login == "" {
			return repo, fmt.Errorf("gitea: %s/%s: Gitea's answer names no repository id or owner", owner, name)
		}
		return repo, nil
	case http.StatusNotFound:
		return repo, fmt.Errorf("gitea: no repository %s/%s on %s (or it is private and the bot account cannot see it)", owner, name, api.BaseURL())
	case http.StatusUnauthorized, http.StatusForbidden:
		return repo, fmt.Errorf("gitea: %s/%s: %w: check QUORUM_GITEA_TOKEN (a token of the bot account with the write:repository, write:issue, read:user and read:organization scopes)", owner, name, err)
	default:
		return repo, err
	}
}

// scopeHint explains a 403 on what the bot may do.
func scopeHint(err error) string {
	if StatusOf(err) == http.StatusForbidden {
		return " (the token needs the write:repository scope)"
	}
	return ""
}

// ownerKind returns "Organization" when login is one, else "User".
func ownerKind(ctx context.Context, api *Client, login string) (string, error) {
	_, err := api.Do(ctx, http.MethodGet, Path("orgs", login), nil, nil)
	switch StatusOf(err) {
	case 0:
		if err != nil {
			return "", err
		}
		return "Organization", nil
	case http.StatusNotFound:
		return "User", nil
	default:
		return "", err
	}
}

type hookState int

const (
	hookGone hookState = iota
	hookInactive
	hookActive
)

// hookStatus says whether the hook is still on the repository and active.
func hookStatus(ctx context.Context, api *Client, owner, name string, id int64) (hookState, error) {
	var h struct {
		Active bool `json:"active"`
	}
	_, err := api.Do(ctx, http.MethodGet, Path("repos", owner, name, "hooks", strconv.FormatInt(id, 10)), nil, &h)
	switch {
	case StatusOf(err) == http.StatusNotFound:
		return hookGone, nil
	case err != nil:
		return hookGone, fmt.Errorf("gitea connect: read the webhook of %s/%s: %w", owner, name, err)
	case !h.Active:
		return hookInactive, nil
	}
	return hookActive, nil
}

// knownHook is quorum's record of a connected repository's hook.
type knownHook struct {
	AccountID string
	HookID    int64
	URL       string
}

func connectedHook(ctx context.Context, q store.Querier, repositoryID int64) (knownHook, error) {
	var k knownHook
	err := q.QueryRow(ctx, `SELECT i.account_id, h.hook_id, h.webhook_url FROM gitea_hooks h JOIN installations i ON i.id = h.installation_id
WHERE h.repository_id = $1`, repositoryID).Scan(&k.AccountID, &k.HookID, &k.URL)
	if errors.Is(err, store.ErrNotFound) {
		return knownHook{}, nil
	}
	if err != nil {
		return k, fmt.Errorf("read the webhook of repository %d: %w", repositoryID, err)
	}
	return k, nil
}

func installationData(acct account.Account, repo Repository) event.InstallationData {
	return event.InstallationData{
		InstallationID: repo.ID,
		Platform:       account.PlatformGitea,
		Account:        event.InstallationAccount{Login: acct.Login, Type: acct.Type},
		Repositories:   []event.InstallationRepo{{Owner: repo.Owner.Login, Repo: repo.Name}},
	}
}

// newSecret returns a webhook secret: 32 random bytes, in hex.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("gitea connect: generate the webhook secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// SplitRepo splits "owner/name".
func SplitRepo(s string) (owner, name string, ok bool) {
	owner, name, ok = strings.Cut(s, "/")
	return owner, name, ok && validName(owner) && validName(name)
}
