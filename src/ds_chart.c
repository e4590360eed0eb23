/* ds_chart.c: the trade-off chart, makespan against extra DDR traffic.
 *
 * Requires: series of non-negative figures.  Guarantees: one
 * self-contained SVG file (no external fonts, scripts or images; text in
 * the generic sans-serif family), written atomically: a plot with both
 * axes ticked and labelled, one marker per point with a tooltip (its
 * series and figures), the curve series joined by a line, an optional
 * dashed line at a lower bound, and a legend.  An axis is logarithmic
 * when its figures are all positive and span more than LOG_SPAN times
 * (the baselines' plans reach 10-20x dansched's makespan and 100x its
 * traffic on the bundled graphs), else linear from 0.
 * Cost: O(points) time and output. */
#include "ds.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LOG_SPAN 20.0
/* room around the extreme points, as a factor (log) */
#define MARGIN 1.15
/* the canvas and the plot area in it, in pixels */
#define W 860
#define H 500
#define PX0 90
#define PX1 560
#define PY0 50
#define PY1 430
#define LEGEND_X 585

typedef struct axis {
	bool log;
	double lo, hi; /* the range shown (log: powers of ten) */
} axis;

/* A step of 1, 2 or 5 x 10^k giving at most about `want` ticks over span. */
static double nice_step(double span, int want)
{
	double raw = span / want, p = pow(10.0, floor(log10(raw)));
	double m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* The largest 1, 2 or 5 x 10^k at or below v > 0, and the smallest at or
 * above. */
static double nice_below(double v)
{
	double p = pow(10.0, floor(log10(v)));
	return v >= 5 * p ? 5 * p : v >= 2 * p ? 2 * p : p;
}

static double nice_above(double v)
{
	double p = pow(10.0, floor(log10(v)));
	return v <= p ? p : v <= 2 * p ? 2 * p : v <= 5 * p ? 5 * p : 10 * p;
}

static axis make_axis(double lo, double hi)
{
	axis a = {false, 0, hi > 0 ? hi : 1};
	if (lo > 0 && hi / lo > LOG_SPAN) {
		a.log = true;
		a.lo = nice_below(lo / MARGIN);
		a.hi = nice_above(hi * MARGIN);
		return a;
	}
	double step = nice_step(a.hi * 1.05, 6);
	a.hi = ceil(a.hi * 1.05 / step) * step;
	return a;
}

/* v's position along the axis, 0 at lo and 1 at hi. */
static double frac(const axis *a, double v)
{
	if (a->log)
		return (log10(v > a->lo ? v : a->lo) - log10(a->lo)) /
		       (log10(a->hi) - log10(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

static double px(const axis *a, double v) { return PX0 + frac(a, v) * (PX1 - PX0); }
static double py(const axis *a, double v) { return PY1 - frac(a, v) * (PY1 - PY0); }

/* 1500 -> "1.5k", 2000000 -> "2M". */
static void tick_label(double v, char *buf, size_t size)
{
	if (v >= 1e6)
		snprintf(buf, size, "%gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, size, "%gk", v / 1e3);
	else
		snprintf(buf, size, "%g", v);
}

static void put_esc(ds_text *t, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': ds_text_printf(t, "&amp;"); break;
		case '<': ds_text_printf(t, "&lt;"); break;
		case '>': ds_text_printf(t, "&gt;"); break;
		case '"': ds_text_printf(t, "&quot;"); break;
		default: ds_text_printf(t, "%c", *s);
		}
}

/* The tick values of a: 1, 2, 5 x 10^k (log) or multiples of a step. */
static int ticks(const axis *a, double *out, int most)
{
	int n = 0;
	if (a->log) {
		double d = pow(10.0, floor(log10(a->lo) + 1e-9));
		for (; d <= a->hi * 1.0001 && n < most; d *= 10)
			for (int m = 1; m <= 5 && n < most; m += m == 1 ? 1 : 3)
				if (d * m >= a->lo * 0.9999 &&
				    d * m <= a->hi * 1.0001)
					out[n++] = d * m;
		return n;
	}
	double step = nice_step(a->hi - a->lo, 6);
	for (double v = a->lo; v <= a->hi * 1.0001 && n < most; v += step)
		out[n++] = v;
	return n;
}

static void grid_x(ds_text *t, const axis *a)
{
	double tv[64];
	int n = ticks(a, tv, 64);
	for (int i = 0; i < n; i++) {
		char lab[32];
		double x = px(a, tv[i]);
		tick_label(tv[i], lab, sizeof lab);
		ds_text_printf(t,
			       "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			       "stroke=\"#e4e4e4\"/>\n<line x1=\"%.1f\" y1=\"%d\" "
			       "x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>\n<text "
			       "x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			       x, PY0, x, PY1, x, PY1, x, PY1 + 5, x, PY1 + 18,
			       lab);
	}
}

static void grid_y(ds_text *t, const axis *a)
{
	double tv[64];
	int n = ticks(a, tv, 64);
	for (int i = 0; i < n; i++) {
		char lab[32];
		double y = py(a, tv[i]);
		tick_label(tv[i], lab, sizeof lab);
		ds_text_printf(t,
			       "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			       "stroke=\"#e4e4e4\"/>\n<line x1=\"%d\" y1=\"%.1f\" "
			       "x2=\"%d\" y2=\"%.1f\" stroke=\"#333\"/>\n<text "
			       "x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			       PX0, y, PX1, y, PX0 - 5, y, PX0, y, PX0 - 8, y + 4,
			       lab);
	}
}

static void frame(ds_text *t, const char *title, const axis *ax,
		  const axis *ay)
{
	ds_text_printf(t,
		       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "
		       "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		       "height=\"%d\" viewBox=\"0 0 %d %d\" "
		       "font-family=\"sans-serif\" font-size=\"12\">\n<rect "
		       "width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n<text x=\"%d\" "
		       "y=\"28\" font-size=\"16\" font-weight=\"bold\">",
		       W, H, W, H, W, H, PX0);
	put_esc(t, title);
	ds_text_printf(t, ": makespan against extra DDR traffic</text>\n");
	grid_x(t, ax);
	grid_y(t, ay);
	ds_text_printf(t,
		       "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		       "fill=\"none\" stroke=\"#333\"/>\n<text x=\"%d\" y=\"%d\" "
		       "text-anchor=\"middle\">extra DDR traffic (bytes%s)</text>\n"
		       "<text transform=\"translate(22 %d) rotate(-90)\" "
		       "text-anchor=\"middle\">makespan (cycles%s)</text>\n",
		       PX0, PY0, PX1 - PX0, PY1 - PY0, (PX0 + PX1) / 2, PY1 + 40,
		       ax->log ? ", log scale" : "", (PY0 + PY1) / 2,
		       ay->log ? ", log scale" : "");
}

/* One marker at (x, y): circle, square or diamond by kind. */
static void marker(ds_text *t, int kind, double x, double y,
		   const char *color)
{
	if (kind == DS_SERIES_CURVE)
		ds_text_printf(t, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" "
				  "fill=\"%s\"",
			       x, y, color);
	else if (kind == DS_SERIES_POINTS)
		ds_text_printf(t, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" "
				  "height=\"9\" fill=\"%s\"",
			       x - 4.5, y - 4.5, color);
	else
		ds_text_printf(t, "<polygon points=\"%.1f,%.1f %.1f,%.1f "
				  "%.1f,%.1f %.1f,%.1f\" fill=\"none\" "
				  "stroke=\"%s\" stroke-width=\"2\"",
			       x, y - 6, x + 6, y, x, y + 6, x - 6, y, color);
}

static const char *color_of(int kind, int i)
{
	static const char *const pts[] = {"#1f77b4", "#2ca02c", "#9467bd",
					  "#8c564b", "#17becf", "#7f7f7f"};
	static const char *const pub[] = {"#ff7f0e", "#bcbd22", "#e377c2",
					  "#555555", "#aa4499", "#44aa99"};
	if (kind == DS_SERIES_CURVE)
		return "#d62728";
	return kind == DS_SERIES_POINTS ? pts[i % 6] : pub[i % 6];
}

static void series(ds_text *t, const ds_series *s, const char *color,
		   const axis *ax, const axis *ay)
{
	if (s->kind == DS_SERIES_CURVE && s->n > 1) {
		ds_text_printf(t, "<polyline fill=\"none\" stroke=\"%s\" "
				  "stroke-width=\"2\" points=\"",
			       color);
		for (int32_t i = 0; i < s->n; i++)
			ds_text_printf(t, "%s%.1f,%.1f", i ? " " : "",
				       px(ax, (double)s->extra_ddr[i]),
				       py(ay, (double)s->makespan[i]));
		ds_text_printf(t, "\"/>\n");
	}
	for (int32_t i = 0; i < s->n; i++) {
		marker(t, s->kind, px(ax, (double)s->extra_ddr[i]),
		       py(ay, (double)s->makespan[i]), color);
		ds_text_printf(t, "><title>");
		put_esc(t, s->label);
		ds_text_printf(t, ": extra_ddr %lld, makespan %lld</title>",
			       (long long)s->extra_ddr[i],
			       (long long)s->makespan[i]);
		ds_text_printf(t, s->kind == DS_SERIES_CURVE ? "</circle>\n"
				  : s->kind == DS_SERIES_POINTS ? "</rect>\n"
								: "</polygon>\n");
	}
}

static void legend_row(ds_text *t, int row, const ds_series *s,
		       const char *color)
{
	double y = PY0 + 10 + 20 * row;
	if (s->kind == DS_SERIES_CURVE)
		ds_text_printf(t, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
				  "y2=\"%.1f\" stroke=\"%s\" "
				  "stroke-width=\"2\"/>\n",
			       LEGEND_X - 8, y, LEGEND_X + 8, y, color);
	marker(t, s->kind, LEGEND_X, y, color);
	ds_text_printf(t, "/>\n<text x=\"%d\" y=\"%.1f\">", LEGEND_X + 16,
		       y + 4);
	put_esc(t, s->label);
	ds_text_printf(t, "</text>\n");
}

static void lb_line(ds_text *t, int row, int64_t lb, const axis *ay)
{
	double y = py(ay, (double)lb), ly = PY0 + 10 + 20 * row;
	ds_text_printf(t,
		       "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		       "stroke=\"#000\" stroke-dasharray=\"6 4\"/>\n<line "
		       "x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\" "
		       "stroke-dasharray=\"6 4\"/>\n<text x=\"%d\" y=\"%.1f\">"
		       "lb_any %lld: no plan below</text>\n",
		       PX0, y, PX1, y, LEGEND_X - 8, ly, LEGEND_X + 8, ly,
		       LEGEND_X + 16, ly + 4, (long long)lb);
}

/* The range of the figures (and lb for the makespan). */
static void ranges(const ds_series *s, int ns, int64_t lb, double *x,
		   double *y)
{
	x[0] = y[0] = INFINITY;
	x[1] = y[1] = 0;
	if (lb > 0)
		y[0] = y[1] = (double)lb;
	for (int k = 0; k < ns; k++)
		for (int32_t i = 0; i < s[k].n; i++) {
			double a = (double)s[k].extra_ddr[i];
			double b = (double)s[k].makespan[i];
			x[0] = a < x[0] ? a : x[0], x[1] = a > x[1] ? a : x[1];
			y[0] = b < y[0] ? b : y[0], y[1] = b > y[1] ? b : y[1];
		}
}

int ds_chart_tradeoff(const ds_heap *h, const char *path, const char *title,
		      const ds_series *s, int ns, int64_t lb, ds_err *e)
{
	double xr[2], yr[2];
	ranges(s, ns, lb, xr, yr);
	axis ax = make_axis(xr[0], xr[1]), ay = make_axis(yr[0], yr[1]);
	ds_text t;
	ds_text_init(&t, h);
	frame(&t, title, &ax, &ay);
	int count[3] = {0, 0, 0}, row = 0;
	for (int k = 0; k < ns; k++) {
		int kind = s[k].kind;
		const char *color = color_of(kind, count[kind]++);
		series(&t, &s[k], color, &ax, &ay);
		legend_row(&t, row++, &s[k], color);
	}
	if (lb > 0)
		lb_line(&t, row, lb, &ay);
	ds_text_printf(&t, "</svg>\n");
	int rc = t.failed ? ds_fail(e, DS_ENOMEM, "%s: out of memory", path)
			  : ds_write_file_atomic(h, path, t.s, (size_t)t.len, e);
	ds_text_free(&t);
	return rc;
}
