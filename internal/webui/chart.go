package webui

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/metrics"
)

// Charts are drawn on the server as inline SVG, so that they show without
// JavaScript. The drawing area is chartW × chartH user units stretched to the width of
// the page; lines keep their width (non-scaling-stroke).
const (
	chartW = 600
	chartH = 160
)

// line is one series of a line chart; its class picks its colour in console.css.
type line struct {
	class  string
	points []metrics.Point
}

// lineChart draws series over the time window [from, to] (Unix seconds) against a
// y axis from 0 to maxY (0: the highest value, with headroom).
func lineChart(id, label string, from, to int64, maxY float64, lines ...line) template.HTML {
	if maxY <= 0 {
		for _, l := range lines {
			for _, p := range l.points {
				maxY = max(maxY, p.Value*1.1)
			}
		}
		if maxY <= 0 {
			maxY = 1
		}
	}
	span := float64(max(to-from, 1))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="%s" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="%s">`,
		id, chartW, chartH, template.HTMLEscapeString(label))
	gridLines(&b)
	for _, l := range lines {
		if len(l.points) == 0 {
			continue
		}
		pts := make([]string, len(l.points))
		for i, p := range l.points {
			x := float64(p.At-from) / span * chartW
			y := chartH - min(p.Value/maxY, 1)*chartH
			pts[i] = num(min(max(x, 0), chartW)) + "," + num(y)
		}
		if len(pts) == 1 { // one sample: a short flat stroke, so that it shows
			x, y, _ := strings.Cut(pts[0], ",")
			xf, _ := strconv.ParseFloat(x, 64)
			pts = append(pts, num(max(xf-4, 0))+","+y)
		}
		fmt.Fprintf(&b, `<polyline class="line %s" points="%s" fill="none" vector-effect="non-scaling-stroke"/>`,
			l.class, strings.Join(pts, " "))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func gridLines(b *strings.Builder) {
	for _, f := range []float64{0.25, 0.5, 0.75} {
		y := num(chartH * f)
		fmt.Fprintf(b, `<line class="grid" x1="0" y1="%s" x2="%d" y2="%s" vector-effect="non-scaling-stroke"/>`, y, chartW, y)
	}
	fmt.Fprintf(b, `<line class="axis" x1="0" y1="%d" x2="%d" y2="%d" vector-effect="non-scaling-stroke"/>`, chartH, chartW, chartH)
}

// barChart draws one bar per day; each bar carries its day and amount as a tooltip.
func barChart(id, label string, days []hosting.DaySpend, show func(hosting.Money) string) template.HTML {
	top := hosting.Money(1)
	for _, d := range days {
		top = max(top, d.Spent)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart bars" data-chart="%s" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="%s">`,
		id, chartW, chartH, template.HTMLEscapeString(label))
	gridLines(&b)
	if n := len(days); n > 0 {
		w := float64(chartW) / float64(n)
		for i, d := range days {
			h := float64(max(d.Spent, 0)) / float64(top) * (chartH - 2)
			fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s"><title>%s: %s</title></rect>`,
				num(float64(i)*w+w*0.15), num(chartH-h), num(w*0.7), num(h),
				d.Day.Format("2006-01-02"), template.HTMLEscapeString(show(d.Spent)))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func percent(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " %" }

// rate shows bytes per second in the largest unit that keeps a number ≥ 1.
func rate(lang string) func(float64) string {
	return func(v float64) string {
		units := []string{"B/s", "kB/s", "MB/s", "GB/s"}
		i := 0
		for v >= 1000 && i < len(units)-1 {
			v /= 1000
			i++
		}
		s := strconv.FormatFloat(v, 'f', 1, 64)
		if lang == "de" || lang == "fr" {
			s = strings.Replace(s, ".", ",", 1)
		}
		return s + " " + units[i]
	}
}
