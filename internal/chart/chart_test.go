package chart_test

import (
	"bytes"
	"encoding/xml"
	"flag"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/chart"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// hostile is a label a user could give a repository or an endpoint.
const hostile = `</text><script>alert("x")</script>&amp;'`

// node is any SVG element, as encoding/xml reads it.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []node     `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n node) float(t *testing.T, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attr(name), 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.XMLName.Local, name, n.attr(name), err)
	}
	return v
}

// all returns the elements under n (n too) named local with class, in
// document order; class "" matches any.
func (n node) all(local, class string) []node {
	var out []node
	if n.XMLName.Local == local && (class == "" || strings.Contains(" "+n.attr("class")+" ", " "+class+" ")) {
		out = append(out, n)
	}
	for _, c := range n.Children {
		out = append(out, c.all(local, class)...)
	}
	return out
}

// child returns n's first child element named local.
func (n node) child(local string) (node, bool) {
	for _, c := range n.Children {
		if c.XMLName.Local == local {
			return c, true
		}
	}
	return node{}, false
}

// parse reads the chart's SVG as XML and checks what every chart must
// have: role="img", a title and a description that aria-labelledby names,
// a viewBox, width 100%, and no style, script or event handler.
func parse(t *testing.T, c chart.Chart, title string) node {
	t.Helper()
	var root node
	if err := xml.Unmarshal([]byte(c.SVG), &root); err != nil {
		t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, c.SVG)
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element %v, want an svg element", root.XMLName)
	}
	if root.attr("role") != "img" || root.attr("width") != "100%" {
		t.Errorf("role %q width %q, want img and 100%%", root.attr("role"), root.attr("width"))
	}
	if f := strings.Fields(root.attr("viewBox")); len(f) != 4 {
		t.Errorf("viewBox %q", root.attr("viewBox"))
	}
	titleNode, ok := root.child("title")
	if !ok || titleNode.Text != title {
		t.Errorf("title %q, want %q", titleNode.Text, title)
	}
	desc, ok := root.child("desc")
	if !ok || strings.TrimSpace(desc.Text) == "" {
		t.Error("no description")
	}
	ids := strings.Fields(root.attr("aria-labelledby"))
	if len(ids) != 2 || ids[0] != titleNode.attr("id") || ids[1] != desc.attr("id") {
		t.Errorf("aria-labelledby %q, want the title's id %q and the description's %q", root.attr("aria-labelledby"), titleNode.attr("id"), desc.attr("id"))
	}
	var check func(n node)
	check = func(n node) {
		switch n.XMLName.Local {
		case "script", "style", "foreignObject", "image", "use", "a":
			t.Errorf("a <%s> element", n.XMLName.Local)
		}
		for _, a := range n.Attrs {
			if a.Name.Local == "style" || strings.HasPrefix(a.Name.Local, "on") || a.Name.Local == "href" {
				t.Errorf("<%s %s=%q>: not allowed under the CSP", n.XMLName.Local, a.Name.Local, a.Value)
			}
		}
		for _, c := range n.Children {
			check(c)
		}
	}
	check(root)
	return root
}

func severityPlot(labels []string, values ...[]float64) chart.Plot {
	p := chart.Plot{ID: "findings", Title: "Findings per week", XName: "Week", Labels: labels}
	for i, key := range []string{"critical", "high", "medium", "low", "info"} {
		if i < len(values) {
			p.Series = append(p.Series, chart.Series{Key: key, Values: values[i]})
		}
	}
	return p
}

func TestStackedBars(t *testing.T) {
	t.Parallel()
	p := severityPlot([]string{"2026-W46", "2026-W47", "2026-W48"},
		[]float64{1, 0, 4}, // critical
		[]float64{2, 0, 0}, // high
		[]float64{0, 0, 2}, // medium
	)
	c := chart.StackedBars(p)
	root := parse(t, c, "Findings per week")
	bars := root.all("rect", "bar")
	if len(bars) != 4 {
		t.Fatalf("%d bar segments, want 4 (one per value above zero)", len(bars))
	}
	// Heights are proportional to the values: 1, 2, 4, 2.
	unit := bars[0].float(t, "height")
	for i, want := range []float64{1, 2, 4, 2} {
		if h := bars[i].float(t, "height"); math.Abs(h-want*unit) > 0.02 {
			t.Errorf("segment %d is %v high, want %v (%v per finding)", i, h, want*unit, unit)
		}
	}
	// The first bar stacks high on critical; the third medium on critical.
	if y0, y1, h1 := bars[0].float(t, "y"), bars[1].float(t, "y"), bars[1].float(t, "height"); math.Abs(y1+h1-y0) > 0.02 {
		t.Errorf("high (y %v, height %v) does not sit on critical (y %v)", y1, h1, y0)
	}
	if bars[0].float(t, "x") >= bars[2].float(t, "x") {
		t.Error("W48's bar is not right of W46's")
	}
	// Fixed colours: critical is vermillion wherever it is.
	if bars[0].attr("fill") != chart.Colour("critical", 0) || bars[2].attr("fill") != "#D55E00" || bars[1].attr("fill") != "#E69F00" {
		t.Errorf("fills %s %s %s", bars[0].attr("fill"), bars[1].attr("fill"), bars[2].attr("fill"))
	}
	var legend []string
	for _, g := range root.all("g", "legend") {
		for _, txt := range g.all("text", "") {
			legend = append(legend, txt.Text)
		}
	}
	if strings.Join(legend, ",") != "critical,high,medium" {
		t.Errorf("legend %v", legend)
	}
	want := chart.Table{Caption: "Findings per week", Header: []string{"Week", "critical", "high", "medium", "Total"},
		Rows: [][]string{{"2026-W46", "1", "2", "0", "3"}, {"2026-W47", "0", "0", "0", "0"}, {"2026-W48", "4", "0", "2", "6"}}}
	if !equalTables(c.Table, want) {
		t.Errorf("table %+v, want %+v", c.Table, want)
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	p := chart.Plot{ID: "durations", Title: "Review duration", XName: "Day", Unit: "s",
		Labels: []string{"2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27"},
		Series: []chart.Series{
			{Key: "median", Values: []float64{10, 20, nan, 40, 30}},
			{Key: "p90", Name: "90th percentile", Values: []float64{nan, nan, nan, nan, nan}},
		}}
	c := chart.Lines(p)
	root := parse(t, c, "Review duration")
	lines := root.all("polyline", "line")
	if len(lines) != 2 {
		t.Fatalf("%d polylines, want 2: the median's gap splits it, p90 has none", len(lines))
	}
	points := root.all("circle", "point")
	if len(points) != 4 {
		t.Fatalf("%d median points, want 4", len(points))
	}
	// Heights above the axis are proportional to the values.
	var bottom float64
	for _, g := range root.all("g", "axis") {
		for _, l := range g.all("line", "") {
			bottom = max(bottom, l.float(t, "y1")) // the zero line is the lowest
		}
	}
	unit := (bottom - points[0].float(t, "cy")) / 10
	for i, want := range []float64{10, 20, 40, 30} {
		if got := bottom - points[i].float(t, "cy"); math.Abs(got-want*unit) > 0.02 {
			t.Errorf("point %d is %v above the axis, want %v", i, got, want*unit)
		}
	}
	want := chart.Table{Caption: "Review duration", Header: []string{"Day", "median", "90th percentile"},
		Rows: [][]string{{"2026-11-23", "10 s", "–"}, {"2026-11-24", "20 s", "–"}, {"2026-11-25", "–", "–"}, {"2026-11-26", "40 s", "–"}, {"2026-11-27", "30 s", "–"}}}
	if !equalTables(c.Table, want) {
		t.Errorf("table %+v, want %+v", c.Table, want)
	}
}

func TestPercentBars(t *testing.T) {
	t.Parallel()
	long := "https://hooks.example.com/" + strings.Repeat("very-long-path/", 10)
	c := chart.PercentBars(chart.Bars{ID: "delivery", Title: "Delivery success", LabelName: "Endpoint", ValueName: "Success rate",
		Labels: []string{long, "https://ci.example.com/", hostile}, Percents: []float64{100, 25, math.NaN()},
		Missing: "no attempts", NoteName: "Attempts", Notes: []string{"4 of 4 succeeded", "1 of 4 succeeded", "none"}})
	root := parse(t, c, "Delivery success")
	bars := root.all("rect", "bar")
	if len(bars) != 2 {
		t.Fatalf("%d bars, want 2: the endpoint without attempts has none", len(bars))
	}
	track := root.all("rect", "track")[0].float(t, "width")
	if w0, w1 := bars[0].float(t, "width"), bars[1].float(t, "width"); math.Abs(w0-track) > 0.02 || math.Abs(w1-track/4) > 0.02 {
		t.Errorf("bars %v and %v wide on a track of %v, want 100%% and 25%%", w0, w1, track)
	}
	var values, labels []string
	for _, v := range root.all("text", "value") {
		values = append(values, v.Text)
	}
	for _, v := range root.all("text", "label") {
		labels = append(labels, v.Text)
	}
	if strings.Join(values, "|") != "100.0%|25.0%|no attempts" {
		t.Errorf("values %v", values)
	}
	if labels[0] == long || !strings.HasSuffix(labels[0], "…") || !strings.HasPrefix(long, strings.TrimSuffix(labels[0], "…")) {
		t.Errorf("a long label drawn as %q, want it shortened with an ellipsis", labels[0])
	}
	if labels[2] != hostile {
		t.Errorf("hostile label drawn as %q, want the text itself", labels[2])
	}
	want := chart.Table{Caption: "Delivery success", Header: []string{"Endpoint", "Success rate", "Attempts"},
		Rows: [][]string{{long, "100.0%", "4 of 4 succeeded"}, {"https://ci.example.com/", "25.0%", "1 of 4 succeeded"}, {hostile, "no attempts", "none"}}}
	if !equalTables(c.Table, want) {
		t.Errorf("table %+v, want %+v", c.Table, want)
	}
}

// Every text a user controls is escaped: in labels, series names, titles
// and descriptions, on every chart, in the SVG and in the table.
func TestEscaping(t *testing.T) {
	t.Parallel()
	plot := chart.Plot{ID: `x" onload="alert(1)`, Title: hostile, Desc: hostile, XName: hostile, Labels: []string{hostile, "b"},
		Series: []chart.Series{{Key: "low", Name: hostile, Values: []float64{1, 2}}}}
	charts := map[string]chart.Chart{
		"stacked": chart.StackedBars(plot),
		"lines":   chart.Lines(plot),
		"percent": chart.PercentBars(chart.Bars{ID: plot.ID, Title: hostile, Desc: hostile, LabelName: hostile, Labels: []string{hostile}, Percents: []float64{50}}),
		"empty":   chart.StackedBars(chart.Plot{ID: plot.ID, Title: hostile, Desc: hostile}),
	}
	for name, c := range charts {
		root := parse(t, c, hostile)
		if strings.Contains(string(c.SVG), "<script") || strings.Contains(string(c.SVG), `" onload`) {
			t.Errorf("%s: hostile text reached the markup:\n%s", name, c.SVG)
		}
		// The text comes back whole, as text, wherever it is shown in full.
		found := 0
		for _, el := range root.all("title", "") {
			if strings.Contains(el.Text, hostile) {
				found++
			}
		}
		if found == 0 {
			t.Errorf("%s: no title holds the hostile text as text", name)
		}
		if strings.HasPrefix(root.attr("id"), "x\"") || strings.ContainsAny(root.attr("aria-labelledby"), `"<>=`) {
			t.Errorf("%s: id %q aria-labelledby %q", name, root.attr("id"), root.attr("aria-labelledby"))
		}
		// The table, rendered, is well-formed and shows the text as text.
		var table node
		if err := xml.Unmarshal([]byte(c.Table.HTML()), &table); err != nil {
			t.Fatalf("%s: table is not well-formed: %v\n%s", name, err, c.Table.HTML())
		}
		if len(table.all("script", "")) != 0 {
			t.Errorf("%s: the table has a script", name)
		}
		if caption, _ := table.child("caption"); caption.Text != hostile {
			t.Errorf("%s: caption %q", name, caption.Text)
		}
	}
	// In a page, html/template places the SVG as it is: it needs no more
	// escaping and gets none.
	page := template.Must(template.New("page").Parse(`<figure>{{.SVG}}{{.Table.HTML}}</figure>`))
	var buf bytes.Buffer
	if err := page.Execute(&buf, charts["stacked"]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), string(charts["stacked"].SVG)) || strings.Contains(buf.String(), "<script") {
		t.Errorf("page:\n%s", buf.String())
	}
}

func TestNoData(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for name, c := range map[string]chart.Chart{
		"stacked, no labels":  chart.StackedBars(chart.Plot{ID: "a", Title: "Findings per week", XName: "Week"}),
		"stacked, all zero":   chart.StackedBars(severityPlot([]string{"2026-W47", "2026-W48"}, []float64{0, 0}, []float64{0, 0})),
		"lines, no values":    chart.Lines(chart.Plot{ID: "b", Title: "Findings per week", Labels: []string{"d"}, Series: []chart.Series{{Key: "median", Values: []float64{nan}}}}),
		"percent, no labels:": chart.PercentBars(chart.Bars{ID: "c", Title: "Findings per week", LabelName: "Endpoint", ValueName: "Rate"}),
	} {
		root := parse(t, c, "Findings per week")
		if !strings.Contains(root.attr("class"), "no-data") {
			t.Errorf("%s: class %q", name, root.attr("class"))
		}
		texts := root.all("text", "no-data")
		if len(texts) != 1 || texts[0].Text != chart.NoData {
			t.Errorf("%s: says %v, want %q", name, texts, chart.NoData)
		}
		if len(root.all("rect", "bar"))+len(root.all("polyline", ""))+len(root.all("g", "axis")) != 0 {
			t.Errorf("%s: draws bars, lines or axes without data", name)
		}
		if desc, _ := root.child("desc"); !strings.Contains(desc.Text, chart.NoData) {
			t.Errorf("%s: description %q does not say there is no data", name, desc.Text)
		}
		if len(c.Table.Rows) != 0 || len(c.Table.Header) < 2 {
			t.Errorf("%s: table %+v, want headers and no rows", name, c.Table)
		}
		if !strings.Contains(string(c.Table.HTML()), chart.NoData) {
			t.Errorf("%s: table says %s", name, c.Table.HTML())
		}
	}
}

// TestGolden keeps each chart's markup as it was, byte for byte: run with
// -update after a deliberate change, and look at the files in a browser.
func TestGolden(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	weeks := []string{"2026-W37", "2026-W38", "2026-W39", "2026-W40", "2026-W41", "2026-W42", "2026-W43", "2026-W44", "2026-W45", "2026-W46", "2026-W47", "2026-W48"}
	charts := map[string]func() chart.Chart{
		"stacked": func() chart.Chart {
			return chart.StackedBars(severityPlot(weeks,
				[]float64{0, 1, 0, 0, 2, 0, 0, 1, 0, 0, 3, 1},
				[]float64{2, 0, 1, 3, 0, 0, 4, 0, 1, 2, 0, 1},
				[]float64{1, 4, 2, 0, 5, 1, 0, 2, 2, 0, 1, 3},
				[]float64{3, 0, 2, 1, 0, 2, 6, 1, 0, 1, 2, 0},
				[]float64{0, 1, 0, 0, 1, 0, 0, 0, 3, 0, 0, 2}))
		},
		"lines": func() chart.Chart {
			return chart.Lines(chart.Plot{ID: "durations", Title: "Review duration", XName: "Day", Unit: "s",
				Labels: []string{"2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26"},
				Series: []chart.Series{
					{Key: "median", Name: "Median", Values: []float64{42, 38.5, nan, 51, 47, 40, 44}},
					{Key: "p90", Name: "90th percentile", Values: []float64{95, 88, nan, 130, 101, 90, 97}},
				}})
		},
		"percent": func() chart.Chart {
			return chart.PercentBars(chart.Bars{ID: "delivery", Title: "Webhook delivery success", LabelName: "Endpoint", ValueName: "Success rate",
				Labels: []string{"https://ci.example.com/hooks/quorum", "https://chat.example.org/" + strings.Repeat("x", 80), "https://quiet.example.net/"}, Percents: []float64{98.5, 60, nan},
				Missing: "no attempts"})
		},
		"empty": func() chart.Chart {
			return chart.StackedBars(chart.Plot{ID: "findings", Title: "Findings per week", XName: "Week"})
		},
	}
	for name, draw := range charts {
		c := draw()
		if again := draw(); again.SVG != c.SVG {
			t.Errorf("%s: two drawings of the same data differ", name)
		}
		got := []byte(string(c.SVG) + "\n" + string(c.Table.HTML()) + "\n")
		path := filepath.Join("testdata", name+".svg.html")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/chart -update to write it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run with -update after a deliberate change):\n%s", name, path, got)
		}
	}
}

func equalTables(a, b chart.Table) bool {
	if a.Caption != b.Caption || strings.Join(a.Header, "\x00") != strings.Join(b.Header, "\x00") || len(a.Rows) != len(b.Rows) {
		return false
	}
	for i := range a.Rows {
		if strings.Join(a.Rows[i], "\x00") != strings.Join(b.Rows[i], "\x00") {
			return false
		}
	}
	return true
}

// TestCountsStepByWholeNumbers: one finding is not drawn on an axis of
// 0.2, 0.4, … findings.
func TestCountsStepByWholeNumbers(t *testing.T) {
	p := chart.Plot{ID: "c", Title: "Findings", XName: "Week", Labels: []string{"W1"}, Series: []chart.Series{{Key: "high", Values: []float64{1}}}}
	if svg := string(chart.StackedBars(p).SVG); !strings.Contains(svg, ">0.2<") {
		t.Fatalf("without Counts the axis of one finding has no 0.2 step: the test does not test")
	}
	p.Counts = true
	if svg := string(chart.StackedBars(p).SVG); strings.Contains(svg, ">0.2<") || !strings.Contains(svg, ">1<") {
		t.Errorf("an axis of counts has fractional steps:\n%s", svg)
	}
}
