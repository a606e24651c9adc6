// Package chart draws the dashboard's charts as server-rendered SVG: a
// stacked bar chart, a line chart and a chart of percentage bars. Each
// comes with the same numbers as a table, for people who cannot see the
// chart.
//
// The SVG is made for a strict Content-Security-Policy: no script, no
// style attribute or element, no external asset; colours are presentation
// attributes (fill, stroke) and text takes the page's colour
// (currentColor). Elements carry class names (chart, bar, line, point,
// axis, legend, no-data) for the page's stylesheet, which may, say, cap
// the chart's width. Every chart has role="img", a <title> and a <desc>
// that aria-labelledby names, a viewBox and width="100%", so it scales to
// its container down to a 360 px phone. Every text (labels come from
// users: repository names, endpoint URLs) is escaped.
//
// A chart without data draws a "No data yet" panel, not empty axes.
// Output is deterministic: the same input gives the same bytes.
//
// The caller renders Chart.SVG where the chart goes and, under it, either
// Chart.Table.HTML() or its own markup from Chart.Table's plain data.
package chart

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Chart is a rendered chart and its data as a table.
type Chart struct {
	// SVG is the <svg> element, safe to place in a page as it is.
	SVG template.HTML
	// Table holds the chart's numbers; it has no rows when there is no
	// data.
	Table Table
}

// Table is a chart's data as plain text, for an accessible table under it.
type Table struct {
	Caption string
	// Header names the columns; the first names the rows ("Week").
	Header []string
	Rows   [][]string
}

// NoData is what a chart without data says.
const NoData = "No data yet."

// HTML renders the table as <table class="chart-table">, with a caption,
// column headers and row headers; a table without rows says NoData.
func (t Table) HTML() template.HTML {
	var b strings.Builder
	b.WriteString(`<table class="chart-table"><caption>`)
	b.WriteString(esc(t.Caption))
	b.WriteString(`</caption><thead><tr>`)
	for _, h := range t.Header {
		fmt.Fprintf(&b, `<th scope="col">%s</th>`, esc(h))
	}
	b.WriteString(`</tr></thead><tbody>`)
	if len(t.Rows) == 0 {
		fmt.Fprintf(&b, `<tr><td colspan="%d">%s</td></tr>`, max(len(t.Header), 1), esc(NoData))
	}
	for _, row := range t.Rows {
		b.WriteString(`<tr>`)
		for i, cell := range row {
			if i == 0 {
				fmt.Fprintf(&b, `<th scope="row">%s</th>`, esc(cell))
			} else {
				fmt.Fprintf(&b, `<td>%s</td>`, esc(cell))
			}
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table>`)
	return template.HTML(b.String()) // every text above is escaped
}

// Fixed colours, from the Okabe-Ito palette, which people with the common
// colour-vision deficiencies can tell apart. A series takes its colour
// from its Key, so critical is the same vermillion on every chart.
var colours = map[string]string{
	// Severities.
	"critical": "#D55E00", // vermillion
	"high":     "#E69F00", // orange
	"medium":   "#F0E442", // yellow
	"low":      "#0072B2", // blue
	"info":     "#56B4E9", // sky blue
	// Verdicts.
	"approve":         "#009E73", // bluish green
	"comment":         "#56B4E9", // sky blue
	"request_changes": "#D55E00", // vermillion
	// Review durations.
	"median": "#0072B2",
	"p90":    "#D55E00",
}

// palette colours series whose key has no fixed colour, in order.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// Colour returns the fill of the series with key at position i: the fixed
// colour of a severity, verdict or duration statistic, otherwise the
// palette's i-th.
func Colour(key string, i int) string {
	if c, ok := colours[key]; ok {
		return c
	}
	return palette[i%len(palette)]
}

// Series is one named row of values, one per label of the chart.
type Series struct {
	// Key picks the colour (see Colour): "critical", "approve", "median".
	Key string
	// Name is the legend's and the table's word for it; Key when empty.
	Name string
	// Values has one value per label. NaN is no value: a line chart
	// leaves a gap, a table says "–".
	Values []float64
}

func (s Series) name() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Key
}

// Plot is the data of a stacked bar chart or a line chart.
type Plot struct {
	// ID prefixes the ids of the chart's elements, so it must be unique
	// in the page; characters other than letters, digits, - and _ are
	// replaced.
	ID string
	// Title names the chart; Desc says what it shows (the table holds
	// the numbers). Desc defaults to a sentence made from the data.
	Title, Desc string
	// XName heads the table's first column: "Week", "Day".
	XName string
	// Labels name the bars or points, left to right: "2026-W48".
	Labels []string
	Series []Series
	// Unit follows each value in the table and on the axis ("s"); may be
	// empty.
	Unit string
	// Counts says the values are whole numbers (findings, reviews): the
	// axis then steps by whole numbers, never 0.2 of a finding.
	Counts bool
}

// Geometry, in viewBox units. At 480 wide and 12 high, text is about 9 px
// on a 360 px screen.
const (
	width      = 480.0
	fontSize   = 12
	charWidth  = 6.6 // a generous average advance at fontSize
	plotLeft   = 52.0
	plotRight  = width - 12
	plotTop    = 12.0
	plotHeight = 200.0
	plotBottom = plotTop + plotHeight
	legendRow  = 18.0
)

// StackedBars draws one bar per label, each stacking the series' values
// from the bottom in the order given, with a legend; the table has a row
// per label and a column per series, and a total. Values below zero or
// NaN count as zero.
func StackedBars(p Plot) Chart {
	id := cleanID(p.ID)
	n := len(p.Labels)
	totals := make([]float64, n)
	for _, s := range p.Series {
		for i := range min(n, len(s.Values)) {
			totals[i] += positive(s.Values[i])
		}
	}
	top := maxOf(totals)
	if top <= 0 {
		return empty(id, p.Title, p.Desc, p.table(totals))
	}
	var b strings.Builder
	axis, slot, legend := p.begin(&b, id, "Stacked bars", "chart chart-stacked", top, false)
	barWidth := slot * 0.7
	for i, label := range p.Labels {
		x := plotLeft + float64(i)*slot + (slot-barWidth)/2
		base := 0.0
		fmt.Fprintf(&b, `<g class="bar-group"><title>%s: %s</title>`, esc(label), esc(withUnit(totals[i], p.Unit)))
		for k, s := range p.Series {
			v := positive(valueAt(s.Values, i))
			if v == 0 {
				continue
			}
			y0, y1 := axis.y(base), axis.y(base+v)
			fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="#FFFFFF" stroke-width="1"><title>%s, %s: %s</title></rect>`,
				num(x), num(y1), num(barWidth), num(y0-y1), Colour(s.Key, k), esc(label), esc(s.name()), esc(withUnit(v, p.Unit)))
			base += v
		}
		b.WriteString(`</g>`)
	}
	xLabels(&b, p.Labels, slot)
	b.WriteString(legend)
	b.WriteString(`</svg>`)
	return Chart{SVG: template.HTML(b.String()), Table: p.table(totals)}
}

// Lines draws each series as a line of points over the labels, with a
// different dash and marker per series so that colour is not the only
// difference; a NaN value is a gap in its line. The table has a row per
// label and a column per series.
func Lines(p Plot) Chart {
	id := cleanID(p.ID)
	n := len(p.Labels)
	top, some := 0.0, false
	for _, s := range p.Series {
		for i := range min(n, len(s.Values)) {
			if v := s.Values[i]; !math.IsNaN(v) {
				top, some = max(top, v), true
			}
		}
	}
	if !some {
		return empty(id, p.Title, p.Desc, p.table(nil))
	}
	var b strings.Builder
	axis, slot, legend := p.begin(&b, id, "Lines", "chart chart-lines", top, true)
	xAt := func(i int) float64 { return plotLeft + (float64(i)+0.5)*slot }
	for k, s := range p.Series {
		colour := Colour(s.Key, k)
		fmt.Fprintf(&b, `<g class="series">`)
		// One polyline per run of values without a gap.
		var run []string
		flush := func() {
			if len(run) > 1 {
				fmt.Fprintf(&b, `<polyline class="line" points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`,
					strings.Join(run, " "), colour, dash(k))
			}
			run = run[:0]
		}
		for i := range n {
			v := valueAt(s.Values, i)
			if math.IsNaN(v) {
				flush()
				continue
			}
			run = append(run, num(xAt(i))+","+num(axis.y(v)))
		}
		flush()
		for i, label := range p.Labels {
			v := valueAt(s.Values, i)
			if math.IsNaN(v) {
				continue
			}
			marker(&b, "point", k, xAt(i), axis.y(v), colour, fmt.Sprintf("%s, %s: %s", label, s.name(), withUnit(v, p.Unit)))
		}
		b.WriteString(`</g>`)
	}
	xLabels(&b, p.Labels, slot)
	b.WriteString(legend)
	b.WriteString(`</svg>`)
	return Chart{SVG: template.HTML(b.String()), Table: p.table(nil)}
}

// table is the plot's data: a row per label, a column per series, and a
// last column of totals when totals is not nil. Without labels it has only
// the headers.
func (p Plot) table(totals []float64) Table {
	t := Table{Caption: p.Title, Header: []string{p.XName}}
	for _, s := range p.Series {
		t.Header = append(t.Header, s.name())
	}
	if totals != nil {
		t.Header = append(t.Header, "Total")
	}
	for i, label := range p.Labels {
		row := []string{label}
		for _, s := range p.Series {
			row = append(row, withUnit(valueAt(s.Values, i), p.Unit))
		}
		if totals != nil {
			row = append(row, withUnit(totals[i], p.Unit))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// begin writes the start of a plot with data up to top: the <svg>, its
// title and description (kind, "Lines", starts the one made when Desc is
// empty) and the vertical axis. It returns the axis, the width each label
// has, and the legend to write last.
func (p Plot) begin(b *strings.Builder, id, kind, class string, top float64, markers bool) (axis, float64, string) {
	n := len(p.Labels)
	desc := p.Desc
	if desc == "" {
		desc = fmt.Sprintf("%s of %s per %s, %s to %s; the table below has the numbers.",
			kind, seriesNames(p.Series), strings.ToLower(orDefault(p.XName, "label")), p.Labels[0], p.Labels[n-1])
	}
	a := newAxis(top)
	if p.Counts && a.step < 1 {
		a = axis{top: math.Ceil(top), step: 1}
	}
	legendHeight, legend := legendOf(p.Series, plotBottom+30, markers)
	open(b, id, class, plotBottom+30+legendHeight, p.Title, desc)
	a.draw(b, p.Unit)
	return a, (plotRight - plotLeft) / float64(n), legend
}

// Bars is the data of a chart of percentages, one horizontal bar each.
type Bars struct {
	ID, Title, Desc string // as in Plot
	// LabelName and ValueName head the table's columns: "Endpoint",
	// "Success rate".
	LabelName, ValueName string
	// Labels name the bars, top to bottom; long ones are shortened in
	// the chart, never in the table.
	Labels []string
	// Percents are 0 to 100, one per label; NaN is no value, drawn as
	// Missing.
	Percents []float64
	// Missing says why a bar has no value; "no data" when empty.
	Missing string
	// NoteName and Notes, when set, add a column to the table: "Attempts",
	// "2 of 3 succeeded".
	NoteName string
	Notes    []string
}

// PercentBars draws one horizontal bar per label, its length the percent
// of the chart's width, its label above it and its value at its end.
func PercentBars(c Bars) Chart {
	id := cleanID(c.ID)
	missing := orDefault(c.Missing, "no data")
	table := Table{Caption: c.Title, Header: []string{c.LabelName, c.ValueName}}
	if c.NoteName != "" {
		table.Header = append(table.Header, c.NoteName)
	}
	if len(c.Labels) == 0 {
		return empty(id, c.Title, c.Desc, table)
	}
	for i, label := range c.Labels {
		value := missing
		if v := valueAt(c.Percents, i); !math.IsNaN(v) {
			value = percent(v)
		}
		row := []string{label, value}
		if c.NoteName != "" {
			row = append(row, textAt(c.Notes, i))
		}
		table.Rows = append(table.Rows, row)
	}

	desc := c.Desc
	if desc == "" {
		desc = fmt.Sprintf("%s per %s as horizontal bars, %d of them; the table below has the numbers.",
			orDefault(c.ValueName, "Percent"), strings.ToLower(orDefault(c.LabelName, "label")), len(c.Labels))
	}
	const (
		rowHeight = 40.0
		left      = 8.0
		valueRoom = 84.0 // right of the track, for "100.0%" or "no attempts"
		barHeight = 14.0
	)
	track := width - left - valueRoom
	var b strings.Builder
	open(&b, id, "chart chart-percent", 8+rowHeight*float64(len(c.Labels)), c.Title, desc)
	// URLs run wider than charWidth's average: room for 64 characters.
	maxChars := int(math.Floor((width - left*2) / 7.2))
	for i, label := range c.Labels {
		y := 8 + rowHeight*float64(i)
		v := valueAt(c.Percents, i)
		value := missing
		if !math.IsNaN(v) {
			value = percent(v)
		}
		fmt.Fprintf(&b, `<g class="bar-group"><title>%s: %s</title>`, esc(label), esc(value))
		fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" fill="currentColor">%s</text>`, num(left), num(y+12), esc(shorten(label, maxChars)))
		fmt.Fprintf(&b, `<rect class="track" x="%s" y="%s" width="%s" height="%s" fill="#E5E5E5"/>`, num(left), num(y+18), num(track), num(barHeight))
		if !math.IsNaN(v) {
			v = min(max(v, 0), 100)
			fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, num(left), num(y+18), num(track*v/100), num(barHeight), Colour("", 0))
		}
		fmt.Fprintf(&b, `<text class="value" x="%s" y="%s" text-anchor="end" fill="currentColor">%s</text>`, num(width-left), num(y+30), esc(value))
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return Chart{SVG: template.HTML(b.String()), Table: table}
}

// open writes the <svg> element's start, its title and description.
func open(b *strings.Builder, id, class string, height float64, title, desc string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="%s" id="%s" viewBox="0 0 %s %s" width="100%%" role="img" aria-labelledby="%s-title %s-desc" font-family="system-ui, sans-serif" font-size="%d">`,
		class, id, num(width), num(height), id, id, fontSize)
	fmt.Fprintf(b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, esc(title), id, esc(desc))
}

// empty is a chart without data: a panel that says so, and the table's
// headers without rows.
func empty(id, title, desc string, table Table) Chart {
	var b strings.Builder
	open(&b, id, "chart no-data", 120, title, orDefault(desc, title)+" "+NoData)
	fmt.Fprintf(&b, `<rect class="no-data-panel" x="1" y="1" width="%s" height="118" fill="none" stroke="currentColor" stroke-dasharray="4 4"/>`, num(width-2))
	fmt.Fprintf(&b, `<text class="no-data" x="%s" y="64" text-anchor="middle" fill="currentColor">%s</text>`, num(width/2), esc(NoData))
	b.WriteString(`</svg>`)
	table.Rows = nil
	return Chart{SVG: template.HTML(b.String()), Table: table}
}

// axis is the vertical scale: 0 at the bottom of the plot, top at its top.
type axis struct {
	top, step float64
}

// newAxis returns a scale from 0 to a round number at or above max, in at
// most five steps of 1, 2 or 5 times a power of ten.
func newAxis(maxValue float64) axis {
	if maxValue <= 0 {
		maxValue = 1 // a line of zeros still needs a scale
	}
	raw := maxValue / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return axis{top: step * math.Ceil(maxValue/step), step: step}
}

func (a axis) y(v float64) float64 { return plotBottom - v/a.top*plotHeight }

func (a axis) draw(b *strings.Builder, unit string) {
	b.WriteString(`<g class="axis">`)
	for i := range int(math.Round(a.top/a.step)) + 1 {
		v := float64(i) * a.step
		y := num(a.y(v))
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="currentColor" stroke-opacity="0.2"/>`, num(plotLeft), y, num(plotRight), y)
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" dominant-baseline="middle" fill="currentColor">%s</text>`, num(plotLeft-6), y, esc(withUnit(v, unit)))
	}
	b.WriteString(`</g>`)
}

// xLabels writes as many of the labels under the plot as fit, evenly.
func xLabels(b *strings.Builder, labels []string, slot float64) {
	const maxChars = 10
	longest := 0
	for _, l := range labels {
		longest = max(longest, min(len([]rune(l)), maxChars+1))
	}
	every := max(1, int(math.Ceil((float64(longest)*charWidth+8)/slot)))
	b.WriteString(`<g class="axis x-axis">`)
	for i, l := range labels {
		if i%every != 0 {
			continue
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" fill="currentColor">%s</text>`,
			num(plotLeft+(float64(i)+0.5)*slot), num(plotBottom+18), esc(shorten(l, maxChars+1)))
	}
	b.WriteString(`</g>`)
}

// legendOf lays the series' names out in rows from y, wrapping at the
// chart's width; it returns the height it takes and its markup.
func legendOf(series []Series, y float64, markers bool) (float64, string) {
	var b strings.Builder
	b.WriteString(`<g class="legend">`)
	x, rows := plotLeft, 1
	for k, s := range series {
		name := s.name()
		w := 18 + float64(len([]rune(name)))*charWidth + 16
		if x+w > width && x > plotLeft {
			x, rows = plotLeft, rows+1
		}
		cy := y + float64(rows-1)*legendRow
		if markers {
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>`, num(x-2), num(cy), num(x+14), num(cy), Colour(s.Key, k), dash(k))
			marker(&b, "legend-marker", k, x+6, cy, Colour(s.Key, k), "")
		} else {
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`, num(x), num(cy-6), Colour(s.Key, k))
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" dominant-baseline="middle" fill="currentColor">%s</text>`, num(x+18), num(cy), esc(name))
		x += w
	}
	b.WriteString(`</g>`)
	return float64(rows) * legendRow, b.String()
}

// dash is the k-th series' line pattern.
func dash(k int) string {
	return [...]string{"", ` stroke-dasharray="6 4"`, ` stroke-dasharray="2 3"`}[k%3]
}

// marker draws the k-th series' point shape (circle, square, diamond) at
// x, y, with a tooltip when title is not empty.
func marker(b *strings.Builder, class string, k int, x, y float64, colour, title string) {
	tip := ""
	if title != "" {
		tip = "<title>" + esc(title) + "</title>"
	}
	switch k % 3 {
	case 0:
		fmt.Fprintf(b, `<circle class="%s" cx="%s" cy="%s" r="3.5" fill="%s">%s</circle>`, class, num(x), num(y), colour, tip)
	case 1:
		fmt.Fprintf(b, `<rect class="%s" x="%s" y="%s" width="7" height="7" fill="%s">%s</rect>`, class, num(x-3.5), num(y-3.5), colour, tip)
	default:
		fmt.Fprintf(b, `<polygon class="%s" points="%s,%s %s,%s %s,%s %s,%s" fill="%s">%s</polygon>`,
			class, num(x), num(y-4.5), num(x+4.5), num(y), num(x), num(y+4.5), num(x-4.5), num(y), colour, tip)
	}
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// num formats a coordinate with at most two decimals, the same way every
// time.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// withUnit formats a value for people: whole numbers without decimals,
// others with one; NaN is "–".
func withUnit(v float64, unit string) string {
	if math.IsNaN(v) {
		return "–"
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if v == math.Trunc(v) {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	if unit == "" {
		return s
	}
	return s + " " + unit
}

func percent(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }

// cleanID keeps an id to letters, digits, - and _, starting with a letter,
// so it is safe in id and aria-labelledby.
func cleanID(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		s = "chart-" + s
	}
	return s
}

// shorten cuts s to n characters, the last an ellipsis, when it is longer.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func seriesNames(series []Series) string {
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.name()
	}
	return strings.Join(names, ", ")
}

func valueAt(values []float64, i int) float64 {
	if i < len(values) {
		return values[i]
	}
	return math.NaN()
}

func textAt(texts []string, i int) string {
	if i < len(texts) {
		return texts[i]
	}
	return ""
}

func positive(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return v
}

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
