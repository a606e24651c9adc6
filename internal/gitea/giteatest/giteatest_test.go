package giteatest_test

import (
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/gitea/giteatest"
)

func TestMain(m *testing.M) { os.Exit(giteatest.Run(m)) }

// A repository pushed over HTTP is what Gitea's API then serves: the file
// as the branch has it, and the branch at the commit pushed.
func TestPushedRepositoryIsReadBackThroughTheAPI(t *testing.T) {
	srv := giteatest.Start(t)

	alice := srv.CreateUser(t, "alice")
	repo := srv.CreateRepo(t, alice, "widgets")

	local := changetest.NewRepo(t)
	local.Write(map[string]string{"README.md": "# widgets\n"})
	local.Commit("base")
	local.Git("checkout", "-q", "-b", "feature")
	local.Write(map[string]string{"widget.go": "package widgets\n\nconst Size = 1\n"})
	local.Commit("a widget")
	local.Write(map[string]string{"widget.go": "package widgets\n\nconst Size = 2\n"})
	head := local.Commit("a bigger widget")

	srv.Push(t, local.Dir, repo, alice, "main", "feature")

	var file struct {
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	}
	srv.API(t, alice.Token, http.MethodGet, "/repos/alice/widgets/contents/widget.go?ref=feature", nil, &file)
	if file.Encoding != "base64" {
		t.Fatalf("widget.go came back in encoding %q, want base64", file.Encoding)
	}
	content, err := base64.StdEncoding.DecodeString(file.Content)
	if err != nil {
		t.Fatalf("decode widget.go: %v", err)
	}
	if want := "package widgets\n\nconst Size = 2\n"; string(content) != want {
		t.Errorf("widget.go on feature = %q, want %q", content, want)
	}

	var branch struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	srv.API(t, alice.Token, http.MethodGet, "/repos/alice/widgets/branches/feature", nil, &branch)
	if branch.Commit.ID != head {
		t.Errorf("branch feature is at %s in Gitea, want the pushed %s", branch.Commit.ID, head)
	}

	// main was pushed too, without the feature's file.
	if status, body := srv.Call(t, alice.Token, http.MethodGet, "/repos/alice/widgets/contents/widget.go?ref=main", nil); status != http.StatusNotFound {
		t.Errorf("widget.go on main: status %d, want 404: %s", status, body)
	}

	// The credentials never reached the repository's config.
	config, err := os.ReadFile(filepath.Join(local.Dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("alice:" + alice.Token))
	if strings.Contains(string(config), alice.Token) || strings.Contains(string(config), basic) {
		t.Errorf(".git/config holds the push credentials:\n%s", config)
	}
}
