// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Charts of the report as inline SVG: stacked areas over time, heat maps,
 * the legend. Sizes are in CSS pixels; text takes the page's font, so no
 * font is fetched. Long runs are thinned to about two points per pixel
 * column, keeping each column's highest and lowest sample, so the page stays
 * small and no peak disappears.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define KIB	1024.0
#define MIB	(1024.0 * 1024.0)
#define GIB	(1024.0 * 1024.0 * 1024.0)

/* Plot margins: room for "1.5 GiB" on the left, ticks and "time" below. */
#define M_LEFT		62.0
#define M_RIGHT		14.0
#define M_TOP		26.0
#define M_BOTTOM	34.0

#define INK		"#222"
#define GRID		"#e3e3e3"
#define MUTED		"#666"
#define PEAK_INK	"#c0392b"

void rp_xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

void rp_fmt_bytes(double b, char *out, size_t len)
{
	double a = fabs(b);

	if (a >= GIB)
		snprintf(out, len, "%.2f GiB", b / GIB);
	else if (a >= 100 * MIB)
		snprintf(out, len, "%.0f MiB", b / MIB);
	else if (a >= MIB)
		snprintf(out, len, "%.1f MiB", b / MIB);
	else if (a >= KIB)
		snprintf(out, len, "%.0f KiB", b / KIB);
	else
		snprintf(out, len, "%.0f B", b);
}

double rp_nice_step(double max, int want)
{
	double raw, mag, f;

	if (!(max > 0) || want < 1)
		return 1;
	raw = max / want;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	/* The nearest of 1, 2, 5 (geometrically): tick counts stay near want. */
	if (f < 1.5)
		return mag;
	if (f < 3)
		return 2 * mag;
	if (f < 7)
		return 5 * mag;
	return 10 * mag;
}

double rp_byte_unit(double max, const char **name)
{
	if (max >= GIB) {
		*name = "GiB";
		return GIB;
	}
	if (max >= MIB) {
		*name = "MiB";
		return MIB;
	}
	*name = "KiB";
	return KIB;
}

/* A tick label with no more decimals than the step needs. */
static void fmt_tick(char *out, size_t len, double v, double step, const char *unit)
{
	int dec = step >= 1 ? 0 : step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3;

	char num[32], *e;

	if (fabs(v) < step * 1e-6)
		v = 0;
	snprintf(num, sizeof(num), "%.*f", dec, v);
	/* "1.0" reads as "1": drop the zeros a step like 0.5 leaves on whole numbers. */
	if (strchr(num, '.')) {
		for (e = num + strlen(num) - 1; *e == '0'; e--)
			*e = '\0';
		if (*e == '.')
			*e = '\0';
	}
	snprintf(out, len, "%s%s%s", num, unit[0] ? " " : "", unit);
}

/* Plot area and scales of one chart. */
struct frame {
	double x0, y0, w, h;	/* plot area */
	double tmax;		/* seconds at the right edge */
	double vtop;		/* bytes at the top edge */
	double vstep;		/* bytes between horizontal grid lines */
	double unit;
	const char *uname;
};

static double fx(const struct frame *fr, double t)
{
	return fr->x0 + (fr->tmax > 0 ? t / fr->tmax : 0) * fr->w;
}

static double fy(const struct frame *fr, double v)
{
	return fr->y0 + fr->h - (fr->vtop > 0 ? v / fr->vtop : 0) * fr->h;
}

/* Frame for a chart of width x height showing [0, tmax] x [0, vmax]. */
static void frame_init(struct frame *fr, double width, double height, double tmax, double vmax)
{
	double ustep;

	fr->x0 = M_LEFT;
	fr->y0 = M_TOP;
	fr->w = width - M_LEFT - M_RIGHT;
	fr->h = height - M_TOP - M_BOTTOM;
	fr->tmax = tmax > 0 ? tmax : 1;
	if (vmax <= 0)
		vmax = MIB;
	fr->unit = rp_byte_unit(vmax, &fr->uname);
	/* The top is the next grid line above the largest value: it always fits. */
	ustep = rp_nice_step(vmax / fr->unit, fr->h >= 160 ? 5 : 4);
	fr->vstep = ustep * fr->unit;
	fr->vtop = ceil(vmax / fr->vstep * (1 - 1e-9)) * fr->vstep;
	if (fr->vtop < vmax)
		fr->vtop += fr->vstep;
}

static void svg_open(FILE *f, double width, double height, const char *label)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" "
		"width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"", width, height, width, height);
	rp_xml_escape(f, label ? label : "chart");
	fputs("\">\n", f);
}

static void title(FILE *f, double x, double y, const char *text)
{
	if (!text)
		return;
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"ttl\">", x, y);
	rp_xml_escape(f, text);
	fputs("</text>\n", f);
}

/* Grid, byte ticks on the left, time ticks below. */
static void axes(FILE *f, const struct frame *fr)
{
	double tstep = rp_nice_step(fr->tmax, fr->w >= 600 ? 10 : fr->w >= 300 ? 5 : 3);
	char lab[48];

	for (double v = 0; v <= fr->vtop * (1 + 1e-9); v += fr->vstep) {
		double y = fy(fr, v);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			fr->x0, y, fr->x0 + fr->w, y, GRID);
		fmt_tick(lab, sizeof(lab), v / fr->unit, fr->vstep / fr->unit, fr->uname);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"end\">%s</text>\n",
			fr->x0 - 6, y + 4, lab);
	}
	for (double t = 0; t <= fr->tmax * (1 + 1e-9); t += tstep) {
		double x = fx(fr, t);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			x, fr->y0 + fr->h, x, fr->y0 + fr->h + 4, MUTED);
		fmt_tick(lab, sizeof(lab), t, tstep, "s");
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">%s</text>\n",
			x, fr->y0 + fr->h + 16, lab);
	}
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
		fr->x0, fr->y0 + fr->h, fr->x0 + fr->w, fr->y0 + fr->h, MUTED);
}

/* Dashed line, dot and "peak 25.9 MiB at 1.8 s" at the peak. */
static void peak_mark(FILE *f, const struct frame *fr, double t, double v, const char *what)
{
	double x = fx(fr, t), y = fy(fr, v);
	bool right = x > fr->x0 + fr->w * 0.6;
	char b[32];

	rp_fmt_bytes(v, b, sizeof(b));
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		"stroke-dasharray=\"4 3\"/>\n", x, fr->y0, x, fr->y0 + fr->h, PEAK_INK);
	fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"1.5\"/>\n",
		x, y, PEAK_INK);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"pk\" text-anchor=\"%s\">%s%s at %.1f s</text>\n",
		right ? x - 7 : x + 7, fr->y0 + 12, right ? "end" : "start",
		what, b, t);
}

/*
 * Stacked areas of groups over the samples idx[0..n) of p, then the total
 * as a line on top. The groups partition the total, so the top of the stack
 * is the total; the line makes it crisp.
 */
static void stack(FILE *f, const struct frame *fr, const struct rp_groups *g,
		  const struct rp_proc *p, const size_t *idx, size_t n)
{
	double *base = calloc(n ? n : 1, sizeof(*base));

	if (!base)
		return;
	for (size_t gi = 0; gi < g->n; gi++) {
		bool any = false;

		for (size_t k = 0; k < n && !any; k++)
			any = p->grp[idx[k] * RP_MAX_GROUPS + gi] > 0;
		if (!any)
			continue;
		fprintf(f, "<path fill=\"%s\" d=\"", g->color[gi]);
		for (size_t k = 0; k < n; k++) {
			double v = base[k] + (double)p->grp[idx[k] * RP_MAX_GROUPS + gi];

			fprintf(f, "%s%.1f,%.1f", k ? "L" : "M", fx(fr, p->t[idx[k]]), fy(fr, v));
		}
		for (size_t k = n; k-- > 0;)
			fprintf(f, "L%.1f,%.1f", fx(fr, p->t[idx[k]]), fy(fr, base[k]));
		fputs("Z\"><title>", f);
		rp_xml_escape(f, g->name[gi]);
		fputs("</title></path>\n", f);
		for (size_t k = 0; k < n; k++)
			base[k] += (double)p->grp[idx[k] * RP_MAX_GROUPS + gi];
	}
	fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.3\" stroke-linejoin=\"round\" d=\"", INK);
	for (size_t k = 0; k < n; k++)
		fprintf(f, "%s%.1f,%.1f", k ? "L" : "M", fx(fr, p->t[idx[k]]), fy(fr, (double)p->tot[idx[k]]));
	fputs("\"><title>total</title></path>\n", f);
	free(base);
}

static int draw_stack_chart(FILE *f, const struct rp_groups *g, const struct rp_proc *p,
			    size_t peak, const char *peak_what, const struct rp_stack_chart *c)
{
	struct frame fr;
	size_t *idx, n, ncol;

	frame_init(&fr, c->width, c->height, c->tmax, c->vmax > 0 ? c->vmax : (double)p->tot[peak]);
	ncol = fr.w > 1 ? (size_t)fr.w : 1;
	idx = malloc((2 * ncol + 3) * sizeof(*idx));
	if (!idx)
		return -1;
	n = rp_pick_samples(p, ncol, idx);
	svg_open(f, c->width, c->height, c->title);
	title(f, fr.x0, 16, c->title);
	axes(f, &fr);
	stack(f, &fr, g, p, idx, n);
	if (p->n)
		peak_mark(f, &fr, p->t[peak], (double)p->tot[peak], peak_what);
	fputs("</svg>\n", f);
	free(idx);
	return 0;
}

int rp_svg_proc(FILE *f, const struct rp_run *run, const struct rp_groups *g, size_t pi,
		const struct rp_pstat *st, const struct rp_stack_chart *c)
{
	return draw_stack_chart(f, g, &run->procs[pi], st->peak_idx, "peak ", c);
}

int rp_svg_agg(FILE *f, const struct rp_groups *g, const struct rp_agg *a,
	       const struct rp_stack_chart *c)
{
	/*
	 * The buckets seen as one process, so the same drawing serves; from
	 * the first sample on, or the chart would ramp up from a 0 nobody had.
	 */
	size_t b0 = a->first_b < a->nb ? a->first_b : 0;
	struct rp_proc view = {
		.n = a->nb - b0, .tot = a->tot + b0, .grp = a->grp + b0 * RP_MAX_GROUPS, .rank = -1,
	};
	int ret;

	view.t = malloc((view.n ? view.n : 1) * sizeof(*view.t));
	if (!view.t)
		return -1;
	for (size_t b = 0; b < view.n; b++)
		view.t[b] = (double)(b0 + b) * a->interval;
	/* rp_agg_build keeps peak_b >= first_b; never index before the view. */
	ret = draw_stack_chart(f, g, &view, a->peak_b >= b0 ? a->peak_b - b0 : 0, "job peak ", c);
	free(view.t);
	return ret;
}

/* Sequential colour map (viridis), dark = little, yellow = much. */
static const unsigned char viridis[][3] = {
	{ 68, 1, 84 }, { 72, 40, 120 }, { 62, 74, 137 }, { 49, 104, 142 }, { 38, 130, 142 },
	{ 31, 158, 137 }, { 53, 183, 121 }, { 110, 206, 88 }, { 181, 222, 43 }, { 253, 231, 37 },
};
#define NVIRIDIS	(sizeof(viridis) / sizeof(viridis[0]))
#define HEAT_LEVELS	48

static void heat_color(int level, char *out, size_t len)
{
	double x = (double)level / (HEAT_LEVELS - 1) * (NVIRIDIS - 1);
	size_t i = (size_t)x;
	double u = x - (double)i;
	int rgb[3];

	if (i >= NVIRIDIS - 1) {
		i = NVIRIDIS - 2;
		u = 1;
	}
	for (int k = 0; k < 3; k++)
		rgb[k] = (int)lround(viridis[i][k] * (1 - u) + viridis[i + 1][k] * u);
	snprintf(out, len, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static int heat_level(double v, double vmax)
{
	int l;

	if (vmax <= 0)
		return 0;
	l = (int)lround(v / vmax * (HEAT_LEVELS - 1));
	return l < 0 ? 0 : l >= HEAT_LEVELS ? HEAT_LEVELS - 1 : l;
}

/* Colour bar with byte ticks at the right of the heat map. */
static void heat_legend(FILE *f, double x, double y, double h, double vmax)
{
	const char *uname;
	double unit = rp_byte_unit(vmax > 0 ? vmax : MIB, &uname);
	double step = rp_nice_step(vmax / unit, h >= 120 ? 4 : 2) * unit;
	char col[16], lab[48];

	for (int l = 0; l < HEAT_LEVELS; l++) {
		heat_color(l, col, sizeof(col));
		fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"14\" height=\"%.2f\" fill=\"%s\"/>\n",
			x, y + h - (l + 1) * h / HEAT_LEVELS, h / HEAT_LEVELS + 0.5, col);
	}
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%.1f\" fill=\"none\" stroke=\"%s\"/>\n",
		x, y, h, MUTED);
	if (vmax <= 0)
		return;
	for (double v = 0; v <= vmax * (1 + 1e-9); v += step) {
		double yy = y + h - v / vmax * h;

		fmt_tick(lab, sizeof(lab), v / unit, step / unit, uname);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			x + 14, yy, x + 18, yy, MUTED);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\">%s</text>\n", x + 21, yy + 4, lab);
	}
}

/* Label every k-th row, k in 1, 2, 5, 10, ...: at most ~24 labels, never overlapping. */
static size_t label_every(size_t nrow, double rh)
{
	size_t k = 1;

	while (nrow / k > 24 || rh * (double)k < 11) {
		size_t d = k;

		while (d >= 10)
			d /= 10;
		k = d == 2 ? k / 2 * 5 : k * 2;
	}
	return k;
}

/* One row of cells, runs of equal colour merged into one rect. */
static void heat_row(FILE *f, const double *row, size_t ncol, double vmax,
		     double x0, double cw, double y, double rh)
{
	char col[16];

	for (size_t c = 0; c < ncol;) {
		size_t e = c + 1;
		int l;

		if (isnan(row[c])) {
			c++;
			continue;
		}
		l = heat_level(row[c], vmax);
		while (e < ncol && !isnan(row[e]) && heat_level(row[e], vmax) == l)
			e++;
		heat_color(l, col, sizeof(col));
		/* Half a pixel of overlap: no hairline seams between cells. */
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"/>\n",
			x0 + (double)c * cw, y, (double)(e - c) * cw + 0.5, rh + (rh > 3 ? 0 : 0.3), col);
		c = e;
	}
}

int rp_svg_heat_rows(FILE *f, const char *const *labels, size_t nrow, const double *cells,
		     size_t ncol, const struct rp_heat_chart *c)
{
	double rh = nrow ? 260.0 / (double)nrow : 1, vmax = 0, x0 = 78, y0 = 26, pw, ph, cw;
	double tstep, height;
	size_t every;
	char lab[48];

	rh = rh < 2 ? 2 : rh > 30 ? 30 : rh;
	ph = rh * (double)nrow;
	height = y0 + ph + 36;
	if (height < 150)
		height = 150;
	pw = c->width - x0 - 110;
	cw = pw / (double)(ncol ? ncol : 1);
	for (size_t r = 0; r < nrow; r++)
		for (size_t k = 0; k < ncol; k++) {
			double v = cells[r * ncol + k];

			if (!isnan(v) && v > vmax)
				vmax = v;
		}

	svg_open(f, c->width, height, c->title);
	title(f, x0, 16, c->title);
	/* Light grey where a process was not running. */
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f1f1f1\"/>\n",
		x0, y0, pw, ph);
	every = label_every(nrow, rh);
	for (size_t r = 0; r < nrow; r++) {
		const double *row = cells + r * ncol;
		double y = y0 + rh * (double)r;
		size_t pk = ncol;

		heat_row(f, row, ncol, vmax, x0, cw, y, rh);
		if (r % every == 0) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"end\">",
				x0 - 6, y + rh / 2 + 4);
			rp_xml_escape(f, labels[r]);
			fputs("</text>\n", f);
		}
		/* Each row's peak: a white-ringed dot where rows are tall enough to see one. */
		for (size_t k = 0; k < ncol; k++)
			if (!isnan(row[k]) && (pk == ncol || row[k] > row[pk]))
				pk = k;
		if (rh >= 8 && pk < ncol && row[pk] > 0)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"none\" stroke=\"#fff\" "
				"stroke-width=\"1.5\"/>\n", x0 + ((double)pk + 0.5) * cw, y + rh / 2,
				rh / 2 - 1 < 5 ? rh / 2 - 1 : 5);
	}
	if (c->peak_t >= 0 && c->tmax > 0) {
		double x = x0 + c->peak_t / c->tmax * pw;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n", x, y0 - 4, x, y0 + ph, PEAK_INK);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"pk\" text-anchor=\"middle\">job peak</text>\n",
			x, y0 - 7);
	}
	tstep = rp_nice_step(c->tmax > 0 ? c->tmax : 1, pw >= 600 ? 10 : 5);
	for (double t = 0; c->tmax > 0 && t <= c->tmax * (1 + 1e-9); t += tstep) {
		double x = x0 + t / c->tmax * pw;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			x, y0 + ph, x, y0 + ph + 4, MUTED);
		fmt_tick(lab, sizeof(lab), t, tstep, "s");
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">%s</text>\n",
			x, y0 + ph + 16, lab);
	}
	heat_legend(f, x0 + pw + 16, y0, ph > 100 ? ph : 100, vmax);
	fputs("</svg>\n", f);
	return 0;
}

int rp_svg_legend(FILE *f, const struct rp_groups *g, double width)
{
	double x = 0, y = 0, h = 22;
	size_t rows = 1;

	/* Lay out once to know the height: ~7 px a character at the legend's size. */
	for (size_t i = 0; i < g->n; i++) {
		double w = 24 + 7.2 * (double)strlen(g->name[i]) + 18;

		if (x > 0 && x + w > width) {
			x = 0;
			rows++;
		}
		x += w;
	}
	svg_open(f, width, h * (double)rows + 4, "legend: one colour per component");
	x = 0;
	for (size_t i = 0; i < g->n; i++) {
		double w = 24 + 7.2 * (double)strlen(g->name[i]) + 18;

		if (x > 0 && x + w > width) {
			x = 0;
			y += h;
		}
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"14\" rx=\"2\" fill=\"%s\"/>\n",
			x, y + 4, g->color[i]);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"lg\">", x + 22, y + 16);
		rp_xml_escape(f, g->name[i]);
		fputs("</text>\n", f);
		x += w;
	}
	fputs("</svg>\n", f);
	return 0;
}
