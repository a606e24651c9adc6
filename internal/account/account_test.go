package account_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

func forEachBackend(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) { fn(t, b.Open(t)) })
}

func count(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	var n int
	// table is one of this file's constants, never input.
	if err := db.Reader().QueryRow(context.Background(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEnsure(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := db.Writer()
		a, err := account.Ensure(ctx, q, account.PlatformGitHub, "AcmeCorp", "User")
		if err != nil {
			t.Fatal(err)
		}
		if a.ID == "" || a.Login != "AcmeCorp" || a.Type != "User" || a.Platform != account.PlatformGitHub {
			t.Errorf("Ensure = %+v", a)
		}
		for _, login := range []string{"AcmeCorp", "acmecorp", "ACMECORP"} {
			again, err := account.Ensure(ctx, q, account.PlatformGitHub, login, "Organization")
			if err != nil {
				t.Fatal(err)
			}
			if again != a {
				t.Errorf("Ensure(%q) = %+v, want the existing %+v", login, again, a)
			}
		}
		if n := count(t, db, "accounts"); n != 1 {
			t.Errorf("%d accounts after ensuring one login four times, want 1", n)
		}

		other, err := account.Ensure(ctx, q, account.PlatformGitHub, "globex", "")
		if err != nil {
			t.Fatal(err)
		}
		if other.ID == a.ID || other.Type != "Organization" {
			t.Errorf("second account %+v: want a new id and the default type Organization", other)
		}
		if _, err := account.Ensure(ctx, q, account.PlatformGitHub, "", ""); err == nil {
			t.Error("Ensure with an empty login succeeded")
		}
	})
}

func TestEnsureOwner(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := db.Writer()
		ensure := func(id int64, login string) (account.Account, error) {
			return account.EnsureOwner(ctx, q, account.PlatformGitHub, account.Owner{ExternalID: id, Login: login, Type: "User"})
		}
		octo, err := ensure(21031067, "Codertocat")
		if err != nil {
			t.Fatal(err)
		}
		if octo.ID == "" || octo.Login != "Codertocat" || octo.Type != "User" {
			t.Errorf("EnsureOwner = %+v", octo)
		}

		// Renamed on GitHub: the same account, under its new login; the old
		// login names nothing any more.
		renamed, err := ensure(21031067, "renamed-octocat")
		if err != nil || renamed.ID != octo.ID || renamed.Login != "renamed-octocat" {
			t.Fatalf("EnsureOwner after a rename = %+v, %v; want %s as renamed-octocat", renamed, err, octo.ID)
		}
		if _, err := account.Find(ctx, q, account.PlatformGitHub, "Codertocat"); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("Find(Codertocat) after the rename: %v, want ErrNotFound", err)
		}

		// An account made from a login alone (quorum token create) takes the
		// id of the first event that names it, and is renamed from then on.
		acme, err := account.Ensure(ctx, q, account.PlatformGitHub, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ensure(42, "ACME"); err != nil || got.ID != acme.ID {
			t.Fatalf("EnsureOwner(42, ACME) = %+v, %v; want the existing %s", got, err, acme.ID)
		}
		if got, err := ensure(42, "acme-inc"); err != nil || got.ID != acme.ID || got.Login != "acme-inc" {
			t.Fatalf("EnsureOwner(42, acme-inc) = %+v, %v; want %s renamed", got, err, acme.ID)
		}

		// A login renamed away and taken by another GitHub account is not
		// handed over with the first account's data.
		if got, err := ensure(43, "ACME-inc"); !errors.Is(err, account.ErrLoginTaken) {
			t.Errorf("EnsureOwner(43, ACME-inc) = %+v, %v; want ErrLoginTaken", got, err)
		}
		// A rename to a login another account holds keeps the stored login.
		if _, err := account.Ensure(ctx, q, account.PlatformGitHub, "globex", ""); err != nil {
			t.Fatal(err)
		}
		if got, err := ensure(21031067, "Globex"); err != nil || got.ID != octo.ID || got.Login != "renamed-octocat" {
			t.Errorf("EnsureOwner(21031067, Globex) = %+v, %v; want %s still renamed-octocat", got, err, octo.ID)
		}
		if n := count(t, db, "accounts"); n != 3 {
			t.Errorf("%d accounts, want 3", n)
		}
		// Without an id it is Ensure.
		if got, err := ensure(0, "GLOBEX"); err != nil || got.Login != "globex" {
			t.Errorf("EnsureOwner(0, GLOBEX) = %+v, %v; want globex", got, err)
		}
		if _, err := ensure(44, ""); err == nil {
			t.Error("EnsureOwner with an empty login succeeded")
		}
	})
}

func TestFindAndGet(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, "Acme", "")
		if err != nil {
			t.Fatal(err)
		}
		found, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, "aCME")
		if err != nil || found != a {
			t.Errorf("Find(aCME) = %+v, %v; want %+v", found, err, a)
		}
		got, err := account.Get(ctx, db.Reader(), a.ID)
		if err != nil || got != a {
			t.Errorf("Get(%s) = %+v, %v; want %+v", a.ID, got, err, a)
		}
		if _, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, "nobody"); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("Find(nobody) = %v, want ErrNotFound", err)
		}
		if _, err := account.Find(ctx, db.Reader(), "gitlab", "acme"); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("Find on another platform = %v, want ErrNotFound", err)
		}
		if _, err := account.Get(ctx, db.Reader(), "acct_01KAQZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("Get(unknown) = %v, want ErrNotFound", err)
		}
	})
}

func TestEnsureRepository(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := db.Writer()
		acme, err := account.Ensure(ctx, q, account.PlatformGitHub, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		globex, err := account.Ensure(ctx, q, account.PlatformGitHub, "globex", "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := account.EnsureRepository(ctx, q, acme.ID, "Acme", "Widgets")
		if err != nil {
			t.Fatal(err)
		}
		if r.ID == "" || r.AccountID != acme.ID || r.Owner != "Acme" || r.Name != "Widgets" {
			t.Errorf("EnsureRepository = %+v", r)
		}
		for _, name := range [][2]string{{"Acme", "Widgets"}, {"acme", "widgets"}, {"ACME", "WIDGETS"}} {
			again, err := account.EnsureRepository(ctx, q, acme.ID, name[0], name[1])
			if err != nil {
				t.Fatal(err)
			}
			if again != r {
				t.Errorf("EnsureRepository(%s/%s) = %+v, want the existing %+v", name[0], name[1], again, r)
			}
		}
		// Another account's repository of the same name is its own.
		theirs, err := account.EnsureRepository(ctx, q, globex.ID, "acme", "widgets")
		if err != nil {
			t.Fatal(err)
		}
		if theirs.ID == r.ID || theirs.AccountID != globex.ID {
			t.Errorf("globex's acme/widgets = %+v, want a repository of its own", theirs)
		}
		other, err := account.EnsureRepository(ctx, q, acme.ID, "acme", "gadgets")
		if err != nil {
			t.Fatal(err)
		}
		if other.ID == r.ID {
			t.Error("acme/gadgets got acme/widgets's id")
		}
		if n := count(t, db, "repositories"); n != 3 {
			t.Errorf("%d repositories, want 3", n)
		}
		if _, err := account.EnsureRepository(ctx, q, "acct_01KAQZZZZZZZZZZZZZZZZZZZZZ", "acme", "widgets"); err == nil {
			t.Error("EnsureRepository for an account that does not exist succeeded")
		}
	})
}

// TestPlatformTypeWins: an account made before the platform named it (a
// token created first, typed Organization by default) takes the type the
// platform's installation event gives (issue 10 item 3).
func TestPlatformTypeWins(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := db.Writer()
		if _, err := account.Ensure(ctx, q, account.PlatformGitHub, "octocat", ""); err != nil {
			t.Fatal(err)
		}
		a, err := account.EnsureOwner(ctx, q, account.PlatformGitHub, account.Owner{ExternalID: 583231, Login: "octocat", Type: "User"})
		if err != nil {
			t.Fatal(err)
		}
		if a.Type != "User" {
			t.Errorf("type after the platform said User: %q", a.Type)
		}
		// An event without a type keeps what is known.
		a, err = account.EnsureOwner(ctx, q, account.PlatformGitHub, account.Owner{ExternalID: 583231, Login: "octocat"})
		if err != nil || a.Type != "User" {
			t.Errorf("type after an event without one: %q (%v), want User", a.Type, err)
		}
	})
}

// TestLoginRules: logins follow GitHub's rules; anything else is refused
// before it is stored (issue 10 item 8).
func TestLoginRules(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	for _, bad := range []string{"ac me/../x", "-acme", "_acme", "ev\x00il", "a\xffb", "../x", "acme/x", strings.Repeat("a", 40), "ümlaut"} {
		if _, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, bad, ""); !errors.Is(err, account.ErrInvalidLogin) {
			t.Errorf("Ensure(%q) = %v, want ErrInvalidLogin", bad, err)
		}
		if _, err := account.EnsureOwner(ctx, db.Writer(), account.PlatformGitHub, account.Owner{ExternalID: 7, Login: bad}); !errors.Is(err, account.ErrInvalidLogin) {
			t.Errorf("EnsureOwner(%q) = %v, want ErrInvalidLogin", bad, err)
		}
	}
	if n := count(t, db, "accounts"); n != 0 {
		t.Errorf("%d accounts stored from invalid logins", n)
	}
	for _, good := range []string{"acme", "Acme-Corp", "a", "x1-2-3", strings.Repeat("a", 39), "octo_shortcode", "local"} {
		if _, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, good, ""); err != nil {
			t.Errorf("Ensure(%q): %v", good, err)
		}
	}
}

// TestEnsureCreated says whether the account was new.
func TestEnsureCreated(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	_, created, err := account.EnsureCreated(ctx, db.Writer(), account.PlatformGitHub, "acme", "")
	if err != nil || !created {
		t.Fatalf("first EnsureCreated: created %v, %v", created, err)
	}
	_, created, err = account.EnsureCreated(ctx, db.Writer(), account.PlatformGitHub, "ACME", "")
	if err != nil || created {
		t.Fatalf("second EnsureCreated: created %v, %v", created, err)
	}
}
