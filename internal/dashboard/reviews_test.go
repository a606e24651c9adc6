package dashboard

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

var (
	reviewRow = regexp.MustCompile(`<tr id="review-(rev_[0-9A-Z]+)">`)
	nextLink  = regexp.MustCompile(`id="reviews-next" href="([^"]+)"`)
)

// listed is the review ids a list page shows, in order.
func listed(body string) []string {
	var ids []string
	for _, m := range reviewRow.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// listAll follows a review list's Next links from path and returns every
// review id it shows, and how many pages it took.
func listAll(t *testing.T, br *browser, path string) ([]string, int) {
	t.Helper()
	var ids []string
	for pages := 1; pages < 20; pages++ {
		res, body := br.get(path)
		wantStatus(t, res, body, http.StatusOK)
		ids = append(ids, listed(body)...)
		m := nextLink.FindStringSubmatch(body)
		if m == nil {
			return ids, pages
		}
		path = html.UnescapeString(m[1])
	}
	t.Fatal("the review list never reached its last page")
	return nil, 0
}

func TestReviewListFiltersNewestFirstAndPages(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		s := newSite(t, db)
		gears := storetest.Repo(t, db, "acme", "acme", "gears")
		at := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
		// 30 reviews of acme's two repositories, interleaved in time: more
		// than a page. Those without findings approve.
		var all, widgets, widgets7, approved []string
		for i := range 30 {
			repo, pr, n := s.repo, 7+i%3, i%2
			if i%5 == 4 {
				repo = gears
			}
			r := storetest.Review(t, db, repo, pr, n, at.Add(time.Duration(i)*time.Minute))
			all = append(all, r.ID)
			if repo == s.repo {
				widgets = append(widgets, r.ID)
				if pr == 7 {
					widgets7 = append(widgets7, r.ID)
				}
			}
			if r.Verdict == review.VerdictApprove {
				approved = append(approved, r.ID)
			}
			// globex's, newer still, never shows.
			storetest.Review(t, db, s.other, 1, 0, at.Add(time.Duration(i)*time.Minute+time.Second))
		}
		for _, ids := range [][]string{all, widgets, widgets7, approved} {
			slices.Reverse(ids)
		}
		br := s.signedIn(t, s.repo, token.ScopeReviewsRead)

		res, body := br.get("/dashboard/reviews")
		wantStatus(t, res, body, http.StatusOK)
		for _, label := range []string{`<label for="filter-repo">`, `<label for="filter-pr">`, `<label for="filter-verdict">`} {
			if !strings.Contains(body, label) {
				t.Errorf("the filter form has no %s", label)
			}
		}
		if got := listed(body); !slices.Equal(got, all[:reviewsPerPage]) {
			t.Errorf("first page:\n got %v\nwant %v", got, all[:reviewsPerPage])
		}
		if strings.Contains(body, "globex") {
			t.Error("acme's review list shows globex's reviews")
		}
		if !strings.Contains(body, `<a href="/dashboard/reviews/`+all[0]+`">#`) || !strings.Contains(body, "acme/gears") {
			t.Error("a row does not link to its review page or name its repository")
		}

		for _, c := range []struct {
			path  string
			want  []string
			pages int
		}{
			{"/dashboard/reviews", all, 2},
			{"/dashboard/reviews?repo=ACME%2FWidgets&pr=7&verdict=", widgets7, 1},
			{"/dashboard/reviews?verdict=approve", approved, 1},
			{"/dashboard/reviews?repo=acme/widgets&pr=7&verdict=approve", intersect(widgets7, approved), 1},
			{"/dashboard/reviews?repo=acme/widgets&pr=99", nil, 1},
		} {
			got, pages := listAll(t, br, c.path)
			if !slices.Equal(got, c.want) || pages != c.pages {
				t.Errorf("%s: %d pages\n got %v\nwant %v in %d", c.path, pages, got, c.want, c.pages)
			}
		}

		// The form shows the filter asked for, and the Next link keeps it.
		res, body = br.get("/dashboard/reviews?repo=acme/widgets&verdict=request_changes")
		wantStatus(t, res, body, http.StatusOK)
		if !strings.Contains(body, `id="filter-repo" name="repo" value="acme/widgets"`) || !strings.Contains(body, `<option value="request_changes" selected>`) {
			t.Errorf("the form does not show the filter asked for:\n%s", body)
		}
		res, body = br.get("/dashboard/reviews?repo=acme/widgets")
		wantStatus(t, res, body, http.StatusOK)
		m := nextLink.FindStringSubmatch(body)
		if m == nil || !strings.Contains(html.UnescapeString(m[1]), "repo=acme%2Fwidgets") {
			t.Fatalf("the Next link of acme/widgets's reviews does not keep the filter: %v", m)
		}
		if got, _ := listAll(t, br, "/dashboard/reviews?repo=acme/widgets"); !slices.Equal(got, widgets) {
			t.Errorf("acme/widgets's reviews:\n got %v\nwant %v", got, widgets)
		}
	})
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestReviewListRefusesBadParameters(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		br := s.signedIn(t, s.repo, token.ScopeReviewsRead)
		for query, want := range map[string]int{
			"pr=abc&repo=acme/widgets":  http.StatusBadRequest,
			"pr=0&repo=acme/widgets":    http.StatusBadRequest,
			"pr=7":                      http.StatusBadRequest, // without its repository
			"verdict=nope":              http.StatusBadRequest,
			"repo=widgets":              http.StatusBadRequest,
			"repo=acme/":                http.StatusBadRequest,
			"repo=acme/widgets/x":       http.StatusBadRequest,
			"repo=a/b&repo=c/d":         http.StatusBadRequest,
			"repo=acme%ff/widgets":      http.StatusBadRequest,
			"repo=acme%00/widgets":      http.StatusBadRequest,
			"repo=%zz":                  http.StatusBadRequest,
			"before=yesterday":          http.StatusBadRequest,
			"before=1700000000000.rev_": http.StatusBadRequest,
			"before=x." + id.New(id.Review, time.Now()): http.StatusBadRequest,
			"repo=globex/gadgets":                       http.StatusNotFound, // another account's
			"repo=acme/nothing":                         http.StatusNotFound,
			"repo=acme/widgets&pr=1&verdict=comment&before=1700000000000." + id.New(id.Review, time.Now()): http.StatusOK,
		} {
			res, body := br.get("/dashboard/reviews?" + query)
			wantStatus(t, res, body, want)
		}
	})
}

// richReview stores a review of acme/widgets#42 with what the review page
// shows: a summary with what was not analysed, a failed specialist, and
// findings in two files, the first file's twice.
func richReview(t *testing.T, s *site) review.Full {
	t.Helper()
	r := storetest.NewReview(s.repo, 42, 3, time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
	r.Summary = "Reviewed 3 files (+10 −2) of abc against def.\n" +
		"Not analysed: 1 file of changed source, so this review cannot approve it.\n" +
		"- gen/big.go: larger than 1 MiB\n" +
		"Changes requested: 1 finding at or above high severity, of 3 in all.\n" +
		"\nFindings by specialist: security 3.\n" +
		"Languages: Go (Go analyzers), shell (not analysed)."
	r.SpecialistsSucceeded = []string{"security", "logic"}
	r.SpecialistsFailed = []string{"performance"}
	r.Findings[1].Path = r.Findings[0].Path
	r.Findings[2].Headline = "Unchecked <error> & more"
	if err := review.NewStore(s.db).Create(context.Background(), s.db.Writer(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReviewPageShowsTheReviewAndItsFindings(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		r := richReview(t, s)
		br := s.signedIn(t, s.repo, token.ScopeReviewsRead, token.ScopeFindingsRead)

		res, body := br.get("/dashboard/reviews/" + r.ID)
		wantStatus(t, res, body, http.StatusOK)
		for _, want := range []string{
			`<span id="review-verdict" class="verdict verdict-request_changes">request_changes</span>`,
			`<a id="review-pr-link" href="https://github.com/acme/widgets/pull/42">`,
			`<code id="review-head">` + r.HeadSHA + `</code>`,
			`<code id="review-base">` + r.BaseSHA + `</code>`,
			`<dd id="specialists-succeeded">security, logic</dd>`,
			`<dd id="specialists-failed"><span class="severity-high">performance</span></dd>`,
			// Files grouped: the first holds two findings, the second one.
			`<code>db/query0.go</code> <span class="tag">2 findings</span>`,
			`<code>db/query2.go</code> <span class="tag">1 finding</span>`,
			// Escaped, never markup.
			`Unchecked &lt;error&gt; &amp; more`,
			// The finding's line marked, with text that says so.
			`<mark class="hl"><span class="ln">10</span><span class="visually-hidden">(finding) </span>	rows, err := db.Query(fmt.Sprintf(q, id))</mark>`,
			`<span><span class="ln">9</span>`,
			// The patch: classed lines that keep their sign (html/template
			// writes + as &#43;).
			`<span class="del">-	rows, err := db.Query(fmt.Sprintf(q, id))</span><span class="add">&#43;	rows, err := db.Query(q, id)</span>`,
			`<span class="hunk">@@ -10,1 &#43;10,1 @@</span>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the review page lacks %s", want)
			}
		}
		for _, f := range r.Findings {
			for _, want := range []string{
				`<article class="finding" id="finding-` + f.ID + `"`,
				`<a id="finding-` + f.ID + `-link" href="/dashboard/findings/` + f.ID + `">`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the review page lacks %s", want)
				}
			}
		}
		if strings.Count(body, `id="finding-`+r.Findings[0].ID+`-patch"`) != 1 || strings.Contains(body, `id="finding-`+r.Findings[1].ID+`-patch"`) {
			t.Error("a patch is shown for a finding without one, or not for one with one")
		}
		// What was not analysed comes first, and not again in the rest.
		gap := strings.Index(body, `id="review-not-analysed"`)
		summary := strings.Index(body, `id="review-summary"`)
		if gap < 0 || summary < gap {
			t.Fatalf("the not-analysed lines are not shown before the summary (at %d, summary at %d)", gap, summary)
		}
		notice := body[gap:summary]
		for _, line := range []string{"Not analysed: 1 file of changed source", "- gen/big.go: larger than 1 MiB", "shell (not analysed)"} {
			if !strings.Contains(notice, line) || strings.Contains(body[summary:], line) {
				t.Errorf("%q is not in the not-analysed notice alone", line)
			}
		}
		if !strings.Contains(body[summary:], "Changes requested: 1 finding") {
			t.Error("the rest of the summary is missing")
		}
	})
}

// TestReviewPageShowsWhatTheAPIWould: as GET /v1/reviews/{id}, reviews:read
// shows the review with its findings; their context (the excerpt, the
// finding page) needs findings:read, as GET /v1/findings/{id}.
func TestReviewPageShowsWhatTheAPIWould(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	r := richReview(t, s)
	br := s.signedIn(t, s.repo, token.ScopeReviewsRead)
	res, body := br.get("/dashboard/reviews/" + r.ID)
	wantStatus(t, res, body, http.StatusOK)
	if !strings.Contains(body, `id="finding-`+r.Findings[0].ID+`"`) || !strings.Contains(body, r.Findings[0].Headline) {
		t.Error("a token with reviews:read does not see the findings the API would give it")
	}
	if strings.Contains(body, "/dashboard/findings/") || strings.Contains(body, `-excerpt"`) {
		t.Error("a token without findings:read sees the findings' context")
	}
	if !strings.Contains(body, `id="findings-hidden"`) || !strings.Contains(body, "“findings:read”") {
		t.Errorf("the page does not say which scope shows the findings' context:\n%s", body)
	}

	// Without reviews:read there is no review page at all.
	res, body = s.signedIn(t, s.repo, token.ScopeFindingsRead).get("/dashboard/reviews/" + r.ID)
	wantStatus(t, res, body, http.StatusForbidden)
	res, body = s.signedIn(t, s.repo, token.ScopeFindingsRead).get("/dashboard/reviews")
	wantStatus(t, res, body, http.StatusForbidden)
}

func TestReviewAndFindingPagesOfAnotherAccountAreNotFound(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		theirs := storetest.Review(t, s.db, s.other, 3, 1, time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
		ours := richReview(t, s)
		br := s.signedIn(t, s.repo)
		for _, path := range []string{
			"/dashboard/reviews/" + theirs.ID,
			"/dashboard/findings/" + theirs.Findings[0].ID,
			"/dashboard/reviews/" + id.New(id.Review, time.Now()),
			"/dashboard/findings/" + id.New(id.Finding, time.Now()),
			"/dashboard/reviews/rev_nope",
			"/dashboard/reviews/" + ours.Findings[0].ID, // a finding's id is not a review's
			"/dashboard/findings/" + ours.ID,
			"/dashboard/findings/" + strings.ToLower(ours.Findings[0].ID),
		} {
			res, body := br.get(path)
			wantStatus(t, res, body, http.StatusNotFound)
			if strings.Contains(body, theirs.HeadSHA) || strings.Contains(body, "globex") {
				t.Errorf("%s: the 404 page shows globex's data", path)
			}
		}
		// globex sees its own.
		res, body := s.signedIn(t, s.other).get("/dashboard/findings/" + theirs.Findings[0].ID)
		wantStatus(t, res, body, http.StatusOK)
	})
}

func TestFindingPageShowsProvenanceAndContext(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		r := richReview(t, s)
		// A built-in finding the model also reported: both engines.
		if _, err := s.db.Writer().Exec(context.Background(), `UPDATE findings SET model = 'claude-x' WHERE id = $1`, r.Findings[0].ID); err != nil {
			t.Fatal(err)
		}
		f := r.Findings[0]
		br := s.signedIn(t, s.repo, token.ScopeReviewsRead, token.ScopeFindingsRead)
		res, body := br.get("/dashboard/findings/" + f.ID)
		wantStatus(t, res, body, http.StatusOK)
		for _, want := range []string{
			`<span id="finding-severity" class="severity severity-critical">critical</span> SQL built with fmt.Sprintf is passed to db.Query</h1>`,
			`<a id="finding-review-link" href="/dashboard/reviews/` + r.ID + `#finding-` + f.ID + `">`,
			`<code id="finding-location">db/query0.go:10</code>`,
			`<dd id="finding-specialist">security</dd>`,
			`<dd id="finding-engines">builtin, llm</dd>`,
			`<dd id="finding-rule"><code>gosec:G201</code></dd>`,
			`<dd id="finding-model">claude-x</dd>`,
			`<code id="finding-head">` + r.HeadSHA + `</code>`,
			`<time id="finding-detected" datetime="2026-11-01T08:00:00Z">2026-11-01 08:00 UTC</time>`,
			`id="finding-` + f.ID + `-excerpt"`,
			`<mark class="hl"><span class="ln">10</span>`,
			`id="finding-` + f.ID + `-patch"`,
			`<span class="add">&#43;	rows, err := db.Query(q, id)</span>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the finding page lacks %s", want)
			}
		}

		// findings:read is what the page needs, as GET /v1/findings/{id};
		// without reviews:read it names its review but does not link to it.
		res, body = s.signedIn(t, s.repo, token.ScopeReviewsRead).get("/dashboard/findings/" + f.ID)
		wantStatus(t, res, body, http.StatusForbidden)
		res, body = s.signedIn(t, s.repo, token.ScopeFindingsRead).get("/dashboard/findings/" + f.ID)
		wantStatus(t, res, body, http.StatusOK)
		if strings.Contains(body, `id="finding-review-link"`) || !strings.Contains(body, `<p id="finding-review">From review <code>`+r.ID+`</code>`) {
			t.Errorf("with findings:read alone the page links to a review it may not open, or does not name it")
		}
	})
}

func TestPullRequestLinkFollowsThePlatform(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	s := newSite(t, db, func(c *Config) { c.PlatformURLs[account.PlatformGitea] = "https://gitea.example.com/" })
	a, err := account.Ensure(context.Background(), db.Writer(), account.PlatformGitea, "acme", "Organization")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := account.EnsureRepository(context.Background(), db.Writer(), a.ID, "acme", "tools")
	if err != nil {
		t.Fatal(err)
	}
	r := storetest.Review(t, db, repo, 5, 0, time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
	res, body := s.signedIn(t, repo).get("/dashboard/reviews/" + r.ID)
	wantStatus(t, res, body, http.StatusOK)
	if !strings.Contains(body, `<a id="review-pr-link" href="https://gitea.example.com/acme/tools/pulls/5">`) {
		t.Errorf("the Gitea review does not link to its pull request on Gitea:\n%s", body)
	}
}

func TestSplitSummaryPutsWhatWasNotAnalysedFirst(t *testing.T) {
	t.Parallel()
	gaps, rest := splitSummary("Reviewed 2 files.\n" +
		"Not analysed: 2 files of changed source, so this review cannot approve it.\n" +
		"- a.go, b.go: too large\n" +
		"No findings on what was analysed.\n" +
		"\nEngine problems:\n" +
		"- go: not analysed: c.go does not parse\n" +
		"\nConfiguration problems:\n" +
		"- unknown key \"x\"\n" +
		"Not reviewed: 1 binary file.")
	wantGaps := []string{
		"Not analysed: 2 files of changed source, so this review cannot approve it.",
		"- a.go, b.go: too large",
		"- go: not analysed: c.go does not parse",
		"Not reviewed: 1 binary file.",
	}
	wantRest := "Reviewed 2 files.\nNo findings on what was analysed.\n\nConfiguration problems:\n- unknown key \"x\""
	if !slices.Equal(gaps, wantGaps) || rest != wantRest {
		t.Errorf("splitSummary:\n gaps %q\nwant %q\n rest %q\nwant %q", gaps, wantGaps, rest, wantRest)
	}
}

// TestRepositoriesArePaged walks the repositories page by its Next links:
// every repository of the account once, in name order, none of another's.
func TestRepositoriesArePaged(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		want := []string{"acme/widgets"}
		for i := range repositoriesPerPage + 3 {
			name := fmt.Sprintf("repo-%02d", i)
			storetest.Repo(t, s.db, "acme", "acme", name)
			want = append(want, "acme/"+name)
		}
		storetest.Repo(t, s.db, "globex", "globex", "repo-00x")
		slices.Sort(want)
		br := s.signedIn(t, s.repo)
		var seen []string
		row := regexp.MustCompile(`<th scope="row"><a href="/dashboard/reviews\?repo=[^"]*">([^<]+)</a>`)
		next := regexp.MustCompile(`<a rel="next" href="([^"]+)">`)
		for page, path := 0, "/dashboard/repositories"; path != ""; page++ {
			if page > 3 {
				t.Fatal("the Next links do not end")
			}
			res, body := br.get(path)
			wantStatus(t, res, body, http.StatusOK)
			for _, m := range row.FindAllStringSubmatch(body, -1) {
				seen = append(seen, m[1])
			}
			path = ""
			if m := next.FindStringSubmatch(body); m != nil {
				path = html.UnescapeString(m[1])
			}
		}
		if !slices.Equal(seen, want) {
			t.Fatalf("pages listed %v, want %v", seen, want)
		}
	})
}
