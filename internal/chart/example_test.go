package chart_test

import (
	"fmt"

	"github.com/quorum-review/quorum/internal/chart"
	"github.com/quorum-review/quorum/internal/insight"
	"github.com/quorum-review/quorum/internal/review"
)

// The dashboard (internal/dashboard/insights.go) turns insight's answers
// into charts: a series per
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

	// Output:
	// [Week critical high medium low info Total]
	// [2026-W47 0 1 2 0 0 3]
	// [2026-W48 1 0 0 3 1 5]
}
