package dashboard

import (
	"context"
	"encoding/xml"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
	"github.com/quorum-review/quorum/internal/webhook"
)

var svgRE = regexp.MustCompile(`(?s)<svg.*?</svg>`)

func TestInsightsDrawTheAccountsOwnFigures(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		s := newSite(t, b.Open(t))
		ctx := context.Background()
		now := s.clock.Now()
		// Ours: a review of acme/widgets with 3 findings, timed; theirs:
		// globex's 7, which must not count.
		mine := storetest.NewReview(s.repo, 1, 3, now.Add(-time.Hour))
		mine.Duration = 42 * time.Second
		if err := review.NewStore(s.db).Create(ctx, s.db.Writer(), &mine); err != nil {
			t.Fatal(err)
		}
		storetest.Review(t, s.db, s.other, 1, 7, now.Add(-time.Hour))
		if _, _, err := webhook.Create(ctx, s.db.Writer(), s.repo.AccountID, "https://ci.example.com/</text><script>", nil, "", "", now); err != nil {
			t.Fatal(err)
		}

		br := s.signedIn(t, s.repo)
		res, body := br.get("/dashboard/insights?repo=acme/widgets")
		wantStatus(t, res, body, http.StatusOK)
		svgs := svgRE.FindAllString(body, -1)
		if len(svgs) != 4 {
			t.Fatalf("%d charts, want findings, verdicts, duration and deliveries", len(svgs))
		}
		for _, svg := range svgs {
			if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
				t.Errorf("a chart is not well-formed SVG: %v", err)
			}
			if !strings.Contains(svg, `role="img"`) || !strings.Contains(svg, "<title") || strings.Contains(svg, "style=") {
				t.Errorf("a chart lacks role=img or a title, or has an inline style:\n%.300s", svg)
			}
		}
		if n := strings.Count(body, "<table"); n != 4 {
			t.Errorf("%d tables behind 4 charts", n)
		}
		// The findings table's total for this week is ours (3), not
		// globex's (7) nor both (10).
		week := body[strings.Index(body, `id="findings-per-week`):]
		if !strings.Contains(week, ">3</td></tr>") || strings.Contains(week, ">10</td>") || strings.Contains(week, ">7</td>") {
			t.Errorf("the findings table does not total our 3 findings:\n%.2000s", week)
		}
		if !strings.Contains(body, ">42") {
			t.Error("the duration table does not show the review's 42 s")
		}
		if strings.Contains(body, "<script>") {
			t.Error("an endpoint URL's markup reached the page unescaped")
		}

		// Without webhooks:read there is no delivery chart.
		res, body = s.signedIn(t, s.repo, token.ScopeReviewsRead).get("/dashboard/insights")
		wantStatus(t, res, body, http.StatusOK)
		if n := len(svgRE.FindAllString(body, -1)); n != 3 {
			t.Errorf("without webhooks:read: %d charts, want 3", n)
		}

		// Another account's repository is a 404; a bad one a 400.
		res, body = br.get("/dashboard/insights?repo=globex/gadgets")
		wantStatus(t, res, body, http.StatusNotFound)
		res, body = br.get("/dashboard/insights?repo=nope")
		wantStatus(t, res, body, http.StatusBadRequest)
		res, body = br.get("/dashboard/insights?repo=a/b&repo=c/d")
		wantStatus(t, res, body, http.StatusBadRequest)
	})
}
