package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/webhook"
)

const webhookUsage = `Usage: quorum webhook <create|list|delete|deliveries|redeliver> [flags]

Webhook endpoints receive signed event deliveries (` + "review.completed, review.failed,\nfinding.created, installation.created, installation.deleted" + `).
These commands work on the database directly, for operators; customers use
the API (/v1/webhooks) with a token holding webhooks:read or webhooks:write.

Commands:
  create       register an endpoint for an account and print its secret, once
  list         list endpoints (never their secrets)
  delete       delete an endpoint; its pending deliveries stop
  deliveries   list an endpoint's deliveries, newest first
  redeliver    send a delivery again, with the same delivery id

Run "quorum webhook <command> --help" for a command's flags.
`

func runWebhook(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, webhookUsage)
		return usageError{errors.New("webhook: no subcommand given")}
	}
	switch args[0] {
	case "create":
		return runWebhookCreate(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return runWebhookList(ctx, args[1:], getenv, stdout)
	case "delete":
		return runWebhookDelete(ctx, args[1:], getenv, stdout)
	case "deliveries":
		return runWebhookDeliveries(ctx, args[1:], getenv, stdout)
	case "redeliver":
		return runWebhookRedeliver(ctx, args[1:], getenv, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, webhookUsage)
		return nil
	default:
		fmt.Fprint(stderr, webhookUsage)
		return usageError{fmt.Errorf("webhook: unknown subcommand %q", args[0])}
	}
}

// endpointJSON is an endpoint as --json shows it.
type endpointJSON struct {
	webhook.Endpoint
	Account string `json:"account"`
	Secret  string `json:"secret,omitempty"`
}

// openDB opens the database quietly, as the operator commands do.
func (d dbConfig) openQuiet(ctx context.Context) (*store.DB, error) {
	return d.open(ctx, slog.New(slog.DiscardHandler))
}

func runWebhookCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("create", "quorum webhook create --account LOGIN --url URL [--event EVENT…] [flags]",
		"Registers a webhook endpoint for an account and prints its signing secret alone\non the first line of standard output; details go to standard error. The secret\nis not shown again (quorum webhook list never shows it).")
	db := addDBFlags(c, getenv)
	acct := c.String("account", "", "", "login of the account (a GitHub or Gitea user or organization) the endpoint belongs to (required)")
	platform := addPlatformFlag(c)
	url := c.String("url", "", "", "http or https URL to deliver events to (required)")
	var events stringList
	c.Var(&events, "event", "", "event to subscribe to: "+strings.Join(event.Names, ", ")+" (repeatable, or comma-separated; default every event)")
	description := c.String("description", "", "", "a note about the endpoint")
	secret := c.String("secret", "", "", "signing secret of your own, 16 to 256 characters (default: a generated whsec_… secret)")
	asJSON := c.Bool("json", "", false, "print the endpoint and its secret as one JSON object on standard output")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if *acct == "" {
		return usageError{errors.New("webhook create: --account is required")}
	}
	if err := account.ValidateLogin(*acct); err != nil {
		return usageError{fmt.Errorf("webhook create: --account: %w", err)}
	}
	if *url == "" {
		return usageError{errors.New("webhook create: --url is required")}
	}
	if err := checkPlatform("webhook create", *platform); err != nil {
		return err
	}
	d, err := db.openQuiet(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	a, err := account.Ensure(ctx, d.Writer(), *platform, *acct, "")
	if err != nil {
		return err
	}
	e, key, err := webhook.Create(ctx, d.Writer(), a.ID, *url, events, *description, *secret, time.Now())
	var ve *webhook.ValidationError
	if errors.As(err, &ve) {
		return usageError{fmt.Errorf("webhook create: %w", err)}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		warnNonPublic(stderr, e.URL)
		return json.NewEncoder(stdout).Encode(endpointJSON{Endpoint: e, Account: a.Login, Secret: key})
	}
	fmt.Fprintln(stdout, key)
	fmt.Fprintf(stderr, "created %s for account %s: %s, events %s\nstore the secret now: it is not shown again\n",
		e.ID, a.Login, e.URL, strings.Join(e.Events, " "))
	warnNonPublic(stderr, e.URL)
	return nil
}

func runWebhookList(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("list", "quorum webhook list [flags]", "Lists live webhook endpoints, newest first, without their secrets.")
	db := addDBFlags(c, getenv)
	acct := c.String("account", "", "", "only this account's endpoints")
	platform := addPlatformFlag(c)
	asJSON := c.Bool("json", "", false, "print a JSON array")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	d, err := db.openQuiet(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	accountID := ""
	if *acct != "" {
		if err := checkPlatform("webhook list", *platform); err != nil {
			return err
		}
		a, err := account.Find(ctx, d.Reader(), *platform, *acct)
		if errors.Is(err, account.ErrNotFound) {
			return usageError{fmt.Errorf("webhook list: no account %q on %s", *acct, *platform)}
		}
		if err != nil {
			return err
		}
		accountID = a.ID
	}
	endpoints, err := webhook.ListAll(ctx, d.Reader(), accountID)
	if err != nil {
		return err
	}
	logins := map[string]string{}
	out := make([]endpointJSON, 0, len(endpoints))
	for _, e := range endpoints {
		if _, ok := logins[e.AccountID]; !ok {
			a, err := account.Get(ctx, d.Reader(), e.AccountID)
			if err != nil {
				return fmt.Errorf("webhook list: account of %s: %w", e.ID, err)
			}
			logins[e.AccountID] = a.Login
		}
		out = append(out, endpointJSON{Endpoint: e, Account: logins[e.AccountID]})
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCOUNT\tURL\tEVENTS\tSTATUS\tCREATED\tDESCRIPTION")
	for _, e := range out {
		events := strings.Join(e.Events, ",")
		if slices.Equal(e.Events, event.Names) {
			events = "all"
		}
		state := "active"
		if e.Disabled {
			state = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Account, e.URL, events, state, e.CreatedAt.Format(time.RFC3339), dash(e.Description))
	}
	return tw.Flush()
}

func runWebhookDelete(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("delete", "quorum webhook delete [flags] ENDPOINT_ID",
		"Deletes a webhook endpoint by its id (hook_…, from webhook list): it receives\nnothing more and its pending deliveries stop. Its delivery history is kept.")
	c.maxArgs = 1
	db := addDBFlags(c, getenv)
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if len(c.args) != 1 {
		return usageError{errors.New("webhook delete: give exactly one endpoint id (hook_…)")}
	}
	d, err := db.openQuiet(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	e, err := webhook.DeleteAny(ctx, d.Writer(), c.args[0], time.Now())
	if errors.Is(err, webhook.ErrNotFound) {
		return usageError{fmt.Errorf("webhook delete: no endpoint %s", c.args[0])}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "deleted %s (%s)\n", e.ID, e.URL)
	return nil
}

func runWebhookDeliveries(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("deliveries", "quorum webhook deliveries [flags] ENDPOINT_ID",
		"Lists an endpoint's deliveries, newest first, with their status and attempts.")
	c.maxArgs = 1
	db := addDBFlags(c, getenv)
	status := c.String("status", "", "", "only deliveries with this status: "+strings.Join(webhook.Statuses, ", "))
	limit := c.Int("limit", "", 50, "how many deliveries to show at most")
	asJSON := c.Bool("json", "", false, "print a JSON array")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if len(c.args) != 1 {
		return usageError{errors.New("webhook deliveries: give exactly one endpoint id (hook_…)")}
	}
	if *status != "" && !slices.Contains(webhook.Statuses, *status) {
		return usageError{fmt.Errorf("webhook deliveries: unknown --status %q (known: %s)", *status, strings.Join(webhook.Statuses, ", "))}
	}
	if *limit < 1 {
		return usageError{fmt.Errorf("webhook deliveries: --limit must be at least 1, got %d", *limit)}
	}
	d, err := db.openQuiet(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	e, err := webhook.GetAny(ctx, d.Reader(), c.args[0])
	if errors.Is(err, webhook.ErrNotFound) {
		return usageError{fmt.Errorf("webhook deliveries: no endpoint %s", c.args[0])}
	}
	if err != nil {
		return err
	}
	deliveries, _, err := webhook.ListDeliveries(ctx, d.Reader(), e.AccountID, e.ID, *status, nil, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		if deliveries == nil {
			deliveries = []webhook.Delivery{}
		}
		return json.NewEncoder(stdout).Encode(deliveries)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEVENT\tSTATUS\tATTEMPTS\tNEXT ATTEMPT\tCREATED\tLAST ATTEMPT")
	for _, dl := range deliveries {
		last := ""
		if dl.Attempts > 0 {
			// Why the last attempt went as it did: one query a row, for
			// at most --limit rows.
			_, attempts, err := webhook.GetDelivery(ctx, d.Reader(), e.AccountID, dl.ID)
			if err != nil {
				return err
			}
			if len(attempts) > 0 {
				last = describeAttempt(attempts[len(attempts)-1])
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", dl.ID, dl.Event, dl.Status, dl.Attempts, optTime(dl.NextAttemptAt), dl.CreatedAt.Format(time.RFC3339), last)
	}
	return tw.Flush()
}

func runWebhookRedeliver(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("redeliver", "quorum webhook redeliver [flags] DELIVERY_ID",
		"Sends a delivery (wh_…, from webhook deliveries) again, whatever its status, with\nthe same delivery id so receivers still deduplicate. A running quorum serve\nmakes the attempt.")
	c.maxArgs = 1
	db := addDBFlags(c, getenv)
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if len(c.args) != 1 {
		return usageError{errors.New("webhook redeliver: give exactly one delivery id (wh_…)")}
	}
	d, err := db.openQuiet(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	// Insert-only: the serving processes' workers make the attempt.
	if _, err := d.ConfigureJobs(store.JobsConfig{}); err != nil {
		return err
	}
	accountID, err := webhook.AccountOfDelivery(ctx, d.Reader(), c.args[0])
	if err == nil {
		_, err = webhook.Redeliver(ctx, d, accountID, c.args[0], time.Now())
	}
	if errors.Is(err, webhook.ErrNotFound) {
		return usageError{fmt.Errorf("webhook redeliver: no delivery %s (or its endpoint was deleted)", c.args[0])}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "redelivering %s\n", c.args[0])
	return nil
}

// warnNonPublic warns, on w, that the delivery worker will refuse an
// endpoint whose URL names a non-public address, unless serve allows it.
func warnNonPublic(w io.Writer, rawURL string) {
	if class := webhook.NonPublicHost(rawURL); class != "" {
		fmt.Fprintf(w, "warning: the URL's host is %s: quorum serve refuses to deliver to it unless started with --webhook-allow-private (QUORUM_WEBHOOK_ALLOW_PRIVATE)\n", class)
	}
}

// describeAttempt says in one short line how an attempt went: the
// receiver's status, or why there was none.
func describeAttempt(a webhook.Attempt) string {
	var s string
	switch {
	case a.StatusCode != nil && a.Error != "":
		s = fmt.Sprintf("HTTP %d: %s", *a.StatusCode, a.Error)
	case a.StatusCode != nil:
		s = fmt.Sprintf("HTTP %d", *a.StatusCode)
	default:
		s = a.Error
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return terminalSafe(s, "")
}
