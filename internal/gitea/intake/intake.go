// Package intake receives the webhooks of connected Gitea (and Forgejo)
// repositories at POST /gitea/webhook.
//
// It gives the guarantees of GitHub's intake (internal/github/intake),
// sharing its body reader (internal/delivery): bodies over 25 MiB are
// refused, those being read at once are bounded and must come at a
// minimum rate. Gitea has no App and names no hook in its deliveries, so
// the webhook's address carries the repository (?repository=<Gitea's id>),
// and the signature (X-Gitea-Signature, hex HMAC-SHA256 of the raw body
// with that repository's hook secret) is checked in constant time before
// anything of the body is parsed; an unknown repository and a bad
// signature get the same 401, so the answer does not tell which
// repositories are connected. A delivery whose payload names another
// repository than its hook's is refused too: an administrator of one
// repository, who can read its hook's secret, must not file events for
// another. Each delivery acted on is stored in the same transaction as the
// River job that handles it, keyed by X-Gitea-Delivery, so a redelivered
// event does nothing twice; it answers 202 at once.
package intake

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/api"
	"github.com/quorum-review/quorum/internal/delivery"
	"github.com/quorum-review/quorum/internal/gitea"
	"github.com/quorum-review/quorum/internal/store"
)

// deliveries are Gitea's deliveries, by the repository of their hook.
var deliveries = delivery.NewTable("gitea_deliveries", "repository_id")

// Path is where Gitea sends the connected repositories' webhooks.
const Path = "/gitea/webhook"

// Config configures the intake.
type Config struct {
	// BotName is the bot account's login: "@<login> review" in a comment
	// asks for a review, and the bot's own comments ask for nothing.
	// Required.
	BotName string
	// ReviewDrafts reviews work-in-progress pull requests too.
	ReviewDrafts bool
	// DocsURL prefixes the problem types of error responses.
	DocsURL string
	// Limits bound the bodies being read (zero: internal/delivery's
	// defaults; tests make them smaller).
	Limits delivery.Limits
}

// Intake is the webhook handler and the worker of the jobs it queues.
type Intake struct {
	cfg     Config
	db      *store.DB
	api     *gitea.Client
	log     *slog.Logger
	now     func() time.Time
	mention func(string) bool
	bodies  *delivery.Reader // one budget, shared by WithDocsURL's copies
	// unknownSecret stands in for the secret of a repository quorum does
	// not know, so that answering takes as long as for a known one; it is
	// random, so no signature matches it.
	unknownSecret string
}

// New makes the intake. api, as the bot, answers what a comment raises
// (may its author ask for a review, what is the pull request's head).
func New(cfg Config, db *store.DB, api *gitea.Client, log *slog.Logger, now func() time.Time) (*Intake, error) {
	if cfg.BotName == "" {
		return nil, errors.New("gitea intake: the bot account's login is required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	stand := make([]byte, 32)
	if _, err := rand.Read(stand); err != nil {
		return nil, fmt.Errorf("gitea intake: %w", err)
	}
	return &Intake{cfg: cfg, db: db, api: api, log: log, now: now, mention: delivery.MentionMatcher(cfg.BotName),
		bodies: delivery.NewReader(cfg.Limits, log.With("platform", "gitea")), unknownSecret: hex.EncodeToString(stand)}, nil
}

// WithDocsURL returns the intake with its problem types linking to
// docsURL (known only once the server listens).
func (in *Intake) WithDocsURL(docsURL string) *Intake {
	c := *in
	c.cfg.DocsURL = docsURL
	return &c
}

// Register adds the intake's job workers to rw.
func (in *Intake) Register(rw *river.Workers) {
	river.AddWorker(rw, &worker{in: in})
	river.AddWorker(rw, &delivery.PruneWorker[PruneArgs]{Prune: in.Prune})
}

// header returns Gitea's header name, or Forgejo's twin when Gitea's is
// absent (Forgejo sends both today; a later one may send only its own).
func header(r *http.Request, name string) string {
	if v := r.Header.Get("X-Gitea-" + name); v != "" {
		return v
	}
	return r.Header.Get("X-Forgejo-" + name)
}

// envelope is what the handler reads of a payload to decide whether to
// keep it.
type envelope struct {
	Action     string `json:"action"`
	Repository *struct {
		ID int64 `json:"id"`
	} `json:"repository"`
	// IsPull marks an issue_comment on a pull request.
	IsPull  bool     `json:"is_pull"`
	Changes *changes `json:"changes"`
}

// changes is what an edit of a pull request changed.
type changes struct {
	Ref   *struct{ From string } `json:"ref"`
	Title *struct{ From string } `json:"title"`
}

// handled reports whether the intake acts on this delivery of event name
// (X-Gitea-Event). Gitea sends a push to a pull request's branch as
// pull_request "synchronized", a comment on a pull request as
// issue_comment with is_pull (X-Gitea-Event-Type says
// pull_request_comment), a change of the base branch as "edited" with
// changes.ref, and a title change, which can take a WIP prefix off, as
// "edited" with changes.title.
func (e envelope) handled(name string) bool {
	switch name {
	case "pull_request":
		switch e.Action {
		case "opened", "reopened", "synchronized", "closed":
			return true
		case "edited":
			return e.Changes != nil && (e.Changes.Ref != nil || e.Changes.Title != nil)
		}
	case "issue_comment":
		return e.Action == "created" && e.IsPull
	}
	return false
}

// hook is a connected repository's webhook, as quorum recorded it.
type hook struct {
	repositoryID int64
	secret       string
}

// ServeHTTP handles one webhook delivery.
func (in *Intake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	deliveryID := header(r, "Delivery")
	body, release, ok := in.bodies.Read(w, r, Path, in.cfg.DocsURL, deliveryID)
	defer release()
	if !ok {
		return
	}
	h, known, err := in.hookOf(r.Context(), r.URL.Query().Get("repository"))
	if err != nil {
		in.log.Error("gitea webhook: hook not read", "delivery", deliveryID, "error", err.Error())
		in.problem(w, r, http.StatusInternalServerError, "", "The webhook's repository could not be looked up; Gitea may redeliver.")
		return
	}
	if !validSignature(body, header(r, "Signature"), h.secret) || !known {
		in.log.Warn("gitea webhook: unknown repository or bad signature", "delivery", deliveryID,
			"repository", r.URL.Query().Get("repository"), "known", known)
		in.problem(w, r, http.StatusUnauthorized, "invalid signature",
			"X-Gitea-Signature is missing or is not the HMAC-SHA256 of the body with the webhook secret of the repository the URL's ?repository= names.")
		return
	}
	if _, err := in.db.Writer().Exec(r.Context(), `UPDATE gitea_hooks SET last_delivery_at = $1 WHERE repository_id = $2`,
		store.Micros(in.now()), h.repositoryID); err != nil {
		// Only connect's wait reads it: the delivery itself goes on.
		in.log.Warn("gitea webhook: last delivery not recorded", "repository", h.repositoryID, "error", err.Error())
	}

	name := header(r, "Event")
	if name == "" || deliveryID == "" || len(deliveryID) > 100 {
		in.problem(w, r, http.StatusBadRequest, "", "X-Gitea-Event and X-Gitea-Delivery are required.")
		return
	}
	var env envelope
	if !delivery.Decode(w, r, in.cfg.DocsURL, body, &env) {
		return
	}
	if env.Repository == nil || env.Repository.ID != h.repositoryID {
		var got int64
		if env.Repository != nil {
			got = env.Repository.ID
		}
		in.log.Warn("gitea webhook refused: its payload names another repository than its hook's",
			"delivery", deliveryID, "event", name, "hook_repository", h.repositoryID, "payload_repository", got)
		in.problem(w, r, http.StatusUnauthorized, "wrong repository",
			"The payload's repository is not the one this webhook was created for.")
		return
	}
	if !env.handled(name) {
		in.log.Debug("gitea webhook ignored", "delivery", deliveryID, "event", name, "action", env.Action)
		delivery.WriteStatus(w, http.StatusAccepted, "ignored")
		return
	}

	status := "queued"
	duplicate, err := deliveries.Store(r.Context(), in.db, delivery.Delivery{ID: deliveryID, Event: name, Action: env.Action, Scope: h.repositoryID, Payload: body},
		DeliveryArgs{DeliveryID: deliveryID}, in.now())
	if duplicate {
		status = "duplicate"
	}
	if err != nil {
		in.log.Error("gitea webhook not stored", "delivery", deliveryID, "event", name, "error", err.Error())
		in.problem(w, r, http.StatusInternalServerError, "", "The delivery could not be stored; Gitea may redeliver it.")
		return
	}
	in.log.Debug("gitea webhook", "delivery", deliveryID, "event", name, "action", env.Action, "status", status)
	delivery.WriteStatus(w, http.StatusAccepted, status)
}

// hookOf returns the hook of the repository the webhook's address names,
// and whether there is one; an unknown one gets a stand-in secret, so
// the signature is checked all the same.
func (in *Intake) hookOf(ctx context.Context, repository string) (hook, bool, error) {
	id, err := strconv.ParseInt(repository, 10, 64)
	if err != nil || id <= 0 {
		return hook{secret: in.unknownSecret}, false, nil
	}
	h := hook{repositoryID: id}
	err = in.db.Reader().QueryRow(ctx, `SELECT secret FROM gitea_hooks WHERE repository_id = $1`, id).Scan(&h.secret)
	if errors.Is(err, store.ErrNotFound) {
		return hook{secret: in.unknownSecret}, false, nil
	}
	if err != nil {
		return hook{}, false, fmt.Errorf("read the hook of repository %d: %w", id, err)
	}
	return h, true, nil
}

// validSignature reports, in constant time, whether sig is the hex
// HMAC-SHA256 of body with secret, as Gitea signs (no "sha256=" prefix).
func validSignature(body []byte, sig, secret string) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := mac.Sum(nil)
	got, err := hex.DecodeString(sig)
	return hmac.Equal(got, want) && err == nil
}

func (in *Intake) problem(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	api.WriteProblem(w, r, in.cfg.DocsURL, status, title, detail)
}
