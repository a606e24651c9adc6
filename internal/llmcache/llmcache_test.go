package llmcache

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// fixture is a cache on a real database, its clock, and two repositories
// of one account.
type fixture struct {
	db         *store.DB
	clock      *storetest.Clock
	s          *Store
	one, other account.Repository
}

func setup(t *testing.T, b storetest.Backend) fixture {
	t.Helper()
	db := b.Open(t)
	clock := storetest.NewClock(time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC))
	return fixture{db: db, clock: clock, s: New(db, clock.Now),
		one: storetest.Repo(t, db, "acme", "acme", "one"), other: storetest.Repo(t, db, "acme", "acme", "two")}
}

// TestScopes: a result is read back by its repository only, and a
// second Put of a key replaces it.
func TestScopes(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b)
		ctx := context.Background()
		s, a, other := f.s, f.one, f.other
		stranger := storetest.Repo(t, f.db, "evil", "evil", "one")
		one := s.For(a.AccountID, a.ID)
		if err := one.Put(ctx, map[string][]byte{"k1": []byte(`{"findings": []}`), "k2": []byte(`{"findings": [1]}`)}); err != nil {
			t.Fatal(err)
		}
		got, err := one.Get(ctx, []string{"k1", "k2", "k3"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || string(got["k1"]) != `{"findings": []}` || string(got["k2"]) != `{"findings": [1]}` {
			t.Errorf("got %q", got)
		}
		for name, sc := range map[string]*Scope{
			"another repository of the account":    s.For(a.AccountID, other.ID),
			"another account's repository":         s.For(stranger.AccountID, stranger.ID),
			"the repository under another account": s.For(stranger.AccountID, a.ID),
		} {
			if got, err := sc.Get(ctx, []string{"k1", "k2"}); err != nil || len(got) != 0 {
				t.Errorf("%s reads %q (err %v)", name, got, err)
			}
		}
		if err := one.Put(ctx, map[string][]byte{"k1": []byte(`{"findings": [2]}`)}); err != nil {
			t.Fatal(err)
		}
		if got, err := one.Get(ctx, []string{"k1"}); err != nil || string(got["k1"]) != `{"findings": [2]}` {
			t.Errorf("after a second Put: %q (err %v)", got, err)
		}
	})
}

// TestPrune: rows past the age go (from every repository) as the table is
// written, and are not read even before; a repository keeps its newest
// rows up to the bound, another repository's rows are not counted.
func TestPrune(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		f := setup(t, b)
		ctx := context.Background()
		db, clock, s := f.db, f.clock, f.s
		s.maxRows = 3
		one, two := s.For(f.one.AccountID, f.one.ID), s.For(f.other.AccountID, f.other.ID)
		put := func(sc *Scope, keys ...string) {
			t.Helper()
			m := map[string][]byte{}
			for _, k := range keys {
				m[k] = []byte("{}")
			}
			if err := sc.Put(ctx, m); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Hour)
		}
		keys := func(sc *Scope, want ...string) []string {
			t.Helper()
			got, err := sc.Get(ctx, want)
			if err != nil {
				t.Fatal(err)
			}
			return slices.Sorted(maps.Keys(got))
		}
		rows := func() int {
			t.Helper()
			var n int
			if err := db.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM llm_file_results`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}

		put(two, "old")
		for i := range 4 {
			put(one, fmt.Sprint(i))
		}
		if got := keys(one, "0", "1", "2", "3"); !slices.Equal(got, []string{"1", "2", "3"}) {
			t.Errorf("repository one keeps %q, want its newest three", got)
		}
		if got := keys(two, "old"); !slices.Equal(got, []string{"old"}) {
			t.Errorf("repository two keeps %q: another repository's rows pruned its own", got)
		}

		clock.Advance(MaxAge - 4*time.Hour)
		if got := keys(two, "old"); len(got) != 0 {
			t.Errorf("a row past the age is still read: %q", got)
		}
		if n := rows(); n != 4 {
			t.Errorf("%d rows before the next write, want 4", n)
		}
		put(one, "new")
		if n := rows(); n != 3 {
			t.Errorf("%d rows after the next write, want 3 (repository two's gone with the age, one's \"1\" too)", n)
		}
		if got := keys(one, "1", "2", "3", "new"); !slices.Equal(got, []string{"2", "3", "new"}) {
			t.Errorf("repository one keeps %q", got)
		}
	})
}
