// Package api serves quorum's read-only JSON API over HTTP: reviews and
// findings behind personal access tokens, with problem+json errors, rate
// limits, health probes, the OpenAPI document and the error reference page.
package api

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

// Config holds the API's settings.
type Config struct {
	// DocsURL prefixes problem type URLs; by default the server's own /docs.
	DocsURL string
	// RateLimit is how many requests a token (or a client address without
	// one) may make per RateWindow.
	RateLimit  int
	RateWindow time.Duration
	// TrustProxy takes the client address from X-Forwarded-For's last hop
	// added by the proxy in front, for per-address limits.
	TrustProxy bool
	// ReviewCacheSize bounds how many encoded reviews are cached (default
	// 1024, about 10 MB with 20 findings each).
	ReviewCacheSize int
	// WebhookAllowPrivate accepts endpoint URLs whose host is a loopback,
	// private or other non-public address (host names are not resolved at
	// registration; deliveries check each address when they connect).
	WebhookAllowPrivate bool
	// WebhookMaxEndpoints bounds an account's live webhook endpoints
	// (webhook.DefaultMaxEndpoints when 0).
	WebhookMaxEndpoints int
	// Version is reported in /healthz.
	Version string
	// Dashboard, when set, serves every path under /dashboard/ (and GET /
	// leads to it); the API's middleware (request ids, logs, rate limits)
	// runs around it as around the API.
	Dashboard http.Handler
}

// reviewCacheTTL bounds how long a cached review outlives its deletion on
// another replica.
const reviewCacheTTL = 10 * time.Minute

// Server is the HTTP API.
type Server struct {
	cfg     Config
	db      *store.DB
	reviews *review.Store
	tokens  *token.Store
	log     *slog.Logger
	now     func() time.Time
	limiter *limiter
	cursors cursorCodec
	openapi []byte
	handler http.Handler
	// reviewCache holds encoded GET /v1/reviews/{id} bodies by account and
	// review id.
	reviewCache *expirable.LRU[string, []byte]
}

// New builds the API server. The cursor key is read from the database, so
// every replica seals and opens the same cursors.
func New(ctx context.Context, cfg Config, db *store.DB, tokens *token.Store, log *slog.Logger, now func() time.Time) (*Server, error) {
	cfg.WebhookMaxEndpoints = cmp.Or(cfg.WebhookMaxEndpoints, webhook.DefaultMaxEndpoints)
	if cfg.RateLimit <= 0 || cfg.RateWindow <= 0 {
		return nil, fmt.Errorf("api: rate limit must be positive (got %d per %s)", cfg.RateLimit, cfg.RateWindow)
	}
	keyHex, err := db.Setting(ctx, store.SettingCursorKey)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	key, err := hex.DecodeString(keyHex)
	if err != nil {
		return nil, fmt.Errorf("api: cursor key: %w", err)
	}
	doc, err := OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:         cfg,
		db:          db,
		reviews:     review.NewStore(db),
		tokens:      tokens,
		log:         log,
		now:         now,
		limiter:     newLimiter(cfg.RateLimit, cfg.RateWindow, now),
		cursors:     cursorCodec{key: key},
		openapi:     doc,
		reviewCache: expirable.NewLRU[string, []byte](cmp.Or(cfg.ReviewCacheSize, 1024), nil, reviewCacheTTL),
	}
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
