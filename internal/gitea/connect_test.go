package gitea_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/gitea"
	"github.com/quorum-review/quorum/internal/gitea/giteatest"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// hook is a webhook as Gitea's API lists it.
type hook struct {
	ID     int64             `json:"id"`
	Type   string            `json:"type"`
	Active bool              `json:"active"`
	Events []string          `json:"events"`
	Config map[string]string `json:"config"`
}

func hooksOf(t *testing.T, srv *giteatest.Server, owner giteatest.User, repo string) []hook {
	t.Helper()
	var hs []hook
	srv.API(t, owner.Token, http.MethodGet, "/repos/"+owner.Name+"/"+repo+"/hooks", nil, &hs)
	return hs
}

// connectFixture is a repository of its owner, with a bot account that
// has the given access to it.
type connectFixture struct {
	srv   *giteatest.Server
	owner giteatest.User
	bot   giteatest.User
	api   *gitea.Client
	db    *store.DB
}

func setupConnect(t *testing.T, owner, bot, permission string) connectFixture {
	t.Helper()
	owner, bot = gitea.UniqueName(owner), gitea.UniqueName(bot)
	srv := giteatest.Start(t)
	f := connectFixture{srv: srv, owner: srv.CreateUser(t, owner), bot: srv.CreateUser(t, bot), db: storetest.SQLite(t)}
	srv.CreateRepo(t, f.owner, "widgets")
	srv.API(t, f.owner.Token, http.MethodPut, "/repos/"+owner+"/widgets/collaborators/"+bot, map[string]any{"permission": permission}, nil)
	api, err := gitea.NewClient(srv.URL, f.bot.Token, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	f.api = api
	return f
}

func installationEvents(t *testing.T, db *store.DB) []struct {
	Name string
	Data event.InstallationData
} {
	t.Helper()
	rows, err := db.Reader().Query(context.Background(), `SELECT name, data FROM events WHERE name LIKE 'installation.%' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []struct {
		Name string
		Data event.InstallationData
	}
	for rows.Next() {
		var name, data string
		if err := rows.Scan(&name, &data); err != nil {
			t.Fatal(err)
		}
		var d event.InstallationData
		if err := json.Unmarshal([]byte(data), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, struct {
			Name string
			Data event.InstallationData
		}{name, d})
	}
	return out
}

func TestConnectCreatesTheWebhookAndTheInstallation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setupConnect(t, "dora", "dora-bot", "admin")
	dora := f.owner.Name
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

	conn, err := gitea.Connect(ctx, f.api, f.db, dora, "widgets", "http://127.0.0.1:9/gitea/webhook", now)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Already || !conn.AccountCreated || conn.Account.Platform != account.PlatformGitea || conn.Account.Login != dora || conn.Account.Type != "User" {
		t.Errorf("connection %+v: want a new gitea account dora, type User", conn)
	}
	hs := hooksOf(t, f.srv, f.owner, "widgets")
	if len(hs) != 1 {
		t.Fatalf("%d hooks on the repository, want 1", len(hs))
	}
	h := hs[0]
	want := "http://127.0.0.1:9/gitea/webhook?repository=" + strconv.FormatInt(conn.Repository.ID, 10)
	if h.ID != conn.HookID || h.Type != "gitea" || !h.Active || h.Config["url"] != want || h.Config["content_type"] != "json" {
		t.Errorf("hook %+v; want id %d, gitea, active, json, url %s", h, conn.HookID, want)
	}
	for _, e := range []string{"pull_request", "pull_request_sync", "pull_request_comment", "push"} {
		if !slices.Contains(h.Events, e) {
			t.Errorf("hook events %v lack %s", h.Events, e)
		}
	}
	var secret string
	var repoID int64
	if err := f.db.Reader().QueryRow(ctx, `SELECT secret, repository_id FROM gitea_hooks WHERE hook_id = $1`, h.ID).Scan(&secret, &repoID); err != nil {
		t.Fatal(err)
	}
	if len(secret) != 64 || repoID != conn.Repository.ID {
		t.Errorf("kept secret of %d characters for repository %d; want 64 (32 random bytes) for %d", len(secret), repoID, conn.Repository.ID)
	}
	inst, err := account.FindInstallation(ctx, f.db.Reader(), account.PlatformGitea, conn.Repository.ID)
	if err != nil || inst.AccountID != conn.Account.ID || inst.Deleted {
		t.Fatalf("installation %+v, %v; want a current one on %s", inst, err, conn.Account.ID)
	}
	repos, err := account.InstallationRepositories(ctx, f.db.Reader(), inst)
	if err != nil || len(repos) != 1 || repos[0].Owner != dora || repos[0].Name != "widgets" {
		t.Errorf("installation repositories %+v, %v; want dora/widgets", repos, err)
	}
	evs := installationEvents(t, f.db)
	if len(evs) != 1 || evs[0].Name != event.InstallationCreated || evs[0].Data.Platform != "gitea" ||
		evs[0].Data.InstallationID != conn.Repository.ID || evs[0].Data.Account.Login != dora ||
		len(evs[0].Data.Repositories) != 1 || evs[0].Data.Repositories[0] != (event.InstallationRepo{Owner: dora, Repo: "widgets"}) {
		t.Errorf("events %+v; want one installation.created of platform gitea for dora/widgets", evs)
	}

	// Again, with the hook in place: nothing changes.
	again, err := gitea.Connect(ctx, f.api, f.db, dora, "widgets", "http://127.0.0.1:9/gitea/webhook", now)
	if err != nil || !again.Already || again.HookID != conn.HookID {
		t.Errorf("second connect %+v, %v; want already connected with hook %d", again, err, conn.HookID)
	}
	if n := len(hooksOf(t, f.srv, f.owner, "widgets")); n != 1 {
		t.Errorf("%d hooks after connecting twice, want 1", n)
	}
	if n := len(installationEvents(t, f.db)); n != 1 {
		t.Errorf("%d installation events after connecting twice, want 1", n)
	}

	// The hook removed on Gitea: connect makes another, with a new secret.
	f.srv.API(t, f.owner.Token, http.MethodDelete, "/repos/"+dora+"/widgets/hooks/"+strconv.FormatInt(conn.HookID, 10), nil, nil)
	third, err := gitea.Connect(ctx, f.api, f.db, dora, "widgets", "http://127.0.0.1:9/gitea/webhook", now)
	if err != nil || third.Already || third.HookID == conn.HookID {
		t.Fatalf("connect after the hook was removed: %+v, %v; want a new hook", third, err)
	}
	var secret2 string
	if err := f.db.Reader().QueryRow(ctx, `SELECT secret FROM gitea_hooks WHERE repository_id = $1`, conn.Repository.ID).Scan(&secret2); err != nil || secret2 == secret {
		t.Errorf("secret after reconnecting: changed %v (%v); want a new one", secret2 != secret, err)
	}

	// Another address: the new hook replaces the old one.
	moved, err := gitea.Connect(ctx, f.api, f.db, dora, "widgets", "https://quorum.example.test/gitea/webhook", now)
	if err != nil || moved.Already {
		t.Fatalf("connect to another address: %+v, %v", moved, err)
	}
	hs = hooksOf(t, f.srv, f.owner, "widgets")
	if len(hs) != 1 || !strings.HasPrefix(hs[0].Config["url"], "https://quorum.example.test/gitea/webhook?repository=") {
		t.Errorf("hooks after moving %+v; want only the one to the new address", hs)
	}

	// Disconnect: the hook goes, the installation is deleted and announced.
	if _, err := gitea.Disconnect(ctx, f.api, f.db, dora, "widgets", now); err != nil {
		t.Fatal(err)
	}
	if n := len(hooksOf(t, f.srv, f.owner, "widgets")); n != 0 {
		t.Errorf("%d hooks after disconnect, want 0", n)
	}
	inst, err = account.FindInstallation(ctx, f.db.Reader(), account.PlatformGitea, conn.Repository.ID)
	if err != nil || !inst.Deleted {
		t.Errorf("installation after disconnect %+v, %v; want deleted", inst, err)
	}
	evs = installationEvents(t, f.db)
	last := evs[len(evs)-1]
	if last.Name != event.InstallationDeleted || last.Data.Platform != "gitea" || len(last.Data.Repositories) != 1 {
		t.Errorf("last event %+v; want installation.deleted of dora/widgets", last)
	}
	if _, err := gitea.Disconnect(ctx, f.api, f.db, dora, "widgets", now); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("second disconnect: %v; want not connected", err)
	}
}

// A bot that may only write cannot create the hook: connect says what to
// change and leaves nothing behind, in quorum or on Gitea.
func TestConnectNeedsAnAdministrator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setupConnect(t, "eve", "eve-bot", "write")
	_, err := gitea.Connect(ctx, f.api, f.db, f.owner.Name, "widgets", "http://127.0.0.1:9/gitea/webhook", time.Now())
	if err == nil || !strings.Contains(err.Error(), "administrator") {
		t.Fatalf("connect as a writer: %v; want an error saying the bot must be an administrator", err)
	}
	if n := len(hooksOf(t, f.srv, f.owner, "widgets")); n != 0 {
		t.Errorf("%d hooks, want 0", n)
	}
	var n int
	if err := f.db.Reader().QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM accounts) + (SELECT COUNT(*) FROM gitea_hooks) + (SELECT COUNT(*) FROM events)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows recorded (%v), want 0", n, err)
	}
}

func TestConnectRefusesBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setupConnect(t, "finn", "finn-bot", "admin")
	finn := f.owner.Name
	for _, tc := range []struct{ owner, repo, url, want string }{
		{finn, "widgets", "ftp://127.0.0.1/gitea/webhook", "must be http(s)"},
		{finn, "widgets", "http://user:pw@127.0.0.1/gitea/webhook", "without credentials"},
		{finn, "widgets", "http://127.0.0.1/gitea/webhook?repository=1", "already names a repository"},
		{finn, "../etc", "http://127.0.0.1/gitea/webhook", "not a repository name"},
		{finn, "nothing-here", "http://127.0.0.1/gitea/webhook", "no repository " + finn + "/nothing-here"},
	} {
		_, err := gitea.Connect(ctx, f.api, f.db, tc.owner, tc.repo, tc.url, time.Now())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("connect %s/%s to %s: %v; want %q", tc.owner, tc.repo, tc.url, err, tc.want)
		}
	}
	wrong, err := gitea.NewClient(f.srv.URL, "0123456789abcdef0123456789abcdef01234567", nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	_, err = gitea.Connect(ctx, wrong, f.db, finn, "widgets", "http://127.0.0.1/gitea/webhook", time.Now())
	if err == nil || !strings.Contains(err.Error(), "QUORUM_GITEA_TOKEN") || strings.Contains(err.Error(), "0123456789abcdef") {
		t.Errorf("connect with a wrong token: %v; want a hint at QUORUM_GITEA_TOKEN and no token", err)
	}
	if n := len(hooksOf(t, f.srv, f.owner, "widgets")); n != 0 {
		t.Errorf("%d hooks, want 0", n)
	}
}
