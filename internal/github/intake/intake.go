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
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v88/github"
	"github.com/riverqueue/river"
	"golang.org/x/sync/semaphore"

	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/store"
)

// MaxBody is the largest webhook body accepted: GitHub caps payloads at
// 25 MB.
const MaxBody = 25 << 20

// BodyBudget bounds the bytes of webhook bodies held at once, counted as
// they arrive: bodies are read before their signature can be checked, so
// without a bound unauthenticated requests could fill the memory.
const BodyBudget = 64 << 20

// MinBodyRate is the slowest a body may come, in bytes a second, on
// average from the end of its headers, once BodyGrace has passed: GitHub
// sends a delivery at once, and a sender slower than this would only
// hold a connection (and, with the server's read timeout, a share of the
// budget) to starve the others.
const MinBodyRate = 32 << 10

// BodyGrace is how long a body may take before MinBodyRate applies.
const BodyGrace = 5 * time.Second

// BodyTimeout is the longest a body may take at any rate (serve's read
// timeout).
const BodyTimeout = 30 * time.Second

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
	bodies  *semaphore.Weighted // BodyBudget, shared by WithDocsURL's copies
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
	cfg.BodyBudget = cmp.Or(cfg.BodyBudget, BodyBudget)
	cfg.MinBodyRate = cmp.Or(cfg.MinBodyRate, MinBodyRate)
	cfg.BodyGrace = cmp.Or(cfg.BodyGrace, BodyGrace)
	return &Intake{cfg: cfg, db: db, gh: gh, log: log, now: now, mention: mentionMatcher(cfg.BotName),
		bodies: semaphore.NewWeighted(cfg.BodyBudget)}, nil
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
	river.AddWorker(rw, &pruneWorker{in: in})
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
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		in.problem(w, r, http.StatusMethodNotAllowed, "", fmt.Sprintf("%s is not allowed on %s; allowed: POST.", r.Method, Path))
		return
	}
	if r.ContentLength > MaxBody {
		in.problem(w, r, http.StatusRequestEntityTooLarge, "", "Webhook bodies are limited to 25 MiB.")
		return
	}
	body, held, refused := in.readBody(w, r)
	defer in.bodies.Release(held)
	switch status := refused; status {
	case 0:
	case http.StatusServiceUnavailable:
		in.log.Warn("github webhook refused: too many bodies being read", "delivery", r.Header.Get(github.DeliveryIDHeader))
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		in.problem(w, r, status, "", "Too many webhook bodies are being read at once; retry in a second.")
		return
	case http.StatusRequestEntityTooLarge:
		in.problem(w, r, status, "", "Webhook bodies are limited to 25 MiB.")
		return
	case http.StatusRequestTimeout:
		in.log.Warn("github webhook: body too slow", "delivery", r.Header.Get(github.DeliveryIDHeader), "remote", r.RemoteAddr)
		w.Header().Set("Connection", "close")
		// A 400 (the problem types have no 408): the request was not
		// completed as required.
		in.problem(w, r, http.StatusBadRequest, "", fmt.Sprintf("The body came slower than %d bytes a second; the connection is closed.", in.cfg.MinBodyRate))
		return
	default:
		in.problem(w, r, http.StatusBadRequest, "", "The body could not be read.")
		return
	}
	sig := r.Header.Get(github.SHA256SignatureHeader)
	if !strings.HasPrefix(sig, "sha256=") || github.ValidateSignature(sig, body, []byte(in.cfg.WebhookSecret)) != nil {
		in.log.Warn("github webhook: bad signature", "delivery", r.Header.Get(github.DeliveryIDHeader), "event", r.Header.Get(github.EventTypeHeader))
		in.problem(w, r, http.StatusUnauthorized, "invalid signature",
			"X-Hub-Signature-256 is missing or is not the HMAC-SHA256 of the body with the App's webhook secret.")
		return
	}

	name, delivery := r.Header.Get(github.EventTypeHeader), r.Header.Get(github.DeliveryIDHeader)
	if name == "" || delivery == "" || len(delivery) > 100 {
		in.problem(w, r, http.StatusBadRequest, "", "X-GitHub-Event and X-GitHub-Delivery are required.")
		return
	}
	if name == "ping" {
		writeStatus(w, http.StatusOK, "pong")
		return
	}
	if mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(mt) != "application/json" {
		in.problem(w, r, http.StatusUnsupportedMediaType, "", "Set the App's webhook content type to application/json.")
		return
	}
	if !utf8.Valid(body) {
		// JSON is UTF-8 (RFC 8259), as GitHub sends it; what is not would
		// be stored as text, which PostgreSQL refuses.
		in.problem(w, r, http.StatusBadRequest, "", "The body is not valid UTF-8.")
		return
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		in.problem(w, r, http.StatusBadRequest, "", "The body is not a JSON object.")
		return
	}
	if !env.handled(name) {
		in.log.Debug("github webhook ignored", "delivery", delivery, "event", name, "action", env.Action)
		writeStatus(w, http.StatusAccepted, "ignored")
		return
	}
	if m := env.missing(name); m != "" {
		in.log.Debug("github webhook ignored: incomplete", "delivery", delivery, "event", name, "action", env.Action, "missing", m)
		writeStatus(w, http.StatusAccepted, "ignored")
		return
	}

	status := "queued"
	err := in.db.InTx(r.Context(), func(tx store.Tx) error {
		n, err := tx.Exec(r.Context(), `INSERT INTO github_deliveries (delivery_id, event, action, installation_id, payload, received_at)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (delivery_id) DO NOTHING`,
			delivery, name, env.Action, env.Installation.ID, string(body), store.Micros(in.now()))
		if err != nil {
			return fmt.Errorf("store delivery: %w", err)
		}
		if n == 0 {
			status = "duplicate"
			return nil
		}
		return tx.InsertJob(r.Context(), DeliveryArgs{DeliveryID: delivery}, nil)
	})
	if err != nil {
		in.log.Error("github webhook not stored", "delivery", delivery, "event", name, "error", err.Error())
		in.problem(w, r, http.StatusInternalServerError, "", "The delivery could not be stored; GitHub may redeliver it.")
		return
	}
	in.log.Debug("github webhook", "delivery", delivery, "event", name, "action", env.Action, "status", status)
	writeStatus(w, http.StatusAccepted, status)
}

// readBody reads the request's body, taking its share of the budget as
// the bytes arrive, and setting the connection's read deadline so that,
// after the grace, the body must keep to the minimum rate. It returns the
// body, the share held (for the caller to release), and 0 or the status
// that refuses the request.
func (in *Intake) readBody(w http.ResponseWriter, r *http.Request) (body []byte, held int64, status int) {
	rc := http.NewResponseController(w)
	start := time.Now()
	// The deadline by which the next byte must come when n have: the
	// grace plus the time n bytes take at the minimum rate.
	// It never goes past BodyTimeout, as the server's read timeout would
	// not have (setting a deadline replaces the server's).
	deadline := func(n int64) time.Time {
		return start.Add(min(BodyTimeout, in.cfg.BodyGrace+time.Duration(n*int64(time.Second)/in.cfg.MinBodyRate)))
	}
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	for {
		// Not every ResponseWriter can (a test's recorder); the server's
		// read timeout still bounds those.
		_ = rc.SetReadDeadline(deadline(int64(buf.Len())))
		n, err := r.Body.Read(chunk)
		if n > 0 {
			if int64(buf.Len()+n) > MaxBody {
				return nil, held, http.StatusRequestEntityTooLarge
			}
			if !in.bodies.TryAcquire(int64(n)) {
				return nil, held, http.StatusServiceUnavailable
			}
			held += int64(n)
			buf.Write(chunk[:n])
		}
		switch {
		case errors.Is(err, io.EOF):
			return buf.Bytes(), held, 0
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, held, http.StatusRequestTimeout
		case err != nil:
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				return nil, held, http.StatusRequestEntityTooLarge
			}
			in.log.Debug("github webhook: body not read", "error", err.Error())
			return nil, held, http.StatusBadRequest
		}
	}
}

func (in *Intake) problem(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	api.WriteProblem(w, r, in.cfg.DocsURL, status, title, detail)
}

// writeStatus answers GitHub with a small JSON body it shows in the App's
// delivery log.
func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, "{\"status\":%q}\n", status)
}
