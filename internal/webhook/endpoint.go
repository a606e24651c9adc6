package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/store"
)

// Limits on what an endpoint may be registered with.
const (
	// MaxURLLength bounds an endpoint URL, as browsers and proxies commonly do.
	MaxURLLength = 2048
	// MaxDescriptionLength bounds an endpoint's description.
	MaxDescriptionLength = 1024
	// minSecretLength and maxSecretLength bound a secret the customer
	// supplies: shorter is guessable, longer is a mistake.
	minSecretLength = 16
	maxSecretLength = 256
	// SecretPrefix starts every generated secret (the Standard Webhooks
	// convention); what follows is base64 of the key bytes.
	SecretPrefix = "whsec_"
	// DefaultOverlap is how long the previous secret keeps signing after a
	// rotation, so receivers can switch without dropping deliveries.
	DefaultOverlap = 24 * time.Hour
	// MaxOverlap bounds a rotation's overlap.
	MaxOverlap = 7 * 24 * time.Hour
)

// FieldError is one rejected field of an endpoint.
type FieldError struct {
	Field  string
	Reason string
}

// ValidationError is an endpoint that cannot be stored as given; it names
// every field at fault.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Reason
	}
	return "invalid webhook endpoint: " + strings.Join(parts, "; ")
}

// endpointValidator collects field errors.
type endpointValidator struct{ fields []FieldError }

func (v *endpointValidator) reject(field, reason string) {
	v.fields = append(v.fields, FieldError{Field: field, Reason: reason})
}

func (v *endpointValidator) err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return &ValidationError{Fields: v.fields}
}

// checkURL accepts an absolute http(s) URL with a host, a valid port and
// no credentials. Whether its address is public is checked at connect
// time (and, for a literal address, by the policy's checkHost).
func (v *endpointValidator) checkURL(raw string) {
	switch {
	case raw == "":
		v.reject("url", "required: the http or https URL to deliver events to")
		return
	case len(raw) > MaxURLLength:
		v.reject("url", fmt.Sprintf("longer than %d characters", MaxURLLength))
		return
	}
	if !validText(raw) {
		v.reject("url", textReason)
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.reject("url", "not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https":
		v.reject("url", "must be an http or https URL")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		v.reject("url", "must have a host")
	case u.User != nil:
		v.reject("url", "must not contain a user name or password; sign deliveries with the secret instead")
	case !validPort(u.Port()):
		v.reject("url", "the port must be a number from 1 to 65535")
	}
}

// validPort accepts no port, or a TCP port number.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// textReason is why text that validText refuses is rejected.
const textReason = "must be UTF-8 text without NUL characters"

// validText reports text every database stores as given: valid UTF-8 (not
// replaced by U+FFFD) without NUL, which PostgreSQL's text refuses.
func validText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// checkEvents accepts known event names and returns them without
// duplicates, in the order given.
func (v *endpointValidator) checkEvents(events []string) []string {
	out := []string{}
	for _, e := range events {
		if !slices.Contains(event.Names, e) {
			v.reject("events", fmt.Sprintf("unknown event %q (known: %s)", e, strings.Join(event.Names, ", ")))
			continue
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func (v *endpointValidator) checkDescription(d string) {
	switch {
	case len(d) > MaxDescriptionLength:
		v.reject("description", fmt.Sprintf("longer than %d characters", MaxDescriptionLength))
	case !validText(d):
		v.reject("description", textReason)
	}
}

// checkSecret accepts a customer's own secret: long enough to be
// unguessable, and when it claims the whsec_ form, base64 after the prefix
// (receivers using Standard Webhooks libraries decode it).
func (v *endpointValidator) checkSecret(s string) {
	switch {
	case len(s) < minSecretLength || len(s) > maxSecretLength:
		v.reject("secret", fmt.Sprintf("must be %d to %d characters (omit it to have one generated)", minSecretLength, maxSecretLength))
	case !validText(s):
		v.reject("secret", textReason)
	case strings.HasPrefix(s, SecretPrefix):
		if _, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, SecretPrefix)); err != nil {
			v.reject("secret", "after whsec_ must come standard base64")
		}
	}
}

// generateEndpointSecret returns a new secret: whsec_ and base64 of 32 random bytes.
func generateEndpointSecret() (string, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return "", fmt.Errorf("generate webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key[:]), nil
}

const endpointColumns = `id, account_id, url, description, events, secret, previous_secret, previous_expires_at,
	disabled_at, disabled_reason, created_at, updated_at`

func scanEndpoint(r store.Row) (Endpoint, error) {
	var (
		e                     Endpoint
		events                string
		prev                  *string
		prevExpires, disabled *int64
		createdAt, updatedAt  int64
	)
	err := r.Scan(&e.ID, &e.AccountID, &e.URL, &e.Description, &events, &e.Secret, &prev, &prevExpires,
		&disabled, &e.DisabledReason, &createdAt, &updatedAt)
	if err != nil {
		return Endpoint{}, err
	}
	if err := json.Unmarshal([]byte(events), &e.Events); err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %s: events: %w", e.ID, err)
	}
	if len(e.Events) == 0 {
		// Stored empty: subscribed to every event, including ones added later.
		e.Events = slices.Clone(event.Names)
	}
	if prev != nil && prevExpires != nil {
		t := store.FromMicros(*prevExpires)
		e.PreviousSecret, e.PreviousExpiresAt = *prev, &t
	}
	e.Disabled = disabled != nil
	e.CreatedAt, e.UpdatedAt = store.FromMicros(createdAt), store.FromMicros(updatedAt)
	return e, nil
}

// encodeEvents stores a subscription; a list of every event is stored
// empty, so that it also covers events added later.
func encodeEvents(events []string) string {
	if len(events) == len(event.Names) {
		events = nil
	}
	b, _ := json.Marshal(append([]string{}, events...))
	return string(b)
}

// DefaultMaxEndpoints is how many live endpoints an account may have when
// the operator sets no other limit: every event fans out to each of them.
const DefaultMaxEndpoints = 50

// LimitError is a registration refused because the account has as many
// endpoints as it may.
type LimitError struct{ Max int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("the account has %d webhook endpoints, the most it may have", e.Max)
}

// Policy is what registering or changing an endpoint is checked against
// beyond its own fields: the operator's settings.
type Policy struct {
	// AllowPrivate accepts a URL whose host is a loopback, private or other
	// non-public address. Without it such a literal address is refused at
	// registration; the connect-time check of every attempt is the
	// Worker's, whatever this says.
	AllowPrivate bool
	// MaxEndpoints bounds an account's live endpoints (0: no bound).
	MaxEndpoints int
}

// NonPublicHost names the class of rawURL's host ("loopback", "private",
// …) when it is written as a non-public address, or is localhost, and ""
// otherwise: what the delivery worker will refuse unless allowed. A host
// name is not resolved (see checkHost).
func NonPublicHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "loopback"
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return classify(a)
	}
	return ""
}

// checkHost refuses, unless p.AllowPrivate, a URL whose host is a literal
// non-public address. A host name is not resolved: what it resolves to
// now says nothing about what it resolves to at delivery, and a lookup
// would let anyone who can register make the server query names of their
// choosing. The dialer's check at each attempt is the one that counts.
func (p Policy) checkHost(v *endpointValidator, rawURL string) {
	if p.AllowPrivate {
		return
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return // rejected by checkURL
	}
	host := u.Hostname()
	a, err := netip.ParseAddr(host)
	if err != nil {
		return
	}
	if c := classify(a); c != "" {
		v.reject("url", fmt.Sprintf("%s is not a public address (%s): deliveries to non-public addresses are refused (quorum serve --webhook-allow-private allows them)", host, c))
	}
}

// NewEndpoint is an endpoint to register.
type NewEndpoint struct {
	URL         string
	Events      []string // empty: every event
	Description string
	// Secret is the customer's own secret; nil means one is generated.
	Secret *string
}

// Create registers an endpoint of the account, as an operator does: any
// address, no limit on the account's endpoints. events empty means every
// event; secret empty means one is generated. It returns the endpoint and
// its secret, which is shown to the customer only now.
func Create(ctx context.Context, q store.Querier, accountID, rawURL string, events []string, description, secret string, now time.Time) (Endpoint, string, error) {
	in := NewEndpoint{URL: rawURL, Events: events, Description: description}
	if secret != "" {
		in.Secret = &secret
	}
	e, err := Policy{AllowPrivate: true}.prepare(accountID, in, now)
	if err != nil {
		return Endpoint{}, "", err
	}
	if err := insertEndpoint(ctx, q, &e); err != nil {
		return Endpoint{}, "", err
	}
	return e, e.Secret, nil
}

// Create registers an endpoint of the account under the policy. It returns
// the endpoint and its secret, which is shown to the customer only now;
// past p.MaxEndpoints it is a *LimitError.
func (p Policy) Create(ctx context.Context, db *store.DB, accountID string, in NewEndpoint, now time.Time) (Endpoint, string, error) {
	e, err := p.prepare(accountID, in, now)
	if err != nil {
		return Endpoint{}, "", err
	}
	err = db.InTx(ctx, func(tx store.Tx) error {
		if p.MaxEndpoints > 0 {
			if err := checkLimit(ctx, tx, accountID, p.MaxEndpoints); err != nil {
				return err
			}
		}
		return insertEndpoint(ctx, tx, &e)
	})
	if err != nil {
		return Endpoint{}, "", err
	}
	return e, e.Secret, nil
}

// prepare validates an endpoint to register under the policy and makes it,
// with its secret (generated when none is given).
func (p Policy) prepare(accountID string, in NewEndpoint, now time.Time) (Endpoint, error) {
	var v endpointValidator
	v.checkURL(in.URL)
	events := v.checkEvents(in.Events)
	v.checkDescription(in.Description)
	if in.Secret != nil {
		v.checkSecret(*in.Secret)
	}
	if len(v.fields) == 0 {
		p.checkHost(&v, in.URL)
	}
	if err := v.err(); err != nil {
		return Endpoint{}, err
	}
	var secret string
	if in.Secret != nil {
		secret = *in.Secret
	} else {
		var err error
		if secret, err = generateEndpointSecret(); err != nil {
			return Endpoint{}, err
		}
	}
	at := store.FromMicros(store.Micros(now))
	return Endpoint{
		ID: id.New(id.Endpoint, now), AccountID: accountID, URL: in.URL, Description: in.Description,
		Events: events, CreatedAt: at, UpdatedAt: at, Secret: secret,
	}, nil
}

// insertEndpoint stores a prepared endpoint; it is returned with every
// event listed when it subscribes to all.
func insertEndpoint(ctx context.Context, q store.Querier, e *Endpoint) error {
	_, err := q.Exec(ctx, `INSERT INTO webhook_endpoints (id, account_id, url, description, events, secret, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, e.ID, e.AccountID, e.URL, e.Description, encodeEvents(e.Events), e.Secret, store.Micros(e.CreatedAt))
	if err != nil {
		return fmt.Errorf("create webhook endpoint: %w", err)
	}
	if len(e.Events) == 0 {
		e.Events = slices.Clone(event.Names)
	}
	return nil
}

// checkLimit refuses another endpoint of an account that has max. It first
// locks the account's row (a no-op update), so concurrent registrations of
// one account in transactions count one after the other.
func checkLimit(ctx context.Context, q store.Querier, accountID string, max int) error {
	if _, err := q.Exec(ctx, `UPDATE accounts SET type = type WHERE id = $1`, accountID); err != nil {
		return fmt.Errorf("create webhook endpoint: lock account: %w", err)
	}
	var n int
	if err := q.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL`, accountID).Scan(&n); err != nil {
		return fmt.Errorf("create webhook endpoint: count endpoints: %w", err)
	}
	if n >= max {
		return &LimitError{Max: max}
	}
	return nil
}

// Get returns the account's endpoint; a deleted one, or another account's,
// is ErrNotFound.
func Get(ctx context.Context, q store.Querier, accountID, endpointID string) (Endpoint, error) {
	e, err := scanEndpoint(q.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`, endpointID, accountID))
	if errors.Is(err, store.ErrNotFound) {
		return Endpoint{}, ErrNotFound
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("load webhook endpoint %s: %w", endpointID, err)
	}
	return e, nil
}

// EndpointCursor is a keyset position in a newest-first listing of
// endpoints: the last endpoint of the previous page.
type EndpointCursor struct {
	CreatedAt int64 // Unix microseconds
	ID        string
}

// One query per listing shape, each on the (account_id, created_at, id) index.
const (
	listEndpointsFirst = `SELECT ` + endpointColumns + ` FROM webhook_endpoints
WHERE account_id = $1 AND deleted_at IS NULL
ORDER BY created_at DESC, id DESC LIMIT $2`
	listEndpointsAfter = `SELECT ` + endpointColumns + ` FROM webhook_endpoints
WHERE account_id = $1 AND deleted_at IS NULL AND (created_at, id) < ($3, $4)
ORDER BY created_at DESC, id DESC LIMIT $2`
	// listEndpointsAll is every live endpoint, of every account when $1 is
	// empty, for operators.
	listEndpointsAll = `SELECT ` + endpointColumns + ` FROM webhook_endpoints
WHERE ($1 = '' OR account_id = $1) AND deleted_at IS NULL
ORDER BY created_at DESC, id DESC`
)

// List returns a page of the account's endpoints, newest first, and the
// position after its last one when more follow.
func List(ctx context.Context, q store.Querier, accountID string, after *EndpointCursor, limit int) ([]Endpoint, *EndpointCursor, error) {
	if limit < 1 {
		return nil, nil, fmt.Errorf("list webhook endpoints: limit %d, want at least 1", limit)
	}
	query, args := listEndpointsFirst, []any{accountID, limit + 1}
	if after != nil {
		query, args = listEndpointsAfter, append(args, after.CreatedAt, after.ID)
	}
	out, err := queryEndpoints(ctx, q, query, args...)
	if err != nil {
		return nil, nil, err
	}
	var next *EndpointCursor
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = &EndpointCursor{CreatedAt: store.Micros(last.CreatedAt), ID: last.ID}
	}
	return out, next, nil
}

// ListAll returns every live endpoint, newest first: the account's, or
// every account's when accountID is empty. It is for operators.
func ListAll(ctx context.Context, q store.Querier, accountID string) ([]Endpoint, error) {
	return queryEndpoints(ctx, q, listEndpointsAll, accountID)
}

func queryEndpoints(ctx context.Context, q store.Querier, query string, args ...any) ([]Endpoint, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	defer rows.Close()
	out := []Endpoint{}
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("list webhook endpoints: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return out, nil
}

// Patch is a partial update of an endpoint: nil fields are left as they are.
type Patch struct {
	URL         *string
	Events      *[]string // empty: every event
	Description *string
	// Disabled pauses deliveries (true) or resumes them (false), also
	// after the endpoint answered 410 Gone.
	Disabled *bool
}

// ReasonDisabledByCustomer is the disabled_reason of an endpoint paused
// through Update.
const ReasonDisabledByCustomer = "disabled by the customer"

// Update changes the account's endpoint as patch says and returns it, as
// an operator does (any address).
func Update(ctx context.Context, q store.Querier, accountID, endpointID string, patch Patch, now time.Time) (Endpoint, error) {
	return Policy{AllowPrivate: true}.Update(ctx, q, accountID, endpointID, patch, now)
}

// Update changes the account's endpoint as patch says, under the policy,
// and returns it.
func (p Policy) Update(ctx context.Context, q store.Querier, accountID, endpointID string, patch Patch, now time.Time) (Endpoint, error) {
	var v endpointValidator
	if patch.URL != nil {
		v.checkURL(*patch.URL)
	}
	var events []string
	if patch.Events != nil {
		events = v.checkEvents(*patch.Events)
	}
	if patch.Description != nil {
		v.checkDescription(*patch.Description)
	}
	if patch.URL != nil && len(v.fields) == 0 {
		p.checkHost(&v, *patch.URL)
	}
	if err := v.err(); err != nil {
		return Endpoint{}, err
	}
	e, err := Get(ctx, q, accountID, endpointID)
	if err != nil {
		return Endpoint{}, err
	}
	if patch.URL != nil {
		e.URL = *patch.URL
	}
	if patch.Events != nil {
		e.Events = events
		if len(events) == 0 {
			e.Events = slices.Clone(event.Names)
		}
	}
	if patch.Description != nil {
		e.Description = *patch.Description
	}
	at := store.Micros(now)
	// Pausing or resuming rewrites disabled_at and disabled_reason; any
	// other patch leaves them, and a 410's reason, as they are.
	toggled := patch.Disabled != nil && *patch.Disabled != e.Disabled
	var disabledAt *int64
	if toggled {
		e.Disabled, e.DisabledReason = *patch.Disabled, ""
		if e.Disabled {
			disabledAt, e.DisabledReason = &at, ReasonDisabledByCustomer
		}
	}
	n, err := q.Exec(ctx, `UPDATE webhook_endpoints SET url = $1, events = $2, description = $3, updated_at = $4,
	disabled_at = CASE WHEN $7 THEN $8 ELSE disabled_at END, disabled_reason = CASE WHEN $7 THEN $9 ELSE disabled_reason END
WHERE id = $5 AND account_id = $6 AND deleted_at IS NULL`, e.URL, encodeEvents(e.Events), e.Description, at, endpointID, accountID,
		toggled, disabledAt, e.DisabledReason)
	if err != nil {
		return Endpoint{}, fmt.Errorf("update webhook endpoint %s: %w", endpointID, err)
	}
	if n == 0 {
		return Endpoint{}, ErrNotFound // deleted meanwhile
	}
	e.UpdatedAt = store.FromMicros(at)
	return e, nil
}

// Delete removes the account's endpoint: it stays in the database for its
// deliveries' history, but neither it nor its deliveries are found, listed
// or delivered to again. Its deliveries awaiting an attempt become
// dead-lettered, with no next attempt (their jobs then stop without one).
// Pass a transaction to do both at once.
func Delete(ctx context.Context, q store.Querier, accountID, endpointID string, now time.Time) error {
	n, err := q.Exec(ctx, `UPDATE webhook_endpoints SET deleted_at = $1, updated_at = $1
WHERE id = $2 AND account_id = $3 AND deleted_at IS NULL`, store.Micros(now), endpointID, accountID)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", endpointID, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	if _, err := q.Exec(ctx, `UPDATE webhook_deliveries SET status = 'dead_lettered', next_attempt_at = NULL, updated_at = $2
WHERE endpoint_id = $1 AND status IN ('pending', 'failed')`, endpointID, store.Micros(now)); err != nil {
		return fmt.Errorf("delete webhook endpoint %s: stop its deliveries: %w", endpointID, err)
	}
	return nil
}

// GetAny returns a live endpoint of whichever account, for operators.
func GetAny(ctx context.Context, q store.Querier, endpointID string) (Endpoint, error) {
	e, err := scanEndpoint(q.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
WHERE id = $1 AND deleted_at IS NULL`, endpointID))
	if errors.Is(err, store.ErrNotFound) {
		return Endpoint{}, ErrNotFound
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("load webhook endpoint %s: %w", endpointID, err)
	}
	return e, nil
}

// DeleteAny removes an endpoint of whichever account, for operators, and
// returns it as it was.
func DeleteAny(ctx context.Context, q store.Querier, endpointID string, now time.Time) (Endpoint, error) {
	e, err := GetAny(ctx, q, endpointID)
	if err != nil {
		return Endpoint{}, err
	}
	return e, Delete(ctx, q, e.AccountID, endpointID, now)
}

// AccountOfDelivery returns the account a delivery belongs to, for
// operators acting on a delivery by its id alone.
func AccountOfDelivery(ctx context.Context, q store.Querier, deliveryID string) (string, error) {
	var accountID string
	err := q.QueryRow(ctx, `SELECT account_id FROM webhook_deliveries WHERE id = $1`, deliveryID).Scan(&accountID)
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("find delivery %s: %w", deliveryID, err)
	}
	return accountID, nil
}

// RotateSecret replaces the account's endpoint's secret with a new one
// (generated when secret is empty) and keeps the current one signing beside
// it for overlap, so receivers can switch without rejecting deliveries. It
// returns the endpoint and the new secret, shown only now.
func RotateSecret(ctx context.Context, q store.Querier, accountID, endpointID string, secret *string, overlap time.Duration, now time.Time) (Endpoint, string, error) {
	var v endpointValidator
	if secret != nil {
		v.checkSecret(*secret)
	}
	if overlap < 0 || overlap > MaxOverlap {
		v.reject("overlap", fmt.Sprintf("must be from 0 to %s", MaxOverlap))
	}
	if err := v.err(); err != nil {
		return Endpoint{}, "", err
	}
	var newSecret string
	if secret != nil {
		newSecret = *secret
	} else {
		var err error
		if newSecret, err = generateEndpointSecret(); err != nil {
			return Endpoint{}, "", err
		}
	}
	e, err := Get(ctx, q, accountID, endpointID)
	if err != nil {
		return Endpoint{}, "", err
	}
	at := store.Micros(now)
	var prev *string
	var prevExpires *int64
	e.PreviousSecret, e.PreviousExpiresAt = "", nil
	if overlap > 0 {
		exp := store.Micros(now.Add(overlap))
		prev, prevExpires = &e.Secret, &exp
		t := store.FromMicros(exp)
		e.PreviousSecret, e.PreviousExpiresAt = e.Secret, &t
	}
	n, err := q.Exec(ctx, `UPDATE webhook_endpoints SET secret = $1, previous_secret = $2, previous_expires_at = $3, updated_at = $4
WHERE id = $5 AND account_id = $6 AND deleted_at IS NULL`, newSecret, prev, prevExpires, at, endpointID, accountID)
	if err != nil {
		return Endpoint{}, "", fmt.Errorf("rotate secret of webhook endpoint %s: %w", endpointID, err)
	}
	if n == 0 {
		return Endpoint{}, "", ErrNotFound
	}
	e.Secret, e.UpdatedAt = newSecret, store.FromMicros(at)
	return e, newSecret, nil
}
