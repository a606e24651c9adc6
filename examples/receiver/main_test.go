package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/webhook/verify"
)

// The receiver accepts a signed delivery once, answers a repeat with 2xx
// without handling it again, and refuses a forged one.
func TestReceiver(t *testing.T) {
	t.Parallel()
	const secret = "whsec_ZXhhbXBsZS1yZWNlaXZlci1zZWNyZXQ="
	var logs strings.Builder
	h := &handler{v: &verify.Verifier{Secret: secret}, log: slog.New(slog.NewTextHandler(&logs, nil)), seen: map[string]bool{}}
	body := `{"event":"ping","delivered_at":"2026-11-23T03:00:00.000Z","delivery_id":"wh_1","data":{"endpoint_id":"hook_1"}}`
	send := func(sig string) int {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		ts := time.Now().Unix()
		r.Header.Set("webhook-id", "wh_1")
		r.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		r.Header.Set("webhook-signature", verify.StandardSignature(sig, "wh_1", ts, []byte(body)))
		r.Header.Set("X-Service-Signature", verify.Signature(sig, []byte(body)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		_, _ = io.Copy(io.Discard, w.Body)
		return w.Code
	}
	if code := send(secret); code != http.StatusNoContent {
		t.Fatalf("first delivery: %d", code)
	}
	if code := send(secret); code != http.StatusNoContent {
		t.Fatalf("repeat: %d", code)
	}
	if n := strings.Count(logs.String(), "msg=delivery"); n != 1 {
		t.Fatalf("handled %d times, want once:\n%s", n, logs.String())
	}
	if code := send("whsec_d3Jvbmc="); code != http.StatusUnauthorized {
		t.Fatalf("forged: %d", code)
	}
}
