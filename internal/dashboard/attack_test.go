package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

// hostile is text a pull request's author controls, made to break out of
// every context a page may put it in: element text, a <textarea>, an
// attribute, a URL, inline SVG.
const hostile = `</textarea></title></svg>"'><script>alert(1)</script><img src=x onerror=alert(1)>javascript:alert(1)`

// wantNoMarkup fails if the hostile text reached the page as markup.
func wantNoMarkup(t *testing.T, what, body string) {
	t.Helper()
	for _, bad := range []string{"<script>alert", "<img src=x", "</textarea></title>", `"'><`, `href="javascript:`, `src="javascript:`} {
		if strings.Contains(body, bad) {
			i := strings.Index(body, bad)
			t.Errorf("%s: %q reached the page as markup: …%s…", what, bad, body[max(0, i-200):min(len(body), i+200)])
		}
	}
}

func TestAttackHostileReviewTextIsNeverMarkup(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		s := newSite(t, db)
		evil := storetest.Repo(t, db, "acme", "acme"+hostile[:10], "w<script>alert(1)</script>")
		r := storetest.NewReview(evil, 3, 2, time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
		r.Summary = "Not analysed: " + hostile + "\n" + hostile
		r.SpecialistsFailed = []string{hostile}
		for i := range r.Findings {
			f := &r.Findings[i]
			f.Path, f.Headline, f.Body, f.Category, f.Specialist = hostile, hostile, hostile, hostile, hostile
			f.Excerpt.Path = hostile
			for j := range f.Excerpt.Lines {
				f.Excerpt.Lines[j].Text = hostile
			}
			p := "+" + hostile + "\n-" + hostile + "\n@@" + hostile
			f.SuggestedPatch = &p
			f.Rule = hostile
		}
		if err := review.NewStore(db).Create(context.Background(), db.Writer(), &r); err != nil {
			t.Fatal(err)
		}
		br := s.signedIn(t, s.repo)
		for _, path := range []string{
			"/dashboard/repositories",
			"/dashboard/reviews",
			"/dashboard/reviews?repo=" + url.QueryEscape(evil.Owner+"/"+evil.Name),
			"/dashboard/reviews/" + r.ID,
			"/dashboard/findings/" + r.Findings[0].ID,
			"/dashboard/findings/" + r.Findings[1].ID,
			"/dashboard/insights",
			"/dashboard/insights?repo=" + url.QueryEscape(evil.Owner+"/"+evil.Name),
			"/dashboard/reviews/" + url.PathEscape(hostile),
		} {
			res, body := br.get(path)
			if res.StatusCode >= 500 {
				t.Errorf("%s: status %d", path, res.StatusCode)
			}
			wantNoMarkup(t, path, body)
		}
	})
}

// TestAttackNextNeverLeavesTheSite signs in with every trick of an open
// redirect and resolves the Location as a browser would.
func TestAttackNextNeverLeavesTheSite(t *testing.T) {
	t.Parallel()
	s := newSite(t, storetest.SQLite(t))
	base, _ := url.Parse(s.url + "/dashboard/sign-in")
	for _, next := range []string{
		"/dashboard/../..//evil.example", "/dashboard/%2F%2Fevil.example", "/dashboard/%2f%2fevil.example",
		"/dashboard/\\\\evil.example", "/dashboard/\t/evil.example", "/dashboard/..\t/..\t//evil.example",
		"/dashboard/../\\evil.example", "/dashboard/%5C%5Cevil.example", "/dashboard/..%2F..%2F%2Fevil.example",
		"/dashboard/\x00//evil.example", "/dashboard/\n//evil.example", "/dashboard/https://evil.example",
		"/dashboard/..;/..;//evil.example", "/\t/evil.example", "/dashboard/./../../\t/evil.example",
		"/dashboard/../\t/evil.example", "/dashboard/../\n/evil.example", "/dashboard/../\r/evil.example",
		"/dashboard/../\x0b/evil.example", "/dashboard/../ /evil.example", "/dashboard/../\x7f/evil.example",
		"/dashboard/" + strings.Repeat("../", 5) + "/evil.example", "//dashboard/evil.example", "///dashboard/x",
	} {
		// Round-tripped by hand: Go's client refuses some of the Locations
		// a browser follows.
		req, _ := http.NewRequest(http.MethodPost, s.url+"/dashboard/sign-in",
			strings.NewReader(url.Values{"token": {s.token(t, s.repo)}, "next": {next}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Errorf("next=%q: %v", next, err) // a Location a browser refuses too
			continue
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("next=%q: status %d", next, res.StatusCode)
		}
		loc := res.Header.Get("Location")
		// A browser strips tabs and newlines, and leading and trailing
		// controls and spaces, and reads \ as /, before resolving.
		clean := strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(loc)
		clean = strings.TrimFunc(clean, func(r rune) bool { return r <= ' ' })
		u, err := base.Parse(clean)
		if err != nil || u.Host != base.Host || !strings.HasPrefix(u.Path, "/dashboard/") {
			t.Errorf("next=%q: Location %q leads to %v (%v)", next, loc, u, err)
		}
	}
}

func TestAttackHostileInputIsA4xx(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		br := s.signedIn(t, s.repo)
		long := strings.Repeat("a", 70<<10)
		for _, path := range []string{
			"/dashboard/repositories?after=%ff%fe/x",
			"/dashboard/repositories?after=a%00/b",
			"/dashboard/repositories?after=a&after=b",
			"/dashboard/repositories?after=" + strings.Repeat("%ff", 100),
			"/dashboard/reviews?repo=%ff/x",
			"/dashboard/reviews?repo=a/b&repo=c/d",
			"/dashboard/reviews?before=%ff.rev_x",
			"/dashboard/reviews?before=99999999999999999999999.rev_x",
			"/dashboard/reviews?before=-1." + "rev_01JC0000000000000000000000",
			"/dashboard/reviews?pr=%00",
			"/dashboard/reviews?%zz",
			"/dashboard/insights?repo=%ff/%fe",
			"/dashboard/insights?repo=a/b/c",
			"/dashboard/webhooks?before=%ff",
			"/dashboard/webhooks?notice=%ff",
			"/dashboard/webhooks?before=1.x&before=2.y",
			"/dashboard/findings/%ff",
			"/dashboard/reviews/%00",
			"/dashboard/deliveries/%ff%00",
			"/dashboard/webhooks/%ff/deliveries?status=%ff",
			"/dashboard/sign-in?next=%ff%00",
		} {
			res, body := br.get(path)
			shown := path[:min(len(path), 80)]
			if res.StatusCode < 400 || res.StatusCode >= 500 {
				if !(strings.HasPrefix(path, "/dashboard/sign-in") && res.StatusCode == 200) {
					t.Errorf("%s: status %d, want a 4xx; body:\n%.300s", shown, res.StatusCode, problemOf(body))
				}
			}
			if res.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("%s: status %d without a Content-Security-Policy", shown, res.StatusCode)
			}
		}
		csrf := br.csrf()
		for name, form := range map[string]string{
			"huge form":            "csrf=" + csrf + "&description=" + long,
			"huge form, csrf last": "description=" + long + "&csrf=" + csrf,
			"bad escape":           "csrf=" + csrf + "&url=%zz",
			"repeated csrf":        "csrf=x&csrf=" + csrf,
			"invalid utf-8":        "csrf=" + csrf + "&url=https://e.example/%ff&description=%ff%00",
		} {
			req, _ := http.NewRequest(http.MethodPost, s.url+"/dashboard/webhooks", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			res, body := br.do(req)
			want := http.StatusBadRequest
			if strings.HasPrefix(name, "huge") {
				want = http.StatusRequestEntityTooLarge
			}
			if name == "repeated csrf" {
				want = http.StatusForbidden // the first is read, as every field's
			}
			if res.StatusCode != want {
				t.Errorf("%s: status %d, want %d; %s", name, res.StatusCode, want, problemOf(body))
			}
		}
		// A sign-in past the form limit.
		req, _ := http.NewRequest(http.MethodPost, s.url+"/dashboard/sign-in", strings.NewReader("token="+long))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, body := s.browser(t).do(req)
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("huge sign-in: status %d, want 413; %s", res.StatusCode, problemOf(body))
		}
		// A query past the API's header limit is refused before the
		// dashboard (a 431 problem document from internal/api).
		res, body = br.get("/dashboard/reviews?repo=" + long)
		wantStatus(t, res, body[:min(len(body), 300)], http.StatusRequestHeaderFieldsTooLarge)
	})
}

func problemOf(body string) string {
	i := strings.Index(body, `class="problem"`)
	if i < 0 {
		return ""
	}
	return body[i:min(len(body), i+200)]
}

func TestAttackAnotherAccountsRepositoryInAnyCase(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		s := newSite(t, db)
		r := storetest.Review(t, db, s.other, 1, 1, time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
		br := s.signedIn(t, s.repo)
		for _, path := range []string{
			"/dashboard/reviews?repo=globex/gadgets", "/dashboard/reviews?repo=GLOBEX/Gadgets",
			"/dashboard/reviews?repo=Globex/gadgets&pr=1", "/dashboard/insights?repo=GLOBEX/GADGETS",
			"/dashboard/reviews/" + r.ID, "/dashboard/findings/" + r.Findings[0].ID,
			"/dashboard/reviews/" + r.Findings[0].ID, "/dashboard/findings/" + r.ID,
			"/dashboard/webhooks/" + r.ID, "/dashboard/deliveries/" + r.ID,
		} {
			res, body := br.get(path)
			wantStatus(t, res, body, http.StatusNotFound)
		}
		// A token with findings:read only still may not see reviews.
		fo := s.signedIn(t, s.repo, token.ScopeFindingsRead)
		res, body := fo.get("/dashboard/reviews")
		wantStatus(t, res, body, http.StatusForbidden)
	})
}
