// Package intake receives the GitHub App's webhooks at POST /github/webhook.
//
// The handler refuses bodies over 25 MiB, holds at most BodyBudget bytes
// of bodies at once (counted as they arrive, so a body announced large but
// sent slowly holds only what came; one that would go over is answered 503
// with Retry-After), demands that a body come at MinBodyRate after a short
// grace (a sender dripping bytes is cut off with a 400, not left to hold a
// connection and its share), checks X-Hub-Signature-256 in constant time
// over the bytes read before it parses anything of them, and stores each
// delivery it acts on in the same transaction as the River job that
// handles it, keyed by X-GitHub-Delivery, so a redelivered event does
// nothing twice; it answers 202 at once. The job keeps accounts,
// installations and repositories current (announcing installation.created
// and installation.deleted), queues reviews of pull-request heads, cancels
// them on close, and re-runs a review when someone with write access asks
// "@quorum review" in a comment.
package intake

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v88/github"
	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/delivery"
	"github.com/quorum-review/quorum/internal/store"
)

// MaxBody, BodyBudget, MinBodyRate, BodyGrace and BodyTimeout are the
// limits on webhook bodies (internal/delivery says why).
const (
	MaxBody     = delivery.MaxBody
	BodyBudget  = delivery.BodyBudget
	MinBodyRate = delivery.MinBodyRate
	BodyGrace   = delivery.BodyGrace
	BodyTimeout = delivery.BodyTimeout
)

// deliveries are GitHub's deliveries, by their installation.
var deliveries = delivery.NewTable("github_deliveries", "installation_id")

// Path is where GitHub sends the App's webhooks.
const Path = "/github/webhook"

// GitHub is what intake asks GitHub itself, through the App's installation
// tokens (internal/github's App implements it).
type GitHub interface {
	// CanWrite reports whether login may push to owner/repo (write,
	// maintain or admin).
	CanWrite(ctx context.Context, installationID int64, owner, repo, login string) (bool, error)
	// PullHead returns the pull request's current head and base commits.
	PullHead(ctx context.Context, installationID int64, owner, repo string, number int) (head, base string, err error)
	// HasRepository reports whether the installation was given owner/repo.
	HasRepository(ctx context.Context, installationID int64, owner, repo string) (bool, error)
}

// Config configures the intake.
type Config struct {
	// WebhookSecret is the App's webhook secret. Required.
	WebhookSecret string
	// BotName is the name that "@<name> review" mentions (default quorum).
	BotName string
	// ReviewDrafts reviews draft pull requests too.
	ReviewDrafts bool
	// DocsURL prefixes the problem types of error responses.
	DocsURL string
	// BodyBudget, MinBodyRate and BodyGrace default to the constants of
	// those names; tests make them smaller.
	BodyBudget  int64
	MinBodyRate int64
	BodyGrace   time.Duration
}

// Intake is the webhook handler and the worker of the jobs it queues.
type Intake struct {
	cfg     Config
	db      *store.DB
	gh      GitHub
	log     *slog.Logger
	now     func() time.Time
	mention func(string) bool
	bodies  *delivery.Reader // one BodyBudget, shared by WithDocsURL's copies
}

// New makes the intake. gh answers the questions a comment raises (may the
// commenter ask for a review, what is the pull request's head).
func New(cfg Config, db *store.DB, gh GitHub, log *slog.Logger, now func() time.Time) (*Intake, error) {
	if cfg.WebhookSecret == "" {
		return nil, errors.New("github intake: a webhook secret is required")
	}
	if cfg.BotName == "" {
		cfg.BotName = "quorum"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	bodies := delivery.NewReader(delivery.Limits{BodyBudget: cfg.BodyBudget, MinBodyRate: cfg.MinBodyRate, BodyGrace: cfg.BodyGrace}, log.With("platform", "github"))
	return &Intake{cfg: cfg, db: db, gh: gh, log: log, now: now, mention: delivery.MentionMatcher(cfg.BotName), bodies: bodies}, nil
}

// WithDocsURL returns the intake with its problem types linking to
// docsURL (known only once the server listens).
func (in *Intake) WithDocsURL(docsURL string) *Intake {
	c := *in
	c.cfg.DocsURL = docsURL
	return &c
}

// Register adds the intake's job worker to rw.
func (in *Intake) Register(rw *river.Workers) {
	river.AddWorker(rw, &worker{in: in})
	river.AddWorker(rw, &delivery.PruneWorker[PruneArgs]{Prune: in.Prune})
}

// handled lists the events and actions the intake acts on; every other
// delivery is answered 202 and dropped (a pull request's edits too, except
// a change of its base branch).
var handled = map[string][]string{
	"installation":              {"created", "deleted", "suspend", "unsuspend"},
	"installation_repositories": {"added", "removed"},
	"pull_request":              {"opened", "reopened", "synchronize", "ready_for_review", "closed"},
	"issue_comment":             {"created"},
}

// envelope is what the handler reads of a payload to decide whether to
// keep it.
type envelope struct {
	Action       string `json:"action"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Repository *struct {
		Name  string `json:"name"`
		Owner *struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
	RepositoriesAdded   []json.RawMessage `json:"repositories_added"`
	RepositoriesRemoved []json.RawMessage `json:"repositories_removed"`
	Changes             *struct {
		Base json.RawMessage `json:"base"`
	} `json:"changes"`
}

// handled reports whether the intake acts on this delivery of event name.
func (e envelope) handled(name string) bool {
	if name == "pull_request" && e.Action == "edited" {
		return e.Changes != nil && len(e.Changes.Base) > 0
	}
	return slices.Contains(handled[name], e.Action)
}

// missing names what a delivery of event name lacks to be acted on, or
// is empty: every delivery kept is some installation's, and those about
// repositories name them (nothing is filed under a made-up installation).
func (e envelope) missing(name string) string {
	if e.Installation == nil || e.Installation.ID == 0 {
		return "installation"
	}
	switch name {
	case "pull_request", "issue_comment":
		if e.Repository == nil || e.Repository.Name == "" || e.Repository.Owner == nil || e.Repository.Owner.Login == "" {
			return "repository"
		}
	case "installation_repositories":
		if e.Action == "added" && len(e.RepositoriesAdded) == 0 {
			return "repositories_added"
		}
		if e.Action == "removed" && len(e.RepositoriesRemoved) == 0 {
			return "repositories_removed"
		}
	}
	return ""
}

// ServeHTTP handles one webhook delivery.
func (in *Intake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, release, ok := in.bodies.Read(w, r, Path, in.cfg.DocsURL, r.Header.Get(github.DeliveryIDHeader))
	defer release()
	if !ok {
		return
	}
	sig := r.Header.Get(github.SHA256SignatureHeader)
	if !strings.HasPrefix(sig, "sha256=") || github.ValidateSignature(sig, body, []byte(in.cfg.WebhookSecret)) != nil {
		in.log.Warn("github webhook: bad signature", "delivery", r.Header.Get(github.DeliveryIDHeader), "event", r.Header.Get(github.EventTypeHeader))
		in.problem(w, r, http.StatusUnauthorized, "invalid signature",
			"X-Hub-Signature-256 is missing or is not the HMAC-SHA256 of the body with the App's webhook secret.")
		return
	}

	name, deliveryID := r.Header.Get(github.EventTypeHeader), r.Header.Get(github.DeliveryIDHeader)
	if name == "" || deliveryID == "" || len(deliveryID) > 100 {
		in.problem(w, r, http.StatusBadRequest, "", "X-GitHub-Event and X-GitHub-Delivery are required.")
		return
	}
	if name == "ping" {
		delivery.WriteStatus(w, http.StatusOK, "pong")
		return
	}
	var env envelope
	if !delivery.Decode(w, r, in.cfg.DocsURL, body, &env) {
		return
	}
	if !env.handled(name) {
		in.log.Debug("github webhook ignored", "delivery", deliveryID, "event", name, "action", env.Action)
		delivery.WriteStatus(w, http.StatusAccepted, "ignored")
		return
	}
	if m := env.missing(name); m != "" {
		in.log.Debug("github webhook ignored: incomplete", "delivery", deliveryID, "event", name, "action", env.Action, "missing", m)
		delivery.WriteStatus(w, http.StatusAccepted, "ignored")
		return
	}

	status := "queued"
	duplicate, err := deliveries.Store(r.Context(), in.db, delivery.Delivery{ID: deliveryID, Event: name, Action: env.Action, Scope: env.Installation.ID, Payload: body},
		DeliveryArgs{DeliveryID: deliveryID}, in.now())
	if duplicate {
		status = "duplicate"
	}
	if err != nil {
		in.log.Error("github webhook not stored", "delivery", deliveryID, "event", name, "error", err.Error())
		in.problem(w, r, http.StatusInternalServerError, "", "The delivery could not be stored; GitHub may redeliver it.")
		return
	}
	in.log.Debug("github webhook", "delivery", deliveryID, "event", name, "action", env.Action, "status", status)
	delivery.WriteStatus(w, http.StatusAccepted, status)
}

func (in *Intake) problem(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	api.WriteProblem(w, r, in.cfg.DocsURL, status, title, detail)
}
