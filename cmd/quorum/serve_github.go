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

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/github"
	"github.com/quorum-review/quorum/internal/github/intake"
	"github.com/quorum-review/quorum/internal/metrics"
	"github.com/quorum-review/quorum/internal/pipeline"
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

// gitHub is the GitHub App as serve runs it; nil when not configured, and
// then its methods leave serve as it is without GitHub.
type gitHub struct {
	app     *github.App
	intake  *intake.Intake
	metrics *metrics.Metrics
}

// build makes the App from the flags, or returns nil when none of them
// asks for it. db says where the data is, for the fetch cache's default.
func (f *githubFlags) build(getenv func(string) string, db dbConfig, d *store.DB, log *slog.Logger, now func() time.Time, m *metrics.Metrics) (*gitHub, error) {
	pem := []byte(getenv(envGitHubPrivateKey))
	if *f.keyFile != "" {
		b, err := os.ReadFile(*f.keyFile)
		if err != nil {
			return nil, usageError{fmt.Errorf("--github-private-key-file: %w", err)}
		}
		pem = b
	}
	if *f.appID == 0 && len(pem) == 0 && *f.secret == "" {
		return nil, nil
	}
	if *f.appID <= 0 || len(pem) == 0 || *f.secret == "" {
		return nil, usageError{errors.New("the GitHub App needs --github-app-id, --github-private-key-file (or " + envGitHubPrivateKey + ") and --github-webhook-secret together")}
	}
	if *f.maxComments < 1 {
		return nil, usageError{errors.New("--github-max-comments must be positive")}
	}
	cfg := github.Config{
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
	return &gitHub{app: app, intake: in, metrics: m}, nil
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

// jobLimits returns the time limits of the App's job kinds that have their
// own: posting (the intake's take River's default).
func (g *gitHub) jobLimits() []time.Duration {
	if g == nil {
		return nil
	}
	return []time.Duration{github.PostTimeout}
}

// register adds the App's and the intake's workers.
func (g *gitHub) register(rw *river.Workers) {
	if g == nil {
		return
	}
	g.app.Register(rw)
	g.intake.Register(rw)
}

// addSources adds the GitHub change source.
func (g *gitHub) addSources(sources map[string]func(string) change.Source) {
	if g != nil {
		sources[intake.Source] = g.app.Source
	}
}

// addPublishers adds GitHub's publisher.
func (g *gitHub) addPublishers(pubs map[string]pipeline.Publisher) {
	if g != nil {
		pubs[intake.Source] = g.app.Publisher()
	}
}

// addQueues adds the intake's queue, one worker per process so a pull
// request's events are handled in order.
func (g *gitHub) addQueues(queues map[string]int) {
	if g != nil {
		queues[intake.Queue] = 1
	}
}

// periodic adds the intake's daily pruning to jobs.
func (g *gitHub) periodic(jobs []*river.PeriodicJob) []*river.PeriodicJob {
	if g != nil {
		jobs = append(jobs, intake.PruneEvery())
	}
	return jobs
}

// route serves the webhook on mux; its problem types link to docsURL.
func (g *gitHub) route(mux *http.ServeMux, docsURL string) bool {
	if g == nil {
		return false
	}
	in := g.intake.WithDocsURL(docsURL)
	mux.Handle(intake.Path, g.metrics.Intake(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metrics.SetRoute(r, intake.Path)
		in.ServeHTTP(w, r)
	})))
	return true
}
