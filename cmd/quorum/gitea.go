package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/gitea"
	"github.com/quorum-review/quorum/internal/store"
)

const giteaUsage = `Usage: quorum gitea <connect|disconnect> --repo OWNER/NAME [flags]

Connects repositories of a Gitea (or Forgejo) to quorum. Gitea has no App:
quorum acts as a bot account, whose access token is read from the environment
variable QUORUM_GITEA_TOKEN only (never a flag), and each repository sends
its pull requests to quorum through a webhook that connect creates.

Commands:
  connect      create the repository's webhook (with a secret quorum generates
               and keeps), record the repository under its owner's account,
               and check that a test delivery reaches quorum
  disconnect   remove the webhook; the repository's reviews stay in the API

The bot account must be an administrator of the repository to create its
webhook, and needs write access for its approvals to count. See docs/gitea.md.
`

// envGiteaToken holds the bot account's access token: only the environment,
// so it is in neither ps nor a shell's history.
const envGiteaToken = "QUORUM_GITEA_TOKEN"

func runGitea(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, giteaUsage)
		return usageError{errors.New("gitea: no subcommand given")}
	}
	switch args[0] {
	case "connect":
		return runGiteaConnect(ctx, args[1:], getenv, stdout)
	case "disconnect":
		return runGiteaDisconnect(ctx, args[1:], getenv, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, giteaUsage)
		return nil
	default:
		fmt.Fprint(stderr, giteaUsage)
		return usageError{fmt.Errorf("gitea: unknown subcommand %q", args[0])}
	}
}

// addGiteaURLFlag is the Gitea URL flag serve and the gitea commands share.
func addGiteaURLFlag(c *command) *string {
	return c.String("gitea-url", "QUORUM_GITEA_URL", "", "the Gitea (or Forgejo) quorum reviews for, as quorum reaches it: http(s)://host[:port][/path]; the bot account's token comes from "+envGiteaToken)
}

// giteaClient makes the API client from --gitea-url and the token in the
// environment.
func giteaClient(url string, getenv func(string) string, hc *http.Client) (*gitea.Client, error) {
	if url == "" {
		return nil, usageError{errors.New("--gitea-url (or QUORUM_GITEA_URL) is required: the address of the Gitea, as quorum reaches it")}
	}
	token := strings.TrimSpace(getenv(envGiteaToken))
	if token == "" {
		return nil, usageError{errors.New(envGiteaToken + " is not set: put the bot account's access token there (Gitea: Settings → Applications → Generate Token, with the write:repository, write:issue, read:user and read:organization scopes; see docs/gitea.md)")}
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	api, err := gitea.NewClient(url, token, hc, buildVersion())
	if err != nil {
		return nil, usageError{err}
	}
	return api, nil
}

// repoFlag reads --repo OWNER/NAME.
func repoFlag(cmd, repo string) (owner, name string, err error) {
	if repo == "" {
		return "", "", usageError{fmt.Errorf("gitea %s: --repo OWNER/NAME is required", cmd)}
	}
	owner, name, ok := gitea.SplitRepo(repo)
	if !ok {
		return "", "", usageError{fmt.Errorf("gitea %s: --repo %q is not OWNER/NAME", cmd, repo)}
	}
	return owner, name, nil
}

// defaultWebhookURL is where serve listening on addr takes Gitea's
// deliveries.
func defaultWebhookURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageError{fmt.Errorf("--addr %q: %w", addr, err)}
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/gitea/webhook", nil
}

func runGiteaConnect(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("connect", "quorum gitea connect --repo OWNER/NAME [flags]",
		"Creates the repository's webhook to quorum, with a secret it generates and keeps in\nquorum's database, records the repository under its owner's account (announcing\ninstallation.created), then asks Gitea for a test delivery and waits for it.\nConnecting a repository again with its webhook in place changes nothing.")
	db := addDBFlags(c, getenv)
	giteaURL := addGiteaURLFlag(c)
	repo := c.String("repo", "", "", "the repository to connect, OWNER/NAME (required)")
	addr := c.String("addr", "QUORUM_ADDR", "127.0.0.1:8080", "serve's --addr, for the default --webhook-url")
	webhookURL := c.String("webhook-url", "QUORUM_GITEA_WEBHOOK_URL", "", "the address Gitea delivers to (default http://<--addr>/gitea/webhook)")
	wait := c.Duration("wait", "", 15*time.Second, "how long to wait for the test delivery to reach quorum (0: do not test)")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	owner, name, err := repoFlag("connect", *repo)
	if err != nil {
		return err
	}
	api, err := giteaClient(*giteaURL, getenv, nil)
	if err != nil {
		return err
	}
	target := *webhookURL
	if target == "" {
		if target, err = defaultWebhookURL(*addr); err != nil {
			return err
		}
	}
	d, err := db.open(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer d.Close()
	conn, err := gitea.Connect(ctx, api, d, owner, name, target, time.Now())
	if err != nil {
		return err
	}
	r := conn.Repository
	if conn.Already {
		fmt.Fprintf(stdout, "%s is already connected: webhook %d delivers to %s\n", r.FullName, conn.HookID, conn.HookURL)
	} else {
		fmt.Fprintf(stdout, "connected %s (Gitea repository %d): webhook %d delivers %s to %s\n",
			r.FullName, r.ID, conn.HookID, strings.Join(gitea.HookEvents, ", "), conn.HookURL)
	}
	created := ""
	if conn.AccountCreated {
		created = " (created now)"
	}
	fmt.Fprintf(stdout, "its reviews belong to the gitea account %s%s: quorum token create --platform gitea --account %s …\n",
		conn.Account.Login, created, conn.Account.Login)
	if !conn.CanPush {
		fmt.Fprintf(stdout, "note: the bot account cannot push to %s, so Gitea will not count its approvals; give it write access\n", r.FullName)
	}
	if *wait <= 0 {
		return nil
	}
	return awaitTestDelivery(ctx, api, d, conn, *wait, stdout)
}

// awaitTestDelivery asks Gitea for a test delivery and says whether it came
// within wait, and if not, what usually stops it.
func awaitTestDelivery(ctx context.Context, api *gitea.Client, d *store.DB, conn gitea.Connection, wait time.Duration, stdout io.Writer) error {
	before, err := gitea.LastDelivery(ctx, d, conn.Repository.ID)
	if err != nil {
		return err
	}
	sent, err := gitea.TestDelivery(ctx, api, conn)
	if err != nil {
		return err
	}
	if !sent {
		fmt.Fprintf(stdout, "no test delivery: %s has no commit yet; the first pull request will be the first delivery\n", conn.Repository.FullName)
		return nil
	}
	start := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		at, err := gitea.LastDelivery(ctx, d, conn.Repository.ID)
		if err != nil {
			return err
		}
		if at.After(before) {
			fmt.Fprintf(stdout, "the test delivery reached quorum in %s\n", time.Since(start).Round(10*time.Millisecond))
			return nil
		}
		if time.Since(start) > wait {
			fmt.Fprintf(stdout, `warning: no test delivery reached quorum within %s. Check that:
  - quorum serve runs with --gitea-url and QUORUM_GITEA_TOKEN, on the same database, and listens at %s;
  - Gitea can reach that address, and is allowed to: Gitea delivers only to hosts its
    [webhook] ALLOWED_HOST_LIST allows (default "external": a quorum on a private network
    or on this host needs e.g. ALLOWED_HOST_LIST = private, or loopback, or its host name);
  - Gitea's own record of the delivery (repository Settings → Webhooks → the hook → Recent Deliveries).
`, wait, conn.HookURL)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func runGiteaDisconnect(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("disconnect", "quorum gitea disconnect --repo OWNER/NAME [flags]",
		"Removes quorum's webhook from the repository and records its installation as\ndeleted (announcing installation.deleted). Its reviews stay in the API.")
	db := addDBFlags(c, getenv)
	giteaURL := addGiteaURLFlag(c)
	repo := c.String("repo", "", "", "the repository to disconnect, OWNER/NAME (required)")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	owner, name, err := repoFlag("disconnect", *repo)
	if err != nil {
		return err
	}
	api, err := giteaClient(*giteaURL, getenv, nil)
	if err != nil {
		return err
	}
	d, err := db.open(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer d.Close()
	conn, err := gitea.Disconnect(ctx, api, d, owner, name, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "disconnected %s: webhook %d removed; its reviews stay with the gitea account %s\n",
		conn.Repository.FullName, conn.HookID, conn.Account.Login)
	return nil
}

// addPlatformFlag is --platform of the commands that name an account.
func addPlatformFlag(c *command) *string {
	return c.String("platform", "", account.PlatformGitHub, "the platform of the account: github or gitea (the same login on two platforms is two accounts)")
}

// checkPlatform checks --platform.
func checkPlatform(cmd, p string) error {
	switch p {
	case account.PlatformGitHub, account.PlatformGitea:
		return nil
	}
	return usageError{fmt.Errorf("%s: --platform must be github or gitea, not %q", cmd, p)}
}

// takeOver says what becomes of an account created from a login alone.
func takeOver(platform string) string {
	if platform == account.PlatformGitea {
		return "quorum gitea connect of one of its repositories will take it over"
	}
	return "the GitHub App's installation on it will take it over"
}
