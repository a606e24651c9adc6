// Package verify checks, on the receiving side, that a webhook request came
// from quorum: by its Standard Webhooks headers (webhook-id,
// webhook-timestamp, webhook-signature: HMAC-SHA256 of "id.timestamp.body",
// base64, keyed with the bytes the whsec_ secret encodes) when it has them,
// else by its X-Service-Signature header (HMAC-SHA256 of the raw body, hex,
// keyed with the whole secret string), with constant-time comparisons and a
// timestamp tolerance against replays.
//
// It is outside quorum's internal packages so receivers written in Go can
// import it; quorum signs its deliveries with the same functions.
package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names.
const (
	HeaderSignature         = "X-Service-Signature"
	HeaderEvent             = "X-Service-Event"
	HeaderDelivery          = "X-Service-Delivery"
	HeaderWebhookID         = "webhook-id"
	HeaderWebhookTimestamp  = "webhook-timestamp"
	HeaderWebhookSignature  = "webhook-signature"
	secretPrefix            = "whsec_"
	defaultMaxBodyBytes     = 10 << 20
	signaturePrefix         = "sha256="
	standardSignaturePrefix = "v1,"
)

// Errors Verify returns, to tell a forged request from a replayed one.
var (
	// ErrNoSignature is a request with neither signature header.
	ErrNoSignature = errors.New("no signature header")
	// ErrSignature is a signature that does not match the body and secret.
	ErrSignature = errors.New("signature does not match")
	// ErrTimestamp is a webhook-timestamp missing, malformed or outside the
	// tolerance.
	ErrTimestamp = errors.New("timestamp outside the tolerance")
)

// Signature is the X-Service-Signature of body: "sha256=" and the
// lowercase hex HMAC-SHA256 of the raw body keyed with the whole secret
// string, as given.
func Signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return signaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// StandardKey is the Standard Webhooks key of a secret: the bytes that
// follow whsec_, base64-decoded; a secret without that prefix (or whose
// remainder is not base64) is used as raw bytes.
func StandardKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, secretPrefix); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return key
		}
	}
	return []byte(secret)
}

// StandardSignature is one webhook-signature entry: "v1," and the base64
// HMAC-SHA256 of "id.timestamp.body" keyed with StandardKey(secret).
func StandardSignature(secret, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, StandardKey(secret))
	fmt.Fprintf(m, "%s.%d.", id, timestamp)
	m.Write(body)
	return standardSignaturePrefix + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Verifier checks requests against one secret.
type Verifier struct {
	// Secret is the endpoint's secret, as quorum gave it (whsec_…) or as it
	// was registered.
	Secret string
	// Tolerance bounds how far webhook-timestamp may be from now, either
	// way (default 5 minutes).
	Tolerance time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxBodyBytes bounds the body read (default 10 MiB).
	MaxBodyBytes int64
	// RequireStandard rejects requests without the Standard Webhooks
	// headers, so the timestamp is always checked.
	RequireStandard bool
}

// Verify reads r's body and checks it with a Verifier of the secret and
// tolerance; it returns the body.
func Verify(r *http.Request, secret string, tolerance time.Duration) ([]byte, error) {
	return (&Verifier{Secret: secret, Tolerance: tolerance}).Verify(r)
}

// Verify reads r's body and returns it when its signature matches: the
// Standard Webhooks one when the request has webhook-signature (any one of
// its space-separated entries, as during a secret rotation, with its
// webhook-timestamp within the tolerance), else X-Service-Signature.
func (v *Verifier) Verify(r *http.Request) ([]byte, error) {
	limit := v.MaxBodyBytes
	if limit <= 0 {
		limit = defaultMaxBodyBytes
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("body larger than %d bytes", limit)
	}
	return body, v.Check(r.Header, body)
}

// Check verifies headers against an already read body, as Verify does.
func (v *Verifier) Check(h http.Header, body []byte) error {
	github, standard := h.Get(HeaderSignature), h.Get(HeaderWebhookSignature)
	switch {
	case standard != "":
		// webhook-signature decides: during a secret rotation it carries
		// the previous secret's signature too, while X-Service-Signature,
		// one value, is the new secret's alone and would reject a receiver
		// that has not switched yet.
		return v.checkStandard(h, standard, body)
	case github == "":
		return ErrNoSignature
	case v.RequireStandard:
		return fmt.Errorf("%w: %s missing", ErrNoSignature, HeaderWebhookSignature)
	case !hmac.Equal([]byte(github), []byte(Signature(v.Secret, body))):
		return fmt.Errorf("%s: %w", HeaderSignature, ErrSignature)
	}
	return nil
}

func (v *Verifier) checkStandard(h http.Header, signatures string, body []byte) error {
	id, rawTS := h.Get(HeaderWebhookID), h.Get(HeaderWebhookTimestamp)
	if id == "" {
		return fmt.Errorf("%w: %s missing", ErrSignature, HeaderWebhookID)
	}
	ts, err := strconv.ParseInt(rawTS, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q", ErrTimestamp, HeaderWebhookTimestamp, rawTS)
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = 5 * time.Minute
	}
	if d := now().Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s is %s from now", ErrTimestamp, HeaderWebhookTimestamp, d.Round(time.Second))
	}
	want := []byte(StandardSignature(v.Secret, id, ts, body))
	for sig := range strings.FieldsSeq(signatures) {
		if hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return fmt.Errorf("%s: %w", HeaderWebhookSignature, ErrSignature)
}
