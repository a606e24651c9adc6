// Command receiver is a minimal quorum webhook receiver: it verifies each
// delivery's signatures with package verify, answers 401 to a forged or
// replayed one, and handles each delivery_id once, however often quorum
// delivers it (delivery is at least once).
//
//	QUORUM_WEBHOOK_SECRET=whsec_… go run ./examples/receiver -addr :9000
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/quorum-review/quorum/webhook/verify"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9000", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	secret := getenv("QUORUM_WEBHOOK_SECRET")
	if secret == "" {
		return errors.New("set QUORUM_WEBHOOK_SECRET to the endpoint's secret")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	h := &handler{v: &verify.Verifier{Secret: secret, Tolerance: 5 * time.Minute}, log: log, seen: map[string]bool{}}
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("receiving webhooks", "addr", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handler verifies and handles deliveries. A real receiver keeps seen in
// its database, in the transaction that acts on the event.
type handler struct {
	v    *verify.Verifier
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]bool
}

// envelope is every delivery's body.
type envelope struct {
	Event       string          `json:"event"`
	DeliveredAt time.Time       `json:"delivered_at"`
	DeliveryID  string          `json:"delivery_id"`
	Data        json.RawMessage `json:"data"`
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := h.v.Verify(r)
	if err != nil {
		h.log.Warn("rejected delivery", "error", err.Error())
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		http.Error(w, "bad envelope", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	dup := h.seen[env.DeliveryID]
	h.seen[env.DeliveryID] = true
	h.mu.Unlock()
	if dup {
		// Already handled: say so with a 2xx, or quorum retries it.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.log.Info("delivery", "event", env.Event, "delivery_id", env.DeliveryID, "data", string(env.Data))
	w.WriteHeader(http.StatusNoContent)
}
