package dashboard

import (
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/quorum-review/quorum/internal/chart"
	"github.com/quorum-review/quorum/internal/insight"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/token"
)

// The charts' windows: long enough to see a trend, bounded so the rows a
// chart reads are too.
const (
	insightWeeks = 12
	insightDays  = 30
)

type insightsView struct {
	Repo     string // owner/name, "" for every repository of the account
	Findings chart.Chart
	Verdicts chart.Chart
	Duration chart.Chart
	// Deliveries is shown only to a token with webhooks:read.
	Deliveries *chart.Chart
}

// insights draws a repository's (or the whole account's) findings per week
// by severity, reviews per day by verdict and their duration, and, for a
// token that may read webhooks, each endpoint's delivery success.
func (s *Server) insights(w http.ResponseWriter, r *http.Request, sess *session) error {
	query, err := pageQuery(r)
	if err != nil {
		return err
	}
	repo, err := singleParam(query, "repo")
	if err != nil {
		return err
	}
	owner, name, err := splitRepo(repo)
	if err != nil {
		return err
	}
	ctx, q, now := r.Context(), s.db.Reader(), s.now()
	scope := insight.Scope{AccountID: sess.principal.AccountID, Owner: owner, Name: name}
	weeks, err := insight.FindingsPerWeek(ctx, q, scope, insight.LastWeeks(now, insightWeeks))
	if errors.Is(err, insight.ErrNotFound) {
		return notFound("Your account has no repository %s.", repo)
	}
	if err != nil {
		return err
	}
	days, err := insight.ReviewsOverTime(ctx, q, scope, insight.LastDays(now, insightDays), insight.Day)
	if err != nil {
		return err
	}
	v := insightsView{Repo: repo, Findings: findingsChart(weeks)}
	v.Verdicts, v.Duration = reviewCharts(days)
	if sess.principal.Has(token.ScopeWebhooksRead) {
		endpoints, err := insight.DeliverySuccess(ctx, q, sess.principal.AccountID, insight.LastDays(now, insightDays))
		if err != nil {
			return err
		}
		c := deliveryChart(endpoints)
		v.Deliveries = &c
	}
	title := "Charts of every repository"
	if repo != "" {
		title = "Charts of " + repo
	}
	s.render(w, r, http.StatusOK, "insights", sess, title, v)
	return nil
}

// findingsChart stacks each week's findings by severity, a series per
// severity keyed by it so each keeps its colour.
func findingsChart(weeks []insight.SeverityWeek) chart.Chart {
	p := chart.Plot{ID: "findings-per-week", Title: fmt.Sprintf("Findings per week by severity, last %d weeks", insightWeeks), XName: "Week", Counts: true}
	for _, w := range weeks {
		p.Labels = append(p.Labels, w.Label)
	}
	for i, severity := range review.Severities {
		s := chart.Series{Key: severity}
		for _, w := range weeks {
			s.Values = append(s.Values, float64(w.Counts[i]))
		}
		p.Series = append(p.Series, s)
	}
	return chart.StackedBars(p)
}

// reviewCharts are reviews per day by verdict, and (estimates of) the
// median and 90th percentile of their duration; a day with no timed review
// is a gap.
func reviewCharts(days []insight.ReviewBucket) (verdicts, duration chart.Chart) {
	vp := chart.Plot{ID: "verdicts-per-day", Title: fmt.Sprintf("Reviews per day by verdict, last %d days", insightDays), XName: "Day", Counts: true}
	// The percentiles are the upper bounds of histogram buckets (see
	// insight.ReviewBucket): the chart says they are "at most".
	dp := chart.Plot{ID: "review-duration", Title: fmt.Sprintf("Review duration per day (at most), last %d days", insightDays), XName: "Day", Unit: "s",
		Series: []chart.Series{{Key: "median", Name: "Median, at most"}, {Key: "p90", Name: "90th percentile, at most"}}}
	for i, verdict := range insight.Verdicts {
		s := chart.Series{Key: verdict}
		for _, d := range days {
			s.Values = append(s.Values, float64(d.Verdicts[i]))
		}
		vp.Series = append(vp.Series, s)
	}
	for _, d := range days {
		vp.Labels = append(vp.Labels, d.Label)
		dp.Labels = append(dp.Labels, d.Label)
		median, p90 := math.NaN(), math.NaN()
		if d.Timed > 0 {
			median, p90 = d.Median.Seconds(), d.P90.Seconds()
		}
		dp.Series[0].Values = append(dp.Series[0].Values, median)
		dp.Series[1].Values = append(dp.Series[1].Values, p90)
	}
	if len(days) > 0 {
		dp.Desc = fmt.Sprintf("About how long reviews took per day, %s to %s: the median and the 90th percentile, each rounded up to the end of its range of durations (1 s, 2 s, 3 s, 5 s and so on to 6 h), so reviews took at most that long; the table below has the numbers.",
			days[0].Label, days[len(days)-1].Label)
	}
	return chart.StackedBars(vp), chart.Lines(dp)
}

// deliveryChart is each endpoint's share of attempts that succeeded; an
// endpoint without attempts has no rate.
func deliveryChart(endpoints []insight.EndpointSuccess) chart.Chart {
	b := chart.Bars{ID: "delivery-success", Title: fmt.Sprintf("Webhook delivery success per endpoint, last %d days", insightDays),
		LabelName: "Endpoint", ValueName: "Success rate", Missing: "no attempts", NoteName: "Attempts"}
	for _, e := range endpoints {
		percent := math.NaN()
		if rate, ok := e.Rate(); ok {
			percent = 100 * rate
		}
		b.Labels = append(b.Labels, e.URL)
		b.Percents = append(b.Percents, percent)
		b.Notes = append(b.Notes, fmt.Sprintf("%d of %d succeeded", e.Succeeded, e.Attempts))
	}
	return chart.PercentBars(b)
}
