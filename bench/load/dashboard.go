package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/storetest"
)

// dashboardPage is a dashboard page measured against the API request that
// reads the same data, its baseline in the same run.
type dashboardPage struct {
	name, route, page, api string
}

// dashboard measures the dashboard's pages on the seeded store: each page
// and its API baseline, sequentially on one connection, interleaved, so
// the latency is the server's time to render (loopback adds little).
func dashboard(ctx context.Context, c config, d database, srv *child) error {
	one := newClient(1)
	defer one.CloseIdleConnections()
	cookie, err := signIn(ctx, one, srv.base, d.seeded.Token)
	if err != nil {
		return err
	}
	page := http.Header{"Cookie": {cookie}}
	api := http.Header{"Authorization": {"Bearer " + d.seeded.Token}}
	repo := d.seeded.Owner + "/" + d.seeded.Repo
	list := url.Values{"owner": {d.seeded.Owner}, "repo": {d.seeded.Repo}, "limit": {"20"}}.Encode()
	pages := []dashboardPage{
		{"repositories", "/dashboard/repositories", "/dashboard/repositories", "/v1/reviews?" + list},
		{"reviews of the repository", "/dashboard/reviews", "/dashboard/reviews?repo=" + url.QueryEscape(repo), "/v1/reviews?" + list},
		{"reviews of every repository", "/dashboard/reviews", "/dashboard/reviews", "/v1/reviews?" + list},
		{"reviews with verdict comment (none of 1M)", "/dashboard/reviews", "/dashboard/reviews?verdict=comment&repo=" + url.QueryEscape(repo), "/v1/reviews?" + list},
		{"a review with 20 findings", "/dashboard/reviews/{id}", "/dashboard/reviews/" + d.seeded.FullID, "/v1/reviews/" + d.seeded.FullID},
		{"a finding", "/dashboard/findings/{id}", "/dashboard/findings/" + d.seeded.FindingID, "/v1/findings/" + d.seeded.FindingID},
		{"charts of the repository", "/dashboard/insights", "/dashboard/insights?repo=" + url.QueryEscape(repo), "/v1/reviews?" + list},
	}
	for _, p := range pages {
		// Each page once, checked, before any is timed.
		if _, err := get(ctx, one, srv.base+p.page, page); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	times := make([][2][]time.Duration, len(pages))
	for i := range c.samples {
		for j := range pages {
			p := pages[(i+j)%len(pages)]
			k := (i + j) % len(pages)
			for _, which := range []int{i % 2, 1 - i%2} {
				u, h := srv.base+p.page, page
				if which == 1 {
					u, h = srv.base+p.api, api
				}
				t0 := time.Now()
				if _, err := get(ctx, one, u, h); err != nil {
					return err
				}
				times[k][which] = append(times[k][which], time.Since(t0))
			}
		}
	}
	fmt.Printf("### %s — dashboard pages, %d reviews in one repository and %d more repositories of 20 reviews\n\n", d.backend, d.seeded.Reviews, otherRepositories)
	fmt.Println("| page | p50 | p99 | API baseline p50 | ratio page / API (p50) |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for k, p := range pages {
		slices.Sort(times[k][0])
		slices.Sort(times[k][1])
		fmt.Printf("| %s (`%s`) | **%s** | %s | %s | %.2f |\n", p.name, p.route,
			fmtDur(pct(times[k][0], 50)), fmtDur(pct(times[k][0], 99)), fmtDur(pct(times[k][1], 50)),
			ratio(pct(times[k][0], 50), pct(times[k][1], 50)))
	}
	hwm, _ := srv.status("VmHWM")
	fmt.Printf("\n%d sequential requests of each page and of its API baseline on one connection, interleaved. Seeding took %s. quorum server peak RSS (VmHWM) %.1f MB. Every response was 200.\n\n",
		c.samples, d.seeded.Took.Round(time.Second), mb(hwm))
	return nil
}

// signIn exchanges the token for a dashboard session as a browser does,
// and returns the Cookie header that carries it.
func signIn(ctx context.Context, client *http.Client, base, tok string) (string, error) {
	if err := loopbackOnly(base); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/dashboard/sign-in", strings.NewReader(url.Values{"token": {tok}}.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	noFollow := *client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Do(req)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		return "", fmt.Errorf("dashboard sign-in: status %d, %d cookies: %.300s", resp.StatusCode, len(resp.Cookies()), body)
	}
	c := resp.Cookies()[0]
	return c.Name + "=" + c.Value, nil
}

// otherRepositories is how many more repositories the dashboard benchmark
// gives the account, so that the repositories page has a full page of
// them, each with the latest reviews of its pull requests.
const otherRepositories = 49

// seedRepositories adds otherRepositories repositories to the seeded
// account, each with 20 reviews of 5 pull requests, through the store as
// the service saves them.
func seedRepositories(ctx context.Context, d database) error {
	db, err := d.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	acct, err := account.Find(ctx, db.Reader(), account.PlatformGitHub, d.seeded.Owner)
	if err != nil {
		return err
	}
	reviews := review.NewStore(db)
	at := time.Now().Add(-time.Hour)
	for i := range otherRepositories {
		repo, err := account.EnsureRepository(ctx, db.Writer(), acct.ID, d.seeded.Owner, fmt.Sprintf("service-%02d", i))
		if err != nil {
			return err
		}
		for j := range 20 {
			r := storetest.NewReview(repo, j%5+1, j%3, at.Add(time.Duration(i*20+j)*time.Second))
			if err := reviews.Create(ctx, db.Writer(), &r); err != nil {
				return err
			}
		}
	}
	return nil
}
