// Package webhook owns outbound webhooks: customers' endpoints, one
// delivery per (event, subscribed endpoint) made in the transaction that
// records the event, and the signed, retried attempts that deliver it.
package webhook

import (
	"errors"
	"time"
)

// Delivery statuses.
const (
	// StatusPending: not attempted yet, or an attempt is under way.
	StatusPending = "pending"
	// StatusSucceeded: an attempt was answered 2xx.
	StatusSucceeded = "succeeded"
	// StatusFailed: an attempt failed and a retry is scheduled.
	StatusFailed = "failed"
	// StatusDeadLettered: the fifth retry failed; no more are scheduled,
	// but the delivery stays visible and can be redelivered.
	StatusDeadLettered = "dead_lettered"
)

// Statuses lists the delivery statuses.
var Statuses = []string{StatusPending, StatusSucceeded, StatusFailed, StatusDeadLettered}

// RetryDelays are the waits after each failed attempt, exactly as the spec
// gives them: the first attempt is immediate, then five retries.
var RetryDelays = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}

// ErrNotFound is an endpoint or delivery that does not exist or belongs to
// another account: the two are indistinguishable.
var ErrNotFound = errors.New("not found")

// Endpoint is a customer's URL that receives events.
type Endpoint struct {
	ID          string   `json:"id"` // hook_…
	AccountID   string   `json:"-"`
	URL         string   `json:"url"`
	Description string   `json:"description"`
	Events      []string `json:"events"` // the subscribed event names; every event when registered without a list
	Disabled    bool     `json:"disabled"`
	// DisabledReason says why, e.g. the endpoint answered 410 Gone.
	DisabledReason string    `json:"disabled_reason,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`

	// Secret signs deliveries (whsec_… when generated); shown only when
	// created or rotated.
	Secret string `json:"-"`
	// PreviousSecret still signs, beside Secret, until PreviousExpiresAt.
	PreviousSecret    string     `json:"-"`
	PreviousExpiresAt *time.Time `json:"-"`
}

// Delivery is one event sent to one endpoint, over one or more attempts.
type Delivery struct {
	ID            string     `json:"id"` // wh_…, the envelope's delivery_id
	EndpointID    string     `json:"endpoint_id"`
	EventID       string     `json:"event_id"`
	Event         string     `json:"event"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	AccountID     string     `json:"-"`
}

// Attempt is one try of a delivery.
type Attempt struct {
	Number      int       `json:"number"`
	AttemptedAt time.Time `json:"attempted_at"`
	// StatusCode is the receiver's HTTP status, or nil when there was no
	// response (connection refused, timeout, address refused).
	StatusCode *int `json:"status_code"`
	// LatencyMS is how long the attempt took, in milliseconds.
	LatencyMS float64 `json:"latency_ms"`
	// Error says why the attempt failed ("" when it succeeded).
	Error string `json:"error"`
	// ResponseBody is the first 4 KiB of the response body.
	ResponseBody string `json:"response_body"`
}
