package account_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/store"
)

func names(rs []account.Repository) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Owner+"/"+r.Name)
	}
	return out
}

func TestInstallationLifecycle(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := db.Writer()
		now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		acct, err := account.Ensure(ctx, q, account.PlatformGitHub, "acme", "Organization")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := account.FindInstallation(ctx, q, account.PlatformGitHub, 7); !errors.Is(err, account.ErrNotFound) {
			t.Fatalf("FindInstallation before any: %v, want ErrNotFound", err)
		}
		inst, err := account.Install(ctx, q, acct, 7, []account.RepoRef{{Owner: "acme", Name: "api", ExternalID: 70}, {Owner: "acme", Name: "web"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if inst.AccountID != acct.ID || inst.ExternalID != 7 || inst.Suspended || inst.Deleted {
			t.Fatalf("Install = %+v", inst)
		}
		held, err := account.InstallationRepositories(ctx, q, inst)
		if err != nil || len(held) != 2 || names(held)[0] != "acme/api" || names(held)[1] != "acme/web" {
			t.Fatalf("held %v, %v; want acme/api, acme/web", names(held), err)
		}

		// EnsureInstallation leaves a known installation as it is.
		again, err := account.EnsureInstallation(ctx, q, acct, 7, now)
		if err != nil || again != inst {
			t.Errorf("EnsureInstallation = %+v, %v; want %+v", again, err, inst)
		}

		// Removing: only what it held, once; adding back restores the same
		// repository.
		removed, err := account.RemoveRepositories(ctx, q, inst, []account.RepoRef{{Owner: "ACME", Name: "Web"}, {Owner: "acme", Name: "never"}}, now)
		if err != nil || len(removed) != 1 || removed[0].Name != "web" {
			t.Fatalf("RemoveRepositories = %v, %v; want acme/web", names(removed), err)
		}
		if removed, err := account.RemoveRepositories(ctx, q, inst, []account.RepoRef{{Owner: "acme", Name: "web"}}, now); err != nil || len(removed) != 0 {
			t.Errorf("removing again = %v, %v; want nothing", names(removed), err)
		}
		added, err := account.AddRepositories(ctx, q, inst, []account.RepoRef{{Owner: "acme", Name: "web"}}, now)
		if err != nil || len(added) != 1 || added[0].ID != removed[0].ID {
			t.Fatalf("AddRepositories = %+v, %v; want the same repository %s back", added, err, removed[0].ID)
		}

		if err := account.Suspend(ctx, q, inst, true, now); err != nil {
			t.Fatal(err)
		}
		if got, _ := account.FindInstallation(ctx, q, account.PlatformGitHub, 7); !got.Suspended {
			t.Errorf("after Suspend: %+v", got)
		}
		if err := account.Suspend(ctx, q, inst, false, now); err != nil {
			t.Fatal(err)
		}
		if got, _ := account.FindInstallation(ctx, q, account.PlatformGitHub, 7); got.Suspended {
			t.Errorf("after Suspend(false): %+v", got)
		}

		held, err = account.Uninstall(ctx, q, inst, now)
		if err != nil || len(held) != 2 {
			t.Fatalf("Uninstall = %v, %v; want both repositories", names(held), err)
		}
		got, _ := account.FindInstallation(ctx, q, account.PlatformGitHub, 7)
		if !got.Deleted {
			t.Errorf("after Uninstall: %+v", got)
		}
		if held, _ := account.InstallationRepositories(ctx, q, inst); len(held) != 0 {
			t.Errorf("still held after Uninstall: %v", names(held))
		}

		// Installed again: current, with its repositories.
		inst, err = account.Install(ctx, q, acct, 7, []account.RepoRef{{Owner: "acme", Name: "api"}}, now)
		if err != nil || inst.Deleted || inst.Suspended {
			t.Fatalf("Install again = %+v, %v", inst, err)
		}
		if held, _ := account.InstallationRepositories(ctx, q, inst); len(held) != 1 || held[0].Name != "api" {
			t.Errorf("held after installing again: %v", names(held))
		}
		if n := count(t, db, "installations"); n != 1 {
			t.Errorf("%d installations, want 1", n)
		}

		// Installed again, as another account says: the installation and
		// its repositories stay with acme.
		other, err := account.Ensure(ctx, q, account.PlatformGitHub, "globex", "Organization")
		if err != nil {
			t.Fatal(err)
		}
		moved, err := account.Install(ctx, q, other, 7, []account.RepoRef{{Owner: "globex", Name: "secrets"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if moved.ID != inst.ID || moved.AccountID != acct.ID {
			t.Errorf("Install by globex = %+v, want %s still on %s", moved, inst.ID, acct.ID)
		}
		var onOther int
		if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM repositories WHERE account_id = $1`, other.ID).Scan(&onOther); err != nil || onOther != 0 {
			t.Errorf("%d repositories on globex (%v), want 0", onOther, err)
		}
	})
}
