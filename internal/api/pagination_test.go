package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/storetest"
)

// seedReviews stores n findings-less reviews of repo, one a second from an
// hour before the bundle's clock, spread over pull requests 1..prs.
func seedReviews(t *testing.T, b *bundle, repo account.Repository, n, prs int) []review.Full {
	t.Helper()
	base := b.clock.Now().Add(-time.Hour)
	out := make([]review.Full, n)
	for i := range n {
		out[i] = storetest.Review(t, b.db, repo, 1+i%prs, 0, base.Add(time.Duration(i)*time.Second))
	}
	return out
}

// page fetches one page of a listing.
func (b *bundle) page(t *testing.T, path, secret string) reviewList {
	t.Helper()
	var l reviewList
	b.get(t, path, secret).want(t, http.StatusOK).json(t, &l)
	return l
}

// TestPaginationUnderConcurrentInserts walks a repository's reviews while
// a goroutine inserts more, newer ones and ones between those already
// there: every review that existed before the walk appears exactly once,
// nothing appears twice, and the order is newest first throughout.
func TestPaginationUnderConcurrentInserts(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		secret := b.reader(t)
		before := seedReviews(t, b, b.repo, 40, 3)

		inserted := make(chan string) // unbuffered: each insert overlaps a page request
		stop := make(chan struct{})
		errs := make(chan error, 1)
		go func() {
			defer close(inserted)
			reviews := review.NewStore(b.db)
			first := before[0].SynthesizedAt
			for k := range 64 {
				at := first.Add(time.Duration(k%40)*time.Second + 500*time.Millisecond) // between two old ones
				if k%2 == 0 {
					at = first.Add(time.Hour + time.Duration(k)*time.Second) // newer than all
				}
				r := storetest.NewReview(b.repo, 1+k%3, 0, at)
				if err := reviews.Create(context.Background(), b.db.Writer(), &r); err != nil {
					errs <- err
					return
				}
				select {
				case inserted <- r.ID:
				case <-stop:
					return
				}
			}
		}()

		seen := map[string]int{}
		var last *review.Review
		path := listPath(b.repo, "limit=7")
		for pages := 0; ; pages++ {
			if pages > 50 {
				t.Fatal("the walk does not end")
			}
			<-inserted // at least one insert between two pages
			p := b.page(t, path, secret)
			for i := range p.Reviews {
				r := &p.Reviews[i]
				seen[r.ID]++
				if last != nil && !(r.SynthesizedAt.Before(last.SynthesizedAt) ||
					r.SynthesizedAt.Equal(last.SynthesizedAt) && r.ID < last.ID) {
					t.Errorf("%s (%s) follows %s (%s): not newest first", r.ID, r.SynthesizedAt, last.ID, last.SynthesizedAt)
				}
				last = r
			}
			if p.NextCursor == nil {
				break
			}
			path = listPath(b.repo, "limit=7&cursor="+url.QueryEscape(*p.NextCursor))
		}
		close(stop)
		for range inserted {
		}
		select {
		case err := <-errs:
			t.Fatalf("insert during the walk: %v", err)
		default:
		}
		for id, n := range seen {
			if n > 1 {
				t.Errorf("%s listed %d times", id, n)
			}
		}
		for _, r := range before {
			if seen[r.ID] != 1 {
				t.Errorf("%s, there before the walk, listed %d times; want once", r.ID, seen[r.ID])
			}
		}
	})
}

// TestCursorTampering checks that only a cursor the same listing returned
// is accepted.
func TestCursorTampering(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		secret := b.reader(t)
		gizmos := storetest.Repo(t, b.db, "acme", "acme", "gizmos")
		seedReviews(t, b, b.repo, 6, 2)
		seedReviews(t, b, gizmos, 3, 1)
		cursor := func(path string) string {
			t.Helper()
			p := b.page(t, path, secret)
			if p.NextCursor == nil {
				t.Fatalf("%s: no next_cursor", path)
			}
			return *p.NextCursor
		}
		good := cursor(listPath(b.repo, "pr=1&limit=1"))
		b.get(t, listPath(b.repo, "pr=1&limit=1&cursor="+good), secret).want(t, http.StatusOK)

		mid := len(good) / 2
		flip := byte('A')
		if good[mid] == flip {
			flip = 'B'
		}
		// The last character also carries bits past the end of the data;
		// changing only those must not give a second spelling of the cursor.
		const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		lastBits := good[:len(good)-1] + string(b64[strings.IndexByte(b64, good[len(good)-1])^1])
		for name, c := range map[string]string{
			"last bits":  lastBits,
			"flipped":    good[:mid] + string(flip) + good[mid+1:],
			"truncated":  good[:len(good)-3],
			"other pr":   cursor(listPath(b.repo, "pr=2&limit=1")),
			"no pr":      cursor(listPath(b.repo, "limit=1")),
			"other repo": cursor(listPath(gizmos, "pr=1&limit=1")),
			"garbage":    "not a cursor!",
			"base64":     "AQAAAAAAAAAA",
			"empty":      "",
		} {
			t.Run(name, func(t *testing.T) {
				r := b.get(t, listPath(b.repo, "pr=1&limit=1&cursor="+url.QueryEscape(c)), secret)
				p := r.want(t, http.StatusBadRequest).problem(t, codeInvalid)
				if paramNames(p) != "cursor" {
					t.Errorf("invalid_params %v, want cursor", p.InvalidParams)
				}
			})
		}
	})
}

// TestListParams checks the validation and the limits of GET /v1/reviews.
func TestListParams(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		b := setup(t, be.Open)
		secret := b.reader(t)
		seedReviews(t, b, b.repo, maxLimit+1, 1)

		for query, want := range map[string]string{
			listPath(b.repo, "limit=0"):   "limit",
			listPath(b.repo, "limit=101"): "limit",
			listPath(b.repo, "limit=abc"): "limit",
			listPath(b.repo, "limit=-1"):  "limit",
			"/v1/reviews":                 "owner,repo",
			"/v1/reviews?limit=0":         "owner,repo,limit",
			"/v1/reviews?repo=widgets":    "owner",
			"/v1/reviews?owner=acme":      "repo",
			listPath(b.repo, "pr=0"):      "pr",
		} {
			p := b.get(t, query, secret).want(t, http.StatusBadRequest).problem(t, codeInvalid)
			if got := paramNames(p); got != want {
				t.Errorf("%s: invalid_params %v, want %s", query, p.InvalidParams, want)
			}
		}

		if p := b.page(t, listPath(b.repo, ""), secret); len(p.Reviews) != defaultLimit || p.NextCursor == nil {
			t.Errorf("without limit: %d reviews (cursor %v), want %d and a cursor", len(p.Reviews), p.NextCursor != nil, defaultLimit)
		}
		p := b.page(t, listPath(b.repo, "limit=100"), secret)
		if len(p.Reviews) != maxLimit || p.NextCursor == nil {
			t.Fatalf("limit=100: %d reviews (cursor %v), want %d and a cursor", len(p.Reviews), p.NextCursor != nil, maxLimit)
		}
		if p := b.page(t, listPath(b.repo, "limit=100&cursor="+*p.NextCursor), secret); len(p.Reviews) != 1 || p.NextCursor != nil {
			t.Errorf("after 100 of 101: %d reviews (cursor %v), want 1 and null", len(p.Reviews), p.NextCursor != nil)
		}
	})
}
