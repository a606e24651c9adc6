// Package github is quorum's GitHub App: the API client (installation
// tokens, pull requests, permissions), the change source that builds a
// review's change from a pull request, and the River jobs that post reviews,
// notices and check runs back to GitHub. Webhook intake is in the intake
// subpackage.
package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v88/github"
	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
)

// Defaults of Config.
const (
	DefaultAPIURL      = "https://api.github.com/"
	DefaultBotName     = "quorum"
	DefaultMaxComments = 30
)

// Config is the GitHub App's configuration.
type Config struct {
	AppID         int64
	PrivateKeyPEM []byte
	// WebhookSecret verifies deliveries (used by intake).
	WebhookSecret string
	// APIURL is the REST API's base URL: "" is https://api.github.com/;
	// GitHub Enterprise Server's is https://HOST/api/v3/.
	APIURL string
	// BotName is the mention that asks for a re-review ("@quorum review").
	BotName string
	// MaxComments bounds the inline comments of one review; the rest go
	// into its body.
	MaxComments int
	// Approve posts APPROVE for approve verdicts; otherwise COMMENT.
	Approve bool
	// CheckRuns shows each review as a check run.
	CheckRuns bool
	// ReviewDrafts reviews draft pull requests too (used by intake).
	ReviewDrafts bool
	// CacheDir keeps the fetched repositories (bare, shallow; one unused
	// for a week is removed); "" is quorum-github in the system's
	// temporary directory.
	CacheDir string
	// Version goes in the User-Agent of API calls: quorum/<version>.
	Version string
	// Transport makes the API's requests (http.DefaultTransport when nil;
	// serve gives one that the metrics count).
	Transport http.RoundTripper
}

func (c Config) withDefaults() Config {
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	if c.BotName == "" {
		c.BotName = DefaultBotName
	}
	if c.MaxComments <= 0 {
		c.MaxComments = DefaultMaxComments
	}
	if c.CacheDir == "" {
		c.CacheDir = filepath.Join(os.TempDir(), "quorum-github")
	}
	return c
}

// apiTimeout bounds one API request.
const apiTimeout = 30 * time.Second

// App is the GitHub App: API clients per installation, the change source,
// and the posting workers.
type App struct {
	cfg  Config
	db   *store.DB
	log  *slog.Logger
	now  func() time.Time
	apps *ghinstallation.AppsTransport
	base http.RoundTripper

	mu            sync.Mutex
	installations map[int64]*ghinstallation.Transport
	bot           string // the App's login, once known
	// cache holds the fetched repositories (CacheDir).
	cache *change.FetchCache
}

// New returns the App for cfg, after checking its key.
func New(cfg Config, db *store.DB, log *slog.Logger, now func() time.Time) (*App, error) {
	cfg = cfg.withDefaults()
	if cfg.AppID <= 0 {
		return nil, errors.New("github app: an app id is required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	// Every request, the installation token's too, says who makes it.
	next := cfg.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	base := userAgent{agent: strings.TrimSuffix("quorum/"+cfg.Version, "/"), next: next}
	apps, err := ghinstallation.NewAppsTransport(base, cfg.AppID, cfg.PrivateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("github app: read the private key: %w", err)
	}
	apps.BaseURL = strings.TrimSuffix(cfg.APIURL, "/")
	a := &App{cfg: cfg, db: db, log: log, now: now, apps: apps, base: base,
		installations: map[int64]*ghinstallation.Transport{}}
	a.cache = &change.FetchCache{Dir: cfg.CacheDir, Log: log, Now: func() time.Time { return a.now() }}
	return a, nil
}

// Config returns the App's configuration, with defaults filled in.
func (a *App) Config() Config { return a.cfg }

// transport returns the installation's token-refreshing transport; one per
// installation, so its token is reused until it nears expiry.
func (a *App) transport(installationID int64) *ghinstallation.Transport {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.installations[installationID]
	if !ok {
		t = ghinstallation.NewFromAppsTransport(a.apps, installationID)
		t.BaseURL = a.apps.BaseURL
		// An empty object, not JSON null: GitHub's description wants an
		// object (or no body) and ghinstallation sends null otherwise.
		t.InstallationTokenOptions = &gh.InstallationTokenOptions{}
		a.installations[installationID] = t
	}
	return t
}

// client returns an API client acting as the installation.
func (a *App) client(installationID int64) (*gh.Client, error) {
	return a.newClient(a.transport(installationID))
}

// userAgent sets the User-Agent of the requests it passes on.
type userAgent struct {
	agent string
	next  http.RoundTripper
}

// RoundTrip sets the User-Agent on a copy of r and passes it on.
func (u userAgent) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", u.agent)
	return u.next.RoundTrip(r)
}

// newClient returns an API client authenticating with transport (the
// App's or an installation's).
func (a *App) newClient(transport http.RoundTripper) (*gh.Client, error) {
	c, err := gh.NewClient(
		gh.WithHTTPClient(&http.Client{Transport: transport, Timeout: apiTimeout}),
		gh.WithEnterpriseURLs(a.cfg.APIURL, a.cfg.APIURL),
		gh.WithUserAgent(strings.TrimSuffix("quorum/"+a.cfg.Version, "/")),

		// Rate limits are the jobs' to handle: they snooze until the reset.
		gh.WithDisableRateLimitCheck(),
	)
	if err != nil {
		return nil, fmt.Errorf("github api url %q: %w", a.cfg.APIURL, err)
	}
	return c, nil
}

// botLogin returns the login the App comments as ("<slug>[bot]"), asked
// of GitHub once.
func (a *App) botLogin(ctx context.Context) (string, error) {
	a.mu.Lock()
	bot := a.bot
	a.mu.Unlock()
	if bot != "" {
		return bot, nil
	}
	c, err := a.newClient(a.apps)
	if err != nil {
		return "", err
	}
	app, _, err := c.Apps.Get(ctx, "")
	if err != nil {
		return "", fmt.Errorf("get the app: %w", err)
	}
	if app.GetSlug() == "" {
		return "", errors.New("get the app: GitHub gave no slug")
	}
	bot = app.GetSlug() + "[bot]"
	a.mu.Lock()
	a.bot = bot
	a.mu.Unlock()
	return bot, nil
}

// CanWrite reports whether login has write (or admin/maintain) permission
// on owner/repo.
func (a *App) CanWrite(ctx context.Context, installationID int64, owner, repo, login string) (bool, error) {
	c, err := a.client(installationID)
	if err != nil {
		return false, err
	}
	p, resp, err := c.Repositories.GetPermissionLevel(ctx, owner, repo, login)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil // not a collaborator
	}
	if err != nil {
		return false, fmt.Errorf("permission of %s on %s/%s: %w", login, owner, repo, err)
	}
	switch p.GetPermission() {
	case "admin", "maintain", "write":
		return true, nil
	}
	// role_name is finer than permission ("triage" reads as "read").
	switch p.GetRoleName() {
	case "admin", "maintain", "write":
		return true, nil
	}
	return false, nil
}

// Source builds changes for pipeline.ReviewArgs{Source: "github",
// Location: <installation id in decimal>}.
func (a *App) Source(location string) change.Source {
	return &Source{app: a, location: location}
}

// Register adds the App's River workers (posting, notices, check runs) to rw.
func (a *App) Register(rw *river.Workers) {
	river.AddWorker(rw, &postWorker{app: a})
}

// Publisher is what pipeline.Worker calls for source "github".
func (a *App) Publisher() pipeline.Publisher { return publisher{app: a} }
