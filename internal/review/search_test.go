package review_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/storetest"
)

func TestSearchMergesAnAccountsRepositoriesNewestFirst(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		gears := storetest.Repo(t, f.db, "acme", "acme", "gears")
		other := storetest.Repo(t, f.db, "globex", "globex", "gadgets")
		// Interleaved in time across two repositories; 1 in 3 approves.
		var want, wantApproved, wantPR7 []string
		var gearsApproved string
		for i := range 9 {
			repo := f.repo
			if i%2 == 1 {
				repo = gears
			}
			n := 1
			if i%3 == 0 {
				n = 0 // approve
			}
			r := storetest.Review(t, f.db, repo, 7+i%2, n, base.Add(time.Duration(i)*time.Minute))
			want = append(want, r.ID)
			if n == 0 {
				wantApproved = append(wantApproved, r.ID)
				if repo == gears {
					gearsApproved = r.ID
				}
			}
			if repo == f.repo {
				wantPR7 = append(wantPR7, r.ID)
			}
			// Another account's, newer still: never listed.
			storetest.Review(t, f.db, other, 1, 0, base.Add(time.Duration(i)*time.Minute+time.Second))
		}
		slices.Reverse(want)
		slices.Reverse(wantApproved)
		slices.Reverse(wantPR7)

		all := func(q review.SearchQuery) []string {
			t.Helper()
			var ids []string
			for range 20 {
				page, err := f.reviews.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range page.Reviews {
					ids = append(ids, r.ID)
				}
				if page.Next == nil {
					return ids
				}
				q.After = page.Next
			}
			t.Fatal("Search never reached the last page")
			return nil
		}
		acme := f.repo.AccountID
		if got := all(review.SearchQuery{AccountID: acme, Limit: 2}); !slices.Equal(got, want) {
			t.Errorf("account-wide, 2 a page:\n got %v\nwant %v", got, want)
		}
		if got := all(review.SearchQuery{AccountID: acme, Verdict: review.VerdictApprove, Limit: 2}); !slices.Equal(got, wantApproved) {
			t.Errorf("account-wide approvals:\n got %v\nwant %v", got, wantApproved)
		}
		if got := all(review.SearchQuery{AccountID: acme, Owner: "ACME", Repo: "Widgets", PR: 7, Limit: 1}); !slices.Equal(got, wantPR7) {
			t.Errorf("acme/widgets#7:\n got %v\nwant %v", got, wantPR7)
		}
		if got := all(review.SearchQuery{AccountID: acme, Owner: "acme", Repo: "gears", Verdict: review.VerdictApprove, Limit: 5}); len(got) != 1 || got[0] != gearsApproved {
			t.Errorf("acme/gears approvals: got %v, want [%s]", got, gearsApproved)
		}
		// No review of that pull request: an empty page, the repository exists.
		if got := all(review.SearchQuery{AccountID: acme, Owner: "acme", Repo: "gears", PR: 99, Limit: 5}); len(got) != 0 {
			t.Errorf("acme/gears#99: got %v, want none", got)
		}
		// Another account's repository is not found, as an unknown one.
		for _, name := range []string{"gadgets", "nothing"} {
			if _, err := f.reviews.Search(ctx, review.SearchQuery{AccountID: acme, Owner: "globex", Repo: name, Limit: 5}); !errors.Is(err, review.ErrNotFound) {
				t.Errorf("globex/%s from acme: %v, want ErrNotFound", name, err)
			}
		}
	})
}
