// Command quorum is a self-hostable pull-request review service: its API
// server and workers, its database migrations and its token administration.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quorum-review/quorum/internal/membudget"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "review" {
		// One review in this process: its collector is paced for it.
		membudget.PaceGC(os.Getenv)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err and chooses the exit status: 0 ok, 2 usage, 3 a
// review that did not analyse all of its change, 1 else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, errHelp) {
		return 0
	}
	// An error may quote a path or a line of the repository under review.
	fmt.Fprintf(stderr, "quorum: %s\n", terminalSafe(err.Error(), "\t\n"))
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ie incompleteError
	if errors.As(err, &ie) {
		return 3
	}
	return 1
}

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// the module version from the build info is used.
var version = ""

// build is what the binary knows of where it was built from: its release
// version (or "dev"), and the commit, commit time and whether the tree had
// uncommitted changes, as the go command stamps them (vcs.revision,
// vcs.time, vcs.modified) when it builds inside a git work tree.
type build struct {
	Version  string
	Commit   string
	Time     string
	Modified string // "true", "false" or "" when unknown
}

// readBuild reads the binary's build information.
func readBuild() build {
	b := build{Version: version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		b.Version = cmp.Or(b.Version, "dev")
		return b
	}
	if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	b.Version = cmp.Or(b.Version, "dev")
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			b.Commit = st.Value
		case "vcs.time":
			b.Time = st.Value
		case "vcs.modified":
			b.Modified = st.Value
		}
	}
	return b
}

// String is the version in one word, as /healthz, the User-Agent and the
// start log line give it: "v1.4.0+2d1ce9b1a2b3", "dev+2d1ce9b1a2b3.dirty".
func (b build) String() string {
	s := b.Version
	if len(b.Commit) >= 12 && !strings.Contains(s, b.Commit[:12]) {
		s += "+" + b.Commit[:12]
		if b.Modified == "true" {
			s += ".dirty"
		}
	}
	return s
}

// buildVersion is the version in one word (see build.String).
func buildVersion() string { return readBuild().String() }

// printVersion prints the version and where the binary was built from.
func printVersion(w io.Writer) {
	b := readBuild()
	unknown := func(s string) string { return cmp.Or(s, "unknown") }
	fmt.Fprintf(w, "quorum %s\ncommit:   %s\ntime:     %s\nmodified: %s\ngo:       %s\n",
		b, unknown(b.Commit), unknown(b.Time), unknown(b.Modified), runtime.Version())
}

const topUsage = `quorum reviews pull requests: four specialists (logic, security, performance,
tests) examine each change, and one review is posted, stored and served.

Usage: quorum <command> [flags]

Commands:
  serve      run the API server and the job workers
  migrate    apply database migrations and exit
  backup     copy the embedded SQLite database while serve runs
  review     review a change in a local git repository and print the review
  token      create, list and revoke personal access tokens
  webhook    manage webhook endpoints and their deliveries
  gitea      connect and disconnect repositories of a Gitea or Forgejo
  analyzers  install and list the analyzers of other languages (Python,
             JavaScript/TypeScript, shell, Dockerfiles)
  version    print the version, the commit, its time and whether the
             tree it was built from had uncommitted changes

Run "quorum <command> --help" for a command's flags. Every flag can also be
set through the environment variable named in its help.
`

// run is the whole program; tests call it as main does.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return usageError{errors.New("no command given")}
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, rest, getenv, stdout, stderr)
	case "review":
		return runReview(ctx, rest, getenv, stdout, stderr)
	case "token":
		return runToken(ctx, rest, getenv, stdout, stderr)
	case "webhook":
		return runWebhook(ctx, rest, getenv, stdout, stderr)
	case "gitea":
		return runGitea(ctx, rest, getenv, stdout, stderr)
	case "analyzers":
		return runAnalyzers(ctx, rest, getenv, stdout, stderr)
	case "version", "--version":
		c := newCommand("version", "quorum version",
			"Prints the version, the commit the binary was built from, its time, whether\nthe tree had uncommitted changes, and the Go version.")
		if err := c.parse(rest, getenv, stdout); err != nil {
			return err
		}
		printVersion(stdout)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
		return nil
	default:
		fmt.Fprint(stderr, topUsage)
		return usageError{fmt.Errorf("unknown command %q", cmd)}
	}
}

// dbConfig is the database flags every command that touches it shares.
type dbConfig struct {
	dataDir, url *string
	getenv       func(string) string
}

func addDBFlags(c *command, getenv func(string) string) dbConfig {
	return dbConfig{
		dataDir: c.String("data-dir", "QUORUM_DATA_DIR", "", "directory of the embedded SQLite database (quorum.db), created on first start (default "+dataDirDefault+")"),
		url:     c.String("database-url", "QUORUM_DATABASE_URL", "", "PostgreSQL URL (postgres://user:pass@host:5432/db); when set, used instead of SQLite"),
		getenv:  getenv,
	}
}

// config is the store's configuration. On SQLite it settles the data
// directory, the default one when none was given, as an absolute path
// (so that what describe prints is the same file wherever it is read),
// and keeps it in dataDir for describe and the GitHub cache.
func (d dbConfig) config() (store.Config, error) {
	if *d.url != "" {
		return store.Config{URL: *d.url}, nil
	}
	dir := *d.dataDir
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(d.getenv); err != nil {
			return store.Config{}, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return store.Config{}, fmt.Errorf("data directory: %w", err)
	}
	*d.dataDir = abs
	return store.Config{DataDir: abs}, nil
}

// open opens the database and brings its schema up to date.
func (d dbConfig) open(ctx context.Context, log *slog.Logger) (*store.DB, error) {
	cfg, err := d.config()
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	res, err := db.Migrate(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	for _, p := range db.Exposed() {
		log.Warn("database readable by other users: it holds webhook secrets and the cursor key; chmod 700 the data directory and 600 its files",
			"path", p)
	}
	for _, m := range res.Applied {
		log.Info("applied migration", "version", m.Version, "name", m.Name)
	}
	if len(res.RiverApplied) > 0 {
		log.Info("applied job queue migrations", "versions", res.RiverApplied)
	}
	return db, nil
}

// describe names the database: "postgres", or the SQLite file once config
// has settled it.
func (d dbConfig) describe() string {
	if *d.url != "" {
		return "postgres"
	}
	return store.SQLitePath(*d.dataDir)
}

// newLogger makes the JSON logger at the named level. Durations are
// written as Go writes them, with their unit ("1.5s", "250ms"), not as
// the nanoseconds slog's JSON handler writes by default, whoever logs
// them (quorum or River).
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Errorf("--log-level: want debug, info, warn or error, got %q", level)}
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: durationsWithUnits})), nil
}

func durationsWithUnits(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("migrate", "quorum migrate [flags]",
		"Applies quorum's and the job queue's schema migrations and exits. It is safe\nto run again and from several replicas at once; serve also migrates at start.")
	db := addDBFlags(c, getenv)
	rebuild := c.Bool("rebuild-rollups", "", false, "also recount the dashboard charts' daily rollups from the stored reviews: run it once after a rolling upgrade from a quorum older than the rollups, whose replicas saved reviews without counting them (safe while serve runs)")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	cfg, err := db.config()
	if err != nil {
		return err
	}
	d, err := store.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	res, err := d.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", db.describe(), err)
	}
	for _, m := range res.Applied {
		fmt.Fprintf(stdout, "applied %04d_%s\n", m.Version, m.Name)
	}
	if len(res.RiverApplied) > 0 {
		fmt.Fprintf(stdout, "applied job queue migrations %v\n", res.RiverApplied)
	}
	fmt.Fprintf(stdout, "schema at version %d (%s)\n", store.LatestVersion(), db.describe())
	if *rebuild {
		if err := review.RebuildRollups(ctx, d); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "recounted the daily rollups from the stored reviews")
	}
	return nil
}

// maxTTL is the longest lifetime a token may be given: 100 years, well
// inside what time arithmetic holds.
const maxTTL = 100 * 365 * 24 * time.Hour

// parseTTL reads a token's lifetime, which may also be given in days
// ("30d"). Empty or "never" is no expiry (0); zero, negative, and
// lifetimes over maxTTL (or too large to hold) are errors, never a silent
// "never".
func parseTTL(s string) (time.Duration, error) {
	if s == "" || s == "never" {
		return 0, nil
	}
	bad := fmt.Errorf("want a positive duration of at most 100 years like 720h or 30d, or never, got %q", s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n <= 0 || n > int64(maxTTL/(24*time.Hour)) {
			return 0, bad
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > maxTTL {
		return 0, bad
	}
	return d, nil
}
