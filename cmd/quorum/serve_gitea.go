package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/gitea"
	"github.com/quorum-review/quorum/internal/gitea/intake"
	"github.com/quorum-review/quorum/internal/metrics"
	"github.com/quorum-review/quorum/internal/store"
)

// giteaFlags are serve's Gitea flags; the bot account's token comes from
// QUORUM_GITEA_TOKEN only.
type giteaFlags struct {
	url          *string
	maxComments  *int
	approve      *bool
	reviewDrafts *bool
	cacheDir     *string
}

func addGiteaFlags(c *command) *giteaFlags {
	return &giteaFlags{
		url:          addGiteaURLFlag(c),
		reviewDrafts: c.Bool("gitea-review-drafts", "QUORUM_GITEA_REVIEW_DRAFTS", false, "review work-in-progress pull requests (titles starting WIP: or [WIP]) too"),
		maxComments:  c.Int("gitea-max-comments", "QUORUM_GITEA_MAX_COMMENTS", gitea.DefaultMaxComments, "inline comments per posted review on Gitea; further findings go into its body"),
		approve:      c.Bool("gitea-approve", "QUORUM_GITEA_APPROVE", true, "post approve verdicts on Gitea as APPROVED (false: as COMMENT)"),
		cacheDir:     c.String("gitea-cache-dir", "QUORUM_GITEA_CACHE_DIR", "", "directory of the bare clones that Gitea pull requests' commits are fetched into, each removed after a week unused (default <data-dir>/gitea-cache; with --database-url, quorum/gitea in the user's cache directory)"),
	}
}

// selfTimeout bounds asking Gitea for the bot's login at start.
const selfTimeout = 10 * time.Second

// build makes the Gitea platform from the flags and QUORUM_GITEA_TOKEN, or
// returns nil when neither asks for it.
func (f *giteaFlags) build(ctx context.Context, getenv func(string) string, db dbConfig, d *store.DB, log *slog.Logger, now func() time.Time, m *metrics.Metrics) (*platform, error) {
	if *f.url == "" && getenv(envGiteaToken) == "" {
		return nil, nil
	}
	if *f.url == "" {
		return nil, usageError{errors.New(envGiteaToken + " is set but --gitea-url (or QUORUM_GITEA_URL) is not: give both to review a Gitea's pull requests")}
	}
	if *f.maxComments < 1 {
		return nil, usageError{errors.New("--gitea-max-comments must be positive")}
	}
	api, err := giteaClient(*f.url, getenv, &http.Client{Timeout: 30 * time.Second, Transport: m.GiteaTransport(http.DefaultTransport)})
	if err != nil {
		return nil, err
	}
	log = log.With("component", "gitea")
	// The bot's login is what people mention, and tells its own comments
	// from others': asked of Gitea, so it cannot be set wrong.
	sctx, cancel := context.WithTimeout(ctx, selfTimeout)
	self, err := api.Self(sctx)
	cancel()
	if err != nil {
		return nil, errors.New("gitea: could not ask Gitea who the bot account is (" + err.Error() + "); check --gitea-url, that Gitea is up, and QUORUM_GITEA_TOKEN")
	}
	bot := self.Login
	dir := *f.cacheDir
	if dir == "" {
		dir = defaultCacheDir(db, "gitea")
	}
	if dir == "" {
		// Not a shared temporary directory: another user could make it
		// first and read the private code fetched into it.
		return nil, usageError{errors.New("--gitea-cache-dir is required here: there is no data directory or user cache directory to keep fetched repositories in")}
	}
	src, err := gitea.NewSource(api, dir)
	if err != nil {
		return nil, err
	}
	pub, err := gitea.NewPublisher(api, d, gitea.PublisherConfig{MaxComments: *f.maxComments, Approve: *f.approve, BotName: bot}, log, now)
	if err != nil {
		return nil, err
	}
	in, err := intake.New(intake.Config{BotName: bot, ReviewDrafts: *f.reviewDrafts}, d, api, log.With("component", "gitea-intake"), now)
	if err != nil {
		return nil, err
	}
	return &platform{
		name:      intake.Source,
		changes:   func(string) change.Source { return src },
		publisher: pub.Publisher(),
		register: func(rw *river.Workers) {
			pub.Register(rw)
			in.Register(rw)
		},
		queue:     intake.Queue,
		prune:     intake.PruneEvery(),
		path:      intake.Path,
		intake:    func(docsURL string) http.Handler { return in.WithDocsURL(docsURL) },
		count:     m.GiteaIntake,
		jobLimits: []time.Duration{gitea.PostTimeout},
	}, nil
}
