package chart_test

import (
	"fmt"
	"math"
	"time"

	"github.com/quorum-review/quorum/internal/chart"
	"github.com/quorum-review/quorum/internal/insight"
	"github.com/quorum-review/quorum/internal/review"
)

// The dashboard turns insight's answers into charts: a series per
// severity, keyed by it so that each keeps its colour, and the table for
// the page to render under the chart.
func Example() {
	weeks := []insight.SeverityWeek{ // as insight.FindingsPerWeek returns them
		{Label: "2026-W47", Counts: []int{0, 1, 2, 0, 0}},
		{Label: "2026-W48", Counts: []int{1, 0, 0, 3, 1}},
	}
	p := chart.Plot{ID: "findings-per-week", Title: "Findings per week", XName: "Week"}
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
	c := chart.StackedBars(p)
	fmt.Println(c.Table.Header)
	for _, row := range c.Table.Rows {
		fmt.Println(row)
	}

	// Review durations: a day without timed reviews is a gap, not a zero.
	days := []insight.ReviewBucket{
		{Label: "2026-11-25", Timed: 10, Median: 5 * time.Second, P90: 9 * time.Second},
		{Label: "2026-11-26"},
	}
	d := chart.Plot{ID: "review-duration", Title: "Review duration", XName: "Day", Unit: "s",
		Series: []chart.Series{{Key: "median", Name: "Median"}, {Key: "p90", Name: "90th percentile"}}}
	for _, day := range days {
		d.Labels = append(d.Labels, day.Label)
		median, p90 := math.NaN(), math.NaN()
		if day.Timed > 0 {
			median, p90 = day.Median.Seconds(), day.P90.Seconds()
		}
		d.Series[0].Values = append(d.Series[0].Values, median)
		d.Series[1].Values = append(d.Series[1].Values, p90)
	}
	for _, row := range chart.Lines(d).Table.Rows {
		fmt.Println(row)
	}

	// Delivery success: an endpoint without attempts has no rate.
	endpoints := []insight.EndpointSuccess{
		{URL: "https://ci.example.com/hooks", Attempts: 4, Succeeded: 3},
		{URL: "https://quiet.example.net/"},
	}
	b := chart.Bars{ID: "delivery-success", Title: "Webhook delivery success", LabelName: "Endpoint", ValueName: "Success rate",
		Missing: "no attempts", NoteName: "Attempts"}
	for _, e := range endpoints {
		rate, ok := e.Rate()
		percent := math.NaN()
		if ok {
			percent = 100 * rate
		}
		b.Labels = append(b.Labels, e.URL)
		b.Percents = append(b.Percents, percent)
		b.Notes = append(b.Notes, fmt.Sprintf("%d of %d succeeded", e.Succeeded, e.Attempts))
	}
	for _, row := range chart.PercentBars(b).Table.Rows {
		fmt.Println(row)
	}
	// Output:
	// [Week critical high medium low info Total]
	// [2026-W47 0 1 2 0 0 3]
	// [2026-W48 1 0 0 3 1 5]
	// [2026-11-25 5 s 9 s]
	// [2026-11-26 – –]
	// [https://ci.example.com/hooks 75.0% 3 of 4 succeeded]
	// [https://quiet.example.net/ no attempts 0 of 0 succeeded]
}
