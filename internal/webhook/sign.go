package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quorum-review/quorum/webhook/verify"
)

// signer is what signs a delivery: the endpoint's secret and, during a
// rotation's overlap, the previous one.
type signer struct {
	Secret            string
	PreviousSecret    string
	PreviousExpiresAt *time.Time
}

// setHeaders sets the signature headers of one attempt of a delivery, sent
// at now: X-Service-Signature with the current secret; webhook-id,
// webhook-timestamp, and webhook-signature with the current secret and,
// until the previous one expires, the previous one too.
func (s signer) setHeaders(h http.Header, deliveryID string, now time.Time, body []byte) {
	ts := now.Unix()
	sigs := []string{verify.StandardSignature(s.Secret, deliveryID, ts, body)}
	if s.PreviousSecret != "" && s.PreviousExpiresAt != nil && now.Before(*s.PreviousExpiresAt) {
		sigs = append(sigs, verify.StandardSignature(s.PreviousSecret, deliveryID, ts, body))
	}
	h.Set(verify.HeaderSignature, verify.Signature(s.Secret, body))
	// Standard Webhooks spells its headers in lower case; set them as is.
	h[verify.HeaderWebhookID] = []string{deliveryID}
	h[verify.HeaderWebhookTimestamp] = []string{strconv.FormatInt(ts, 10)}
	h[verify.HeaderWebhookSignature] = []string{strings.Join(sigs, " ")}
}
