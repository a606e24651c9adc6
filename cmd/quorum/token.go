package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/token"
)

const tokenUsage = `Usage: quorum token <create|list|revoke> [flags]

Personal access tokens authenticate API requests ("Authorization: Bearer qrm_…").
A token belongs to one account and sees only that account's repositories.
Only a hash of a token is stored: it is shown once, when created.

Commands:
  create    issue a token
  list      list tokens (never their secrets)
  revoke    revoke a token; the next request carrying it is refused

Scopes: ` + "reviews:read, findings:read, webhooks:read, webhooks:write" + `
`

func runToken(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, tokenUsage)
		return usageError{errors.New("token: no subcommand given")}
	}
	switch args[0] {
	case "create":
		return runTokenCreate(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return runTokenList(ctx, args[1:], getenv, stdout)
	case "revoke":
		return runTokenRevoke(ctx, args[1:], getenv, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, tokenUsage)
		return nil
	default:
		fmt.Fprint(stderr, tokenUsage)
		return usageError{fmt.Errorf("token: unknown subcommand %q", args[0])}
	}
}

// tokenJSON is a token as --json shows it.
type tokenJSON struct {
	token.Token
	Status string `json:"status"`
	Secret string `json:"token,omitempty"`
}

func status(t token.Token, now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return "revoked"
	case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
		return "expired"
	}
	return "active"
}

func runTokenCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("create", "quorum token create --account LOGIN --scope SCOPE [--scope SCOPE…] [flags]",
		"Issues a personal access token for an account and prints it alone on the first\nline of standard output; details go to standard error. The token is not shown again.")
	db := addDBFlags(c, getenv)
	acct := c.String("account", "", "", "login of the account (a GitHub or Gitea user or organization) the token belongs to (required)")
	platform := addPlatformFlag(c)
	var scopes stringList
	c.Var(&scopes, "scope", "", "scope to grant: reviews:read, findings:read, webhooks:read or webhooks:write (repeatable, or comma-separated; required)")
	name := c.String("name", "", "", "a name to recognise the token by in token list")
	expires := c.String("expires", "", "", "lifetime, e.g. 720h or 90d, at most 100 years; omit it (or say never) for a token that never expires")
	asJSON := c.Bool("json", "", false, "print the token and its details as one JSON object on standard output")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if *acct == "" {
		return usageError{errors.New("token create: --account is required")}
	}
	if err := checkPlatform("token create", *platform); err != nil {
		return err
	}
	if err := account.ValidateLogin(*acct); err != nil {
		return usageError{fmt.Errorf("token create: --account: %w", err)}
	}
	if len(scopes) == 0 {
		return usageError{fmt.Errorf("token create: at least one --scope is required (%s)", strings.Join(token.AllScopes, ", "))}
	}
	for _, s := range scopes {
		if !token.ValidScope(s) {
			return usageError{fmt.Errorf("token create: unknown scope %q (known: %s)", s, strings.Join(token.AllScopes, ", "))}
		}
	}
	ttl, err := parseTTL(*expires)
	if err != nil {
		return usageError{fmt.Errorf("token create: --expires: %w", err)}
	}
	d, err := db.open(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer d.Close()
	a, created, err := account.EnsureCreated(ctx, d.Writer(), *platform, *acct, "")
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(stderr, "quorum: created account %s: no account had that login yet (check its spelling and --platform; %s)\n", a.Login, takeOver(*platform))
	}
	store := token.NewStore(d, time.Now)
	t, secret, err := store.Create(ctx, a.ID, *name, scopes, ttl)
	if err != nil {
		return err
	}
	t.Account = a.Login
	if *asJSON {
		return json.NewEncoder(stdout).Encode(tokenJSON{Token: t, Status: status(t, time.Now()), Secret: secret})
	}
	fmt.Fprintln(stdout, secret)
	exp := "never"
	if t.ExpiresAt != nil {
		exp = t.ExpiresAt.Format(time.RFC3339)
	}
	fmt.Fprintf(stderr, "created %s for account %s with scopes %s, expires %s\nstore it now: it is not shown again\n",
		t.ID, a.Login, strings.Join(t.Scopes, " "), exp)
	return nil
}

func runTokenList(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("list", "quorum token list [flags]", fmt.Sprintf("Lists tokens, oldest first, without their secrets. LAST USED is what quorum serve\nhas written: a use shows within %s, and a token in steady use is written\nonce a minute, so it is exact to the minute.", token.FlushInterval))
	db := addDBFlags(c, getenv)
	acct := c.String("account", "", "", "only this account's tokens")
	platform := addPlatformFlag(c)
	asJSON := c.Bool("json", "", false, "print a JSON array")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	d, err := db.open(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer d.Close()
	accountID := ""
	if *acct != "" {
		if err := checkPlatform("token list", *platform); err != nil {
			return err
		}
		a, err := account.Find(ctx, d.Reader(), *platform, *acct)
		if errors.Is(err, account.ErrNotFound) {
			return usageError{fmt.Errorf("token list: no account %q on %s", *acct, *platform)}
		}
		if err != nil {
			return err
		}
		accountID = a.ID
	}
	tokens, err := token.NewStore(d, time.Now).List(ctx, accountID)
	if err != nil {
		return err
	}
	now := time.Now()
	if *asJSON {
		out := make([]tokenJSON, 0, len(tokens))
		for _, t := range tokens {
			out = append(out, tokenJSON{Token: t, Status: status(t, now)})
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCOUNT\tNAME\tSCOPES\tSTATUS\tCREATED\tEXPIRES\tLAST USED")
	for _, t := range tokens {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Account, dash(t.Name), strings.Join(t.Scopes, ","),
			status(t, now), t.CreatedAt.Format(time.RFC3339), optTime(t.ExpiresAt), optTime(t.LastUsedAt))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func runTokenRevoke(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("revoke", "quorum token revoke [flags] TOKEN_ID",
		"Revokes a token by its id (tok_…, from token list). The next request that carries\nit is refused, by every replica sharing the database.")
	c.maxArgs = 1
	db := addDBFlags(c, getenv)
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if len(c.args) != 1 {
		return usageError{errors.New("token revoke: give exactly one token id (tok_…)")}
	}
	d, err := db.open(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer d.Close()
	t, err := token.NewStore(d, time.Now).Revoke(ctx, c.args[0])
	switch {
	case errors.Is(err, token.ErrNoToken):
		return usageError{fmt.Errorf("token revoke: no token %s", c.args[0])}
	case errors.Is(err, token.ErrRevoked):
		fmt.Fprintf(stdout, "%s was already revoked\n", t.ID)
		return nil
	case err != nil:
		return err
	}
	fmt.Fprintf(stdout, "revoked %s (account %s)\n", t.ID, t.Account)
	return nil
}
