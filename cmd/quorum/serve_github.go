package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/github"
	"github.com/quorum-review/quorum/internal/github/intake"
	"github.com/quorum-review/quorum/internal/metrics"
	"github.com/quorum-review/quorum/internal/store"
)

// githubFlags are serve's GitHub App flags.
type githubFlags struct {
	appID        *int
	keyFile      *string
	secret       *string
	apiURL       *string
	botName      *string
	maxComments  *int
	approve      *bool
	checkRuns    *bool
	reviewDrafts *bool
	cacheDir     *string
}

// envGitHubPrivateKey holds the App's private key PEM itself, for
// platforms that pass secrets as environment rather than files.
const envGitHubPrivateKey = "QUORUM_GITHUB_PRIVATE_KEY"

func addGitHubFlags(c *command) *githubFlags {
	return &githubFlags{
		appID:        c.Int("github-app-id", "QUORUM_GITHUB_APP_ID", 0, "GitHub App id; with a private key and a webhook secret it turns on the GitHub App (POST /github/webhook)"),
		keyFile:      c.String("github-private-key-file", "QUORUM_GITHUB_PRIVATE_KEY_FILE", "", "file holding the GitHub App's private key (PEM); or put the PEM itself in "+envGitHubPrivateKey),
		secret:       c.String("github-webhook-secret", "QUORUM_GITHUB_WEBHOOK_SECRET", "", "the GitHub App's webhook secret, which signs every delivery (prefer the environment variable: a flag shows in ps and shell history)"),
		apiURL:       c.String("github-api-url", "QUORUM_GITHUB_API_URL", "", "GitHub REST API URL (default https://api.github.com/; GitHub Enterprise Server: https://HOST/api/v3/)"),
		botName:      c.String("github-bot-name", "QUORUM_GITHUB_BOT_NAME", github.DefaultBotName, "name in the comment that asks for a new review (\"@quorum review\")"),
		maxComments:  c.Int("github-max-comments", "QUORUM_GITHUB_MAX_COMMENTS", github.DefaultMaxComments, "inline comments per posted review; further findings go into its body"),
		approve:      c.Bool("github-approve", "QUORUM_GITHUB_APPROVE", true, "post approve verdicts as APPROVE (false: as COMMENT)"),
		checkRuns:    c.Bool("github-check-runs", "QUORUM_GITHUB_CHECK_RUNS", false, "show each review as a check run on its head"),
		reviewDrafts: c.Bool("github-review-drafts", "QUORUM_GITHUB_REVIEW_DRAFTS", false, "review draft pull requests too"),
		cacheDir:     c.String("github-cache-dir", "QUORUM_GITHUB_CACHE_DIR", "", "directory of the bare, shallow clones that pull requests' commits are fetched into, each removed after a week unused (default <data-dir>/github-cache; with --database-url, quorum/github in the user's cache directory)"),
	}
}

// config reads the App's configuration from the flags, or returns ok
// false when none of them asks for the App. db says where the data is, for
// the fetch cache's default.
func (f *githubFlags) config(getenv func(string) string, db dbConfig, m *metrics.Metrics) (cfg github.Config, ok bool, err error) {
	pem := []byte(getenv(envGitHubPrivateKey))
	if *f.keyFile != "" {
		b, err := os.ReadFile(*f.keyFile)
		if err != nil {
			return cfg, false, usageError{fmt.Errorf("--github-private-key-file: %w", err)}
		}
		pem = b
	}
	if *f.appID == 0 && len(pem) == 0 && *f.secret == "" {
		return cfg, false, nil
	}
	if *f.appID <= 0 || len(pem) == 0 || *f.secret == "" {
		return cfg, false, usageError{errors.New("the GitHub App needs --github-app-id, --github-private-key-file (or " + envGitHubPrivateKey + ") and --github-webhook-secret together")}
	}
	if *f.maxComments < 1 {
		return cfg, false, usageError{errors.New("--github-max-comments must be positive")}
	}
	cfg = github.Config{
		AppID:         int64(*f.appID),
		PrivateKeyPEM: pem,
		WebhookSecret: *f.secret,
		APIURL:        *f.apiURL,
		BotName:       *f.botName,
		MaxComments:   *f.maxComments,
		Approve:       *f.approve,
		CheckRuns:     *f.checkRuns,
		ReviewDrafts:  *f.reviewDrafts,
		CacheDir:      *f.cacheDir,
		Version:       buildVersion(),
		Transport:     m.GitHubTransport(http.DefaultTransport),
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = defaultCacheDir(db, "github")
	}
	return cfg, true, nil
}

// build makes the GitHub platform from the flags, or returns nil when none
// of them asks for the App.
func (f *githubFlags) build(getenv func(string) string, db dbConfig, d *store.DB, log *slog.Logger, now func() time.Time, m *metrics.Metrics) (*platform, error) {
	cfg, ok, err := f.config(getenv, db, m)
	if !ok || err != nil {
		return nil, err
	}
	app, err := github.New(cfg, d, log.With("component", "github"), now)
	if err != nil {
		return nil, err
	}
	cfg = app.Config()
	in, err := intake.New(intake.Config{
		WebhookSecret: cfg.WebhookSecret,
		BotName:       cfg.BotName,
		ReviewDrafts:  cfg.ReviewDrafts,
	}, d, app, log.With("component", "github-intake"), now)
	if err != nil {
		return nil, err
	}
	return &platform{
		name:      intake.Source,
		changes:   app.Source,
		publisher: app.Publisher(),
		register: func(rw *river.Workers) {
			app.Register(rw)
			in.Register(rw)
		},
		queue:     intake.Queue,
		prune:     intake.PruneEvery(),
		path:      intake.Path,
		intake:    func(docsURL string) http.Handler { return in.WithDocsURL(docsURL) },
		count:     m.Intake,
		jobLimits: []time.Duration{github.PostTimeout},
	}, nil
}

// defaultCacheDir is where a platform's fetched repositories are kept when
// its --<platform>-cache-dir is not given: beside the SQLite database, or,
// on PostgreSQL (the data directory is not used), in the user's cache
// directory. "" when there is no home to find one in.
func defaultCacheDir(db dbConfig, platform string) string {
	if *db.url == "" {
		cfg, err := db.config()
		if err != nil {
			return ""
		}
		return filepath.Join(cfg.DataDir, platform+"-cache")
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "quorum", platform)
}
