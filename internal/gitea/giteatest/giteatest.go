// Package giteatest runs a real Gitea server for tests: built from source by
// scripts/gitea/install, started once per test binary on the machine's
// PostgreSQL (in a database of its own), and stopped by its pid when the
// package's tests end.
//
// A package whose tests use it runs them through Run:
//
//	func TestMain(m *testing.M) { os.Exit(giteatest.Run(m)) }
//
//	func TestSomething(t *testing.T) {
//		srv := giteatest.Start(t)
//		alice := srv.CreateUser(t, "alice")
//		repo := srv.CreateRepo(t, alice, "widgets")
//		srv.Push(t, dir, repo, alice, "main", "feature")
//	}
//
// It needs QUORUM_TEST_POSTGRES_URL (scripts/install-postgres sets up a
// PostgreSQL and prints it); without it Start fails rather than skips,
// because a test of the real platform that silently does not run proves
// nothing.
package giteatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quorum-review/quorum/internal/installtest"
)

// EnvPostgres names the variable holding the PostgreSQL server Gitea runs on;
// each run gets a fresh database there, dropped at Stop.
const EnvPostgres = "QUORUM_TEST_POSTGRES_URL"

// Admin is the site administrator's login; its password is generated per run.
const Admin = "quorum-admin"

// Server is a running Gitea.
type Server struct {
	// URL is the base URL, without a trailing slash: http://127.0.0.1:<port>.
	URL string
	// AdminToken is an access token of the administrator with every scope.
	AdminToken string
	// AdminPassword is the administrator's password, for basic auth.
	AdminPassword string
	// WorkDir holds app.ini, the repositories and Gitea's log (gitea.log).
	WorkDir string
	// Startup says how long migrate and web took, for reports.
	Startup Startup

	cmd      *exec.Cmd
	exited   chan struct{}
	database string // the database created for this run
	adminURL string // where the database was created from, to drop it
}

// Startup is how long each step of starting Gitea took.
type Startup struct {
	Migrate    time.Duration // gitea migrate, on an empty database
	AdminUser  time.Duration // gitea admin user create
	WebReady   time.Duration // gitea web until /api/v1/version answers
	AdminToken time.Duration // the admin token, through the API
}

// The one Gitea of this test binary: Start starts it on first use, Run stops
// it after the tests. Package-level because a test binary has one TestMain.
var (
	once     sync.Once
	started  *Server
	startErr error
	mu       sync.Mutex
	inRun    bool
)

// Run runs the package's tests and then stops the Gitea they started, if
// any. Call it from TestMain and pass its result to os.Exit.
func Run(m *testing.M) int {
	mu.Lock()
	inRun = true
	mu.Unlock()
	code := m.Run()
	mu.Lock()
	if code != 0 && started != nil {
		// The work directory goes with Stop; what Gitea said may be why.
		fmt.Fprintf(os.Stderr, "giteatest: a test failed; %s\n", logTail(started.WorkDir))
	}
	mu.Unlock()
	if err := Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "giteatest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Start returns the test binary's Gitea, starting it on first use. It fails
// the test when Gitea cannot start, and when the package's TestMain does not
// call Run (nothing would stop Gitea then).
func Start(t testing.TB) *Server {
	t.Helper()
	mu.Lock()
	ok := inRun
	mu.Unlock()
	if !ok {
		t.Fatal("giteatest: the package's TestMain must call giteatest.Run, which stops Gitea after the tests: func TestMain(m *testing.M) { os.Exit(giteatest.Run(m)) }")
	}
	once.Do(func() {
		started, startErr = start()
		if startErr == nil {
			s := started.Startup
			t.Logf("giteatest: Gitea at %s: migrate %s, admin user %s, web ready %s, admin token %s",
				started.URL, s.Migrate.Round(time.Millisecond), s.AdminUser.Round(time.Millisecond),
				s.WebReady.Round(time.Millisecond), s.AdminToken.Round(time.Millisecond))
		}
	})
	if startErr != nil {
		t.Fatalf("giteatest: %v", startErr)
	}
	return started
}

// Stop stops the Gitea Start started (by its pid), drops its database and
// removes its work directory. It does nothing when none was started; Run
// calls it.
func Stop() error {
	mu.Lock()
	defer mu.Unlock()
	if started == nil {
		return nil
	}
	s := started
	started = nil
	return s.stop()
}

func start() (*Server, error) {
	pgURL := os.Getenv(EnvPostgres)
	if pgURL == "" {
		return nil, fmt.Errorf("%s is not set: Gitea runs on PostgreSQL; run scripts/install-postgres and set %s=postgres://postgres@127.0.0.1:5432/test?sslmode=disable", EnvPostgres, EnvPostgres)
	}
	binary, err := install()
	if err != nil {
		return nil, err
	}
	source := filepath.Join(filepath.Dir(binary), "src")

	sweepWorkDirs()
	work, err := os.MkdirTemp("", fmt.Sprintf("giteatest-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("create work directory: %w", err)
	}
	s := &Server{WorkDir: work, adminURL: pgURL, AdminPassword: "pw-" + randomHex(12)}
	fail := func(err error) (*Server, error) {
		if stopErr := s.stop(); stopErr != nil {
			err = fmt.Errorf("%w; and cleaning up: %v", err, stopErr)
		}
		return nil, err
	}

	db, err := s.createDatabase()
	if err != nil {
		return fail(err)
	}
	port, err := installtest.FreePort()
	if err != nil {
		return fail(err)
	}
	s.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	config := filepath.Join(work, "app.ini")
	if err := os.WriteFile(config, []byte(appIni(work, source, s.URL, port, db)), 0o600); err != nil {
		return fail(fmt.Errorf("write app.ini: %w", err))
	}
	logFile, err := os.Create(filepath.Join(work, "gitea.log"))
	if err != nil {
		return fail(fmt.Errorf("create gitea.log: %w", err))
	}
	defer logFile.Close()

	gitea := func(args ...string) *exec.Cmd {
		cmd := exec.Command(binary, append([]string{"--config", config, "--work-path", work}, args...)...)
		cmd.Dir = work
		// Gitea and the git it runs get a home of their own, not the
		// user's ~/.gitconfig.
		cmd.Env = append(os.Environ(), "HOME="+filepath.Join(work, "home"), "GITEA_WORK_DIR="+work)
		cmd.Stdout = logFile
		cmd.Stderr = logFile
		cmd.SysProcAttr = procAttr()
		return cmd
	}
	runStep := func(what string, took *time.Duration, args ...string) error {
		begin := time.Now()
		if err := gitea(args...).Run(); err != nil {
			return fmt.Errorf("gitea %s: %w\n%s", what, err, logTail(work))
		}
		*took = time.Since(begin)
		return nil
	}

	if err := runStep("migrate", &s.Startup.Migrate, "migrate"); err != nil {
		return fail(err)
	}
	if err := runStep("admin user create", &s.Startup.AdminUser, "admin", "user", "create", "--admin",
		"--username", Admin, "--password", s.AdminPassword, "--email", Admin+"@example.test",
		"--must-change-password=false"); err != nil {
		return fail(err)
	}

	begin := time.Now()
	s.cmd = gitea("web")
	if err := s.cmd.Start(); err != nil {
		return fail(fmt.Errorf("start gitea web: %w", err))
	}
	s.exited = make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(); err != nil {
		return fail(err)
	}
	s.Startup.WebReady = time.Since(begin)

	begin = time.Now()
	token, err := s.createToken(Admin, s.AdminPassword)
	if err != nil {
		return fail(fmt.Errorf("create the admin's token: %w", err))
	}
	s.AdminToken = token
	s.Startup.AdminToken = time.Since(begin)
	return s, nil
}

// appIni is the configuration of a test Gitea: installed, offline, on
// loopback only, and allowed to deliver webhooks to loopback (where the
// quorum under test listens; Gitea's default, `external`, refuses it).
func appIni(work, source, rootURL string, port int, db database) string {
	return fmt.Sprintf(`APP_NAME = quorum test Gitea
RUN_MODE = prod
WORK_PATH = %[1]s
; CI runs as root, which Gitea refuses without this.
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[4]d
ROOT_URL = %[3]s/
DOMAIN = 127.0.0.1
; Built without bindata, Gitea reads its locales and templates from here.
STATIC_ROOT_PATH = %[2]s
APP_DATA_PATH = %[1]s/data
OFFLINE_MODE = true
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false

[database]
DB_TYPE = postgres
HOST = %[5]s
NAME = %[6]s
USER = %[7]s
PASSWD = %[8]s
SSL_MODE = %[9]s

[repository]
ROOT = %[1]s/repositories
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
; Given, so Gitea does not generate them and write app.ini back.
SECRET_KEY = %[10]s
INTERNAL_TOKEN = %[11]s

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false

[mailer]
ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[webhook]
ALLOWED_HOST_LIST = loopback

[log]
MODE = console
LEVEL = Warn
`, work, source, rootURL, port, db.host, db.name, db.user, db.password, db.sslMode, randomHex(32), randomHex(32))
}

// database is where Gitea's tables live, in app.ini's terms.
type database struct {
	host, name, user, password, sslMode string
}

// createDatabase creates a fresh database for this run beside the one
// QUORUM_TEST_POSTGRES_URL names.
func (s *Server) createDatabase() (database, error) {
	u, err := url.Parse(s.adminURL)
	if err != nil {
		return database{}, fmt.Errorf("parse %s: %w", EnvPostgres, err)
	}
	// The test binary's pid in the name lets a later run drop what a
	// binary killed before Stop left behind.
	name := fmt.Sprintf("gitea_test_%d_%s", os.Getpid(), randomHex(4))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.adminURL)
	if err != nil {
		return database{}, fmt.Errorf("connect to %s (run scripts/install-postgres): %w", EnvPostgres, err)
	}
	defer conn.Close(context.Background())
	if err := sweepDatabases(ctx, conn); err != nil {
		return database{}, err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return database{}, fmt.Errorf("create database %s: %w", name, err)
	}
	s.database = name
	password, _ := u.User.Password()
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	sslMode := u.Query().Get("sslmode")
	if sslMode == "" {
		sslMode = "disable"
	}
	return database{host: host, name: name, user: u.User.Username(), password: password, sslMode: sslMode}, nil
}

// sweepDatabases drops the gitea_test_<pid>_* databases of test binaries
// that are gone (killed by -timeout, say, before Stop). It assumes the
// PostgreSQL is this machine's: a pid of another machine's run may look
// gone from here.
func sweepDatabases(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'gitea\_test\_%'`)
	if err != nil {
		return fmt.Errorf("list stale Gitea test databases: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list stale Gitea test databases: %w", err)
	}
	for _, name := range names {
		pid, ok := ownerPid(strings.TrimPrefix(name, "gitea_test_"), "_")
		if !ok || !processGone(pid) {
			continue
		}
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop stale database %s: %w", name, err)
		}
	}
	return nil
}

// sweepWorkDirs removes the giteatest-<pid>-* work directories of test
// binaries that are gone. Failures are ignored: a directory left is only
// disk space.
func sweepWorkDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "giteatest-*-*"))
	for _, dir := range dirs {
		if pid, ok := ownerPid(strings.TrimPrefix(filepath.Base(dir), "giteatest-"), "-"); ok && processGone(pid) {
			_ = os.RemoveAll(dir)
		}
	}
}

// ownerPid reads the pid at the start of rest, up to sep.
func ownerPid(rest, sep string) (int, bool) {
	digits, _, found := strings.Cut(rest, sep)
	if !found {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// stop ends gitea web by its pid (SIGTERM, then SIGKILL if it lingers),
// drops the database and removes the work directory.
func (s *Server) stop() error {
	var errs []error
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	if s.database != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.adminURL)
		if err == nil {
			// FORCE ends the connections a killed Gitea may have left.
			_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+s.database+" WITH (FORCE)")
			conn.Close(context.Background())
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("drop database %s: %w", s.database, err))
		}
	}
	if err := os.RemoveAll(s.WorkDir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", s.WorkDir, err))
	}
	return errors.Join(errs...)
}

// waitReady polls /api/v1/version until Gitea answers, it exits, or a
// minute passes.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(time.Minute)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(s.URL + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("gitea web exited before it answered /api/v1/version (%v)\n%s", s.cmd.ProcessState, logTail(s.WorkDir))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gitea web did not answer %s/api/v1/version within a minute\n%s", s.URL, logTail(s.WorkDir))
		}
	}
}

// install runs scripts/gitea/install, which builds Gitea once per machine
// and prints the binary's path.
func install() (string, error) {
	root, err := installtest.Root("scripts/gitea/install")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "gitea", "install"))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/gitea/install: %w\n%s", err, stderr.String())
	}
	binary := strings.TrimSpace(string(out))
	if _, err := os.Stat(binary); err != nil {
		return "", fmt.Errorf("scripts/gitea/install printed %q, which is not a file: %w", binary, err)
	}
	return binary, nil
}

// logTail is the end of Gitea's log, for error messages.
func logTail(work string) string {
	b, err := os.ReadFile(filepath.Join(work, "gitea.log"))
	if err != nil {
		return "(no gitea.log: " + err.Error() + ")"
	}
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return "gitea.log ends:\n" + string(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// User is a Gitea account created for a test.
type User struct {
	Name     string
	Password string
	// Token is an access token of the user with every scope.
	Token string
}

// Repo is a Gitea repository created for a test.
type Repo struct {
	Owner string `json:"-"` // the owner's login (Gitea's answer has an object)
	Name  string `json:"-"`
	// CloneURL is the HTTP address git pushes to, without credentials.
	CloneURL string `json:"clone_url"`
	// DefaultBranch is the branch Gitea shows first.
	DefaultBranch string `json:"default_branch"`
}

// CreateUser creates a user through the admin API, with a token of every
// scope.
func (s *Server) CreateUser(t testing.TB, name string) User {
	t.Helper()
	u := User{Name: name, Password: "pw-" + randomHex(12)}
	s.API(t, s.AdminToken, http.MethodPost, "/admin/users", map[string]any{
		"username":             name,
		"email":                name + "@example.test",
		"password":             u.Password,
		"must_change_password": false,
	}, nil)
	token, err := s.createToken(u.Name, u.Password)
	if err != nil {
		t.Fatalf("giteatest: create %s's token: %v", name, err)
	}
	u.Token = token
	return u
}

// CreateRepo creates an empty repository owned by user.
func (s *Server) CreateRepo(t testing.TB, owner User, name string) Repo {
	t.Helper()
	var r Repo
	s.API(t, owner.Token, http.MethodPost, "/user/repos", map[string]any{
		"name":      name,
		"auto_init": false,
		"private":   false,
	}, &r)
	r.Owner, r.Name = owner.Name, name
	return r
}

// CreateToken creates another access token of user, with only the given
// scopes (Gitea's names: "write:repository", "read:user", …).
func (s *Server) CreateToken(t testing.TB, user User, scopes ...string) string {
	t.Helper()
	token, err := s.createToken(user.Name, user.Password, scopes...)
	if err != nil {
		t.Fatalf("giteatest: create a token of %s: %v", user.Name, err)
	}
	return token
}

// createToken creates an access token for a user, of every scope unless
// scopes are given, with basic auth as Gitea requires for this endpoint.
func (s *Server) createToken(user, password string, scopes ...string) (string, error) {
	if len(scopes) == 0 {
		scopes = []string{"all"}
	}
	body, _ := json.Marshal(map[string]any{"name": "giteatest-" + randomHex(4), "scopes": scopes})
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/users/"+url.PathEscape(user)+"/tokens", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(user, password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("POST /users/%s/tokens: %s: %s", user, resp.Status, b)
	}
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	if err := json.Unmarshal(b, &tok); err != nil || tok.SHA1 == "" {
		return "", fmt.Errorf("POST /users/%s/tokens: no token in %s", user, b)
	}
	return tok.SHA1, nil
}

// API calls Gitea's API at /api/v1+path with token (none when empty),
// sending in as JSON when it is not nil and decoding the answer into out
// when it is not nil. Any status other than 2xx fails the test.
func (s *Server) API(t testing.TB, token, method, path string, in, out any) {
	t.Helper()
	status, body := s.Call(t, token, method, path, in)
	if status/100 != 2 {
		t.Fatalf("giteatest: %s /api/v1%s: %d: %s", method, path, status, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("giteatest: %s /api/v1%s: decode %s: %v", method, path, body, err)
		}
	}
}

// Call is API without the status check: it returns the status and body,
// for tests that expect a failure.
func (s *Server) Call(t testing.TB, token, method, path string, in any) (int, []byte) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("giteatest: encode %s %s: %v", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+"/api/v1"+path, body)
	if err != nil {
		t.Fatalf("giteatest: %s %s: %v", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("giteatest: %s /api/v1%s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("giteatest: %s /api/v1%s: read body: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// Push pushes branches of the local repository in dir to repo over HTTP as
// user, and returns once Gitea's API shows every branch at the commit
// pushed. The credentials reach git through the environment
// (GIT_CONFIG_COUNT/KEY/VALUE setting http.extraHeader), so they are never
// written to disk, to the repository's config, or onto git's command line.
// Each branch is pushed to the branch of the same name, forced, so a test
// can rewrite history.
func (s *Server) Push(t testing.TB, dir string, repo Repo, user User, branches ...string) {
	t.Helper()
	if len(branches) == 0 {
		t.Fatal("giteatest: Push needs at least one branch")
	}
	auth := base64.StdEncoding.EncodeToString([]byte(user.Name + ":" + user.Token))
	args := []string{"push", "--porcelain", repo.CloneURL}
	for _, b := range branches {
		args = append(args, "+refs/heads/"+b+":refs/heads/"+b)
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	// No user or system configuration: a credential helper there must not
	// be asked to store anything.
	cmd.Env = append(os.Environ(),
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic "+auth,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("giteatest: git push %s to %s: %v\n%s", strings.Join(branches, " "), repo.CloneURL, err, out)
	}
	for _, b := range branches {
		out, err := exec.Command("git", "-C", dir, "rev-parse", "refs/heads/"+b).Output()
		if err != nil {
			t.Fatalf("giteatest: git rev-parse %s: %v", b, err)
		}
		s.waitBranch(t, repo, user, b, strings.TrimSpace(string(out)))
	}
}

// waitBranch waits until Gitea's API shows branch at commit and the
// repository as not empty. Gitea accepts a push before it records it: its
// post-receive hook queues the update (the push_update queue), and until
// the queue has run, the API answers from the old state — on a repository
// that was empty, GET contents even panics (Gitea v1.26.0, a nil git
// repository in services/repository/files/content.go).
func (s *Server) waitBranch(t testing.TB, repo Repo, user User, branch, commit string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	path := "/repos/" + url.PathEscape(repo.Owner) + "/" + url.PathEscape(repo.Name)
	var last string
	for {
		var r struct {
			Empty bool `json:"empty"`
		}
		var b struct {
			Commit struct {
				ID string `json:"id"`
			} `json:"commit"`
		}
		status, body := s.Call(t, user.Token, http.MethodGet, path, nil)
		if status == http.StatusOK && json.Unmarshal(body, &r) == nil && !r.Empty {
			status, body = s.Call(t, user.Token, http.MethodGet, path+"/branches/"+url.PathEscape(branch), nil)
			if status == http.StatusOK && json.Unmarshal(body, &b) == nil && b.Commit.ID == commit {
				return
			}
		}
		last = fmt.Sprintf("%d: %s", status, body)
		if time.Now().After(deadline) {
			t.Fatalf("giteatest: %s/%s: branch %s did not reach the pushed %s within 30 s; Gitea last said %s", repo.Owner, repo.Name, branch, commit, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
