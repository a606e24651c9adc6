package verify_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/webhook/verify"
)

// GitHub's published example for the same scheme ("Validating webhook
// deliveries", docs.github.com).
func TestSignatureGitHubVector(t *testing.T) {
	t.Parallel()
	got := verify.Signature("It's a Secret to Everybody", []byte("Hello, World!"))
	if want := "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"; got != want {
		t.Fatalf("Signature = %s, want %s", got, want)
	}
}

// The Standard Webhooks specification's own vector
// (standard-webhooks/standard-webhooks, libraries/go/webhook_test.go,
// TestWebhookSign).
const (
	swSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	swID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	swTS     = 1614265330
	swBody   = `{"test": 2432232314}`
	swSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestStandardSignatureVector(t *testing.T) {
	t.Parallel()
	if got := verify.StandardSignature(swSecret, swID, swTS, []byte(swBody)); got != swSig {
		t.Fatalf("StandardSignature = %s, want %s", got, swSig)
	}
	// And a receiver accepts the vector's request at its own time.
	v := &verify.Verifier{Secret: swSecret, Now: func() time.Time { return time.Unix(swTS+30, 0) }}
	r := request(swBody, map[string]string{"webhook-id": swID, "webhook-timestamp": strconv.Itoa(swTS), "webhook-signature": swSig})
	body, err := v.Verify(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != swBody {
		t.Fatalf("body %q, want %q", body, swBody)
	}
}

func request(body string, headers map[string]string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	return r
}

// signed is a request as quorum sends it, at ts, signed with secrets (the
// first for X-Service-Signature, every one in webhook-signature).
func signed(body string, ts int64, secrets ...string) *http.Request {
	var sigs []string
	for _, s := range secrets {
		sigs = append(sigs, verify.StandardSignature(s, "wh_1", ts, []byte(body)))
	}
	return request(body, map[string]string{
		"X-Service-Signature": verify.Signature(secrets[0], []byte(body)),
		"webhook-id":          "wh_1",
		"webhook-timestamp":   strconv.FormatInt(ts, 10),
		"webhook-signature":   strings.Join(sigs, " "),
	})
}

func TestVerify(t *testing.T) {
	t.Parallel()
	const secret, body = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0IQ==", `{"event":"ping"}`
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	tamper := func(r *http.Request) *http.Request {
		t := request(`{"event":"pong"}`, nil)
		t.Header = r.Header
		return t
	}
	withHeader := func(r *http.Request, k, v string) *http.Request {
		r.Header.Set(k, v)
		return r
	}
	only := func(r *http.Request, keep ...string) *http.Request {
		h := http.Header{}
		for _, k := range keep {
			h.Set(k, r.Header.Get(k))
		}
		r.Header = h
		return r
	}
	for _, tc := range []struct {
		name string
		r    *http.Request
		want error
	}{
		{"both schemes", signed(body, now.Unix(), secret), nil},
		{"X-Service-Signature only", only(signed(body, now.Unix(), secret), "X-Service-Signature"), nil},
		{"Standard Webhooks only", only(signed(body, now.Unix(), secret), "webhook-id", "webhook-timestamp", "webhook-signature"), nil},
		{"rotation: new and previous secret", signed(body, now.Unix(), secret, "previous-secret-value"), nil},
		// During a rotation X-Service-Signature (one value) is the new
		// secret's; webhook-signature has both, and decides.
		{"rotation: receiver still on the previous secret", signed(body, now.Unix(), "whsec_bmV3LW5ldy1uZXctbmV3", secret), nil},
		{"rotation over: only the new secret signs", signed(body, now.Unix(), "whsec_bmV3LW5ldy1uZXctbmV3"), verify.ErrSignature},
		{"X-Service-Signature matches, webhook-signature does not", withHeader(signed(body, now.Unix(), secret), "webhook-signature", "v1,"+strings.Repeat("A", 43)+"="), verify.ErrSignature},
		{"within tolerance", signed(body, now.Add(-4*time.Minute).Unix(), secret), nil},
		{"tampered body", tamper(signed(body, now.Unix(), secret)), verify.ErrSignature},
		{"tampered body, Standard only", tamper(only(signed(body, now.Unix(), secret), "webhook-id", "webhook-timestamp", "webhook-signature")), verify.ErrSignature},
		{"wrong secret", signed(body, now.Unix(), "whsec_d3Jvbmc="), verify.ErrSignature},
		{"stale timestamp", signed(body, now.Add(-6*time.Minute).Unix(), secret), verify.ErrTimestamp},
		{"future timestamp", signed(body, now.Add(6*time.Minute).Unix(), secret), verify.ErrTimestamp},
		{"no signature", request(body, nil), verify.ErrNoSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &verify.Verifier{Secret: secret, Tolerance: 5 * time.Minute, Now: clock}
			got, err := v.Verify(tc.r)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if string(got) != body {
					t.Fatalf("body %q, want %q", got, body)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify error %v, want %v", err, tc.want)
			}
		})
	}
}

// Verify with the real clock accepts a fresh request and rejects a stale
// one.
func TestVerifyFunc(t *testing.T) {
	t.Parallel()
	if _, err := verify.Verify(signed("{}", time.Now().Unix(), "s3cret-s3cret-s3cret"), "s3cret-s3cret-s3cret", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Verify(signed("{}", time.Now().Add(-time.Hour).Unix(), "s3cret-s3cret-s3cret"), "s3cret-s3cret-s3cret", time.Minute); !errors.Is(err, verify.ErrTimestamp) {
		t.Fatalf("stale: %v", err)
	}
}

// The worked example of docs/webhooks.md verifies.
func TestDocsExample(t *testing.T) {
	t.Parallel()
	const body = `{"event":"ping","delivered_at":"2026-11-23T03:00:00.000Z","delivery_id":"wh_01JDX3Q4ZK8M2V7R5T9N6B3C1A","data":{"endpoint_id":"hook_01JDX3P8W2N4K6M8Q0R2T4V6X8"}}`
	r := request(body, map[string]string{
		"X-Service-Signature": "sha256=a140fb5e73fa65c087a8f2b9a5c0f768b48a84d94df23c92aeb3a0d567cf9c28",
		"webhook-id":          "wh_01JDX3Q4ZK8M2V7R5T9N6B3C1A",
		"webhook-timestamp":   "1795402800",
		"webhook-signature":   "v1,ZWEz3HbWw+xYYW198NAZF7ny3Hq1brM//k1nhBjhktk=",
	})
	v := &verify.Verifier{Secret: swSecret, Now: func() time.Time { return time.Unix(1795402800, 0) }}
	if _, err := v.Verify(r); err != nil {
		t.Fatal(err)
	}
}
