// Package event is quorum's transactional outbox: the events of the spec's
// catalog (review.completed, finding.created, review.failed,
// installation.created, installation.deleted), written in the same database
// transaction as the change that causes them, so a crash can neither lose an
// event nor announce a change that did not commit.
//
// Record is the one place events are written; webhook delivery fans out
// from it.
package event

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/webhook/fanout"
)

// Event names, as the spec's catalog has them.
const (
	ReviewCompleted     = "review.completed"
	ReviewFailed        = "review.failed"
	FindingCreated      = "finding.created"
	InstallationCreated = "installation.created"
	InstallationDeleted = "installation.deleted"
)

// Names lists the event names of the catalog.
var Names = []string{ReviewCompleted, ReviewFailed, FindingCreated, InstallationCreated, InstallationDeleted}

// Reasons a review could not run (review.failed's reason), exactly the
// spec's four.
const (
	ReasonQuorumFailure = "quorum_failure"
	ReasonRateLimit     = "rate_limit"
	ReasonStaleHead     = "stale_head"
	ReasonInternalError = "internal_error"
)

// Reasons lists review.failed's reasons.
var Reasons = []string{ReasonQuorumFailure, ReasonRateLimit, ReasonStaleHead, ReasonInternalError}

// RateLimit is review.completed's rate_limit object: the account's review
// rate limit as it stood when the review was stored.
type RateLimit struct {
	Used       int       `json:"used"`
	MaxReviews int       `json:"max_reviews"`
	ResetsAt   time.Time `json:"resets_at"`
}

// ReviewCompletedData is the data of review.completed.
type ReviewCompletedData struct {
	ReviewID             string    `json:"review_id"`
	Owner                string    `json:"owner"`
	Repo                 string    `json:"repo"`
	PRNumber             int       `json:"pr_number"`
	HeadSHA              string    `json:"head_sha"`
	Verdict              string    `json:"verdict"`
	FindingsCount        int       `json:"findings_count"`
	SpecialistsSucceeded []string  `json:"specialists_succeeded"`
	RateLimit            RateLimit `json:"rate_limit"`
}

// FindingCreatedData is the data of finding.created: every finding of one
// review, in one event.
type FindingCreatedData struct {
	ReviewID string         `json:"review_id"`
	Findings []FindingBrief `json:"findings"`
}

// FindingBrief is a finding as finding.created lists it.
type FindingBrief struct {
	ID         string `json:"id"`
	Specialist string `json:"specialist"`
	Category   string `json:"category"`
	Severity   string `json:"severity"`
	Path       string `json:"path"`
	Line       int    `json:"line"`
	Headline   string `json:"headline"`
}

// ReviewFailedData is the data of review.failed.
type ReviewFailedData struct {
	Owner             string   `json:"owner"`
	Repo              string   `json:"repo"`
	PRNumber          int      `json:"pr_number"`
	HeadSHA           string   `json:"head_sha"`
	Reason            string   `json:"reason"`
	SpecialistsFailed []string `json:"specialists_failed"`
}

// Event is one recorded event.
type Event struct {
	ID        string
	AccountID string
	Name      string
	Data      json.RawMessage
	CreatedAt time.Time
}

// Record writes an event of the account in tx, the transaction that makes
// the change the event announces, with a webhook delivery for each of the
// account's endpoints subscribed to it, and returns its id. It is RecordAt
// at the current time.
func Record(ctx context.Context, tx store.Tx, accountID, name string, data any) (string, error) {
	return RecordAt(ctx, tx, time.Now(), accountID, name, data)
}

// RecordAt is Record for an event that happened at at, for callers with a
// clock of their own.
func RecordAt(ctx context.Context, tx store.Tx, at time.Time, accountID, name string, data any) (string, error) {
	if !slices.Contains(Names, name) {
		return "", fmt.Errorf("record event: unknown event %q", name)
	}
	body, err := json.Marshal(data)
	if err != nil {
		return "", fmt.Errorf("record %s: encode data: %w", name, err)
	}
	if len(body) == 0 || body[0] != '{' {
		return "", fmt.Errorf("record %s: data must be a JSON object, got %.20s", name, body)
	}
	eventID := id.New(id.Event, at)
	_, err = tx.Exec(ctx, `INSERT INTO events (id, account_id, name, data, created_at) VALUES ($1, $2, $3, $4, $5)`,
		eventID, accountID, name, string(body), store.Micros(at))
	if err != nil {
		return "", fmt.Errorf("record %s: %w", name, err)
	}
	if _, err := fanout.Event(ctx, tx, accountID, eventID, name, at); err != nil {
		return "", fmt.Errorf("record %s: %w", name, err)
	}
	return eventID, nil
}

// List returns the account's events, oldest first.
func List(ctx context.Context, q store.Querier, accountID string) ([]Event, error) {
	rows, err := q.Query(ctx, `SELECT id, account_id, name, data, created_at FROM events
WHERE account_id = $1 ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e    Event
			data string
			at   int64
		)
		if err := rows.Scan(&e.ID, &e.AccountID, &e.Name, &data, &at); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		e.Data = json.RawMessage(data)
		e.CreatedAt = store.FromMicros(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}

// InstallationData is the data of installation.created and
// installation.deleted (DESIGN.md §2): InstallationID is the platform's
// installation id (GitHub's installation; on Gitea, which has no App, the
// id of the connected repository).
type InstallationData struct {
	InstallationID int64               `json:"installation_id"`
	Platform       string              `json:"platform"`
	Account        InstallationAccount `json:"account"`
	Repositories   []InstallationRepo  `json:"repositories"`
}

// InstallationAccount is the account an installation belongs to.
type InstallationAccount struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

// InstallationRepo is one repository of an installation event.
type InstallationRepo struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
}

// RecordInstallation records installation event name (InstallationCreated
// or InstallationDeleted) for the account; no repositories is an empty list,
// not null.
func RecordInstallation(ctx context.Context, tx store.Tx, at time.Time, accountID, name string, data InstallationData) error {
	if data.Repositories == nil {
		data.Repositories = []InstallationRepo{}
	}
	_, err := RecordAt(ctx, tx, at, accountID, name, data)
	return err
}
