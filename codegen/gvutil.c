/*
 * gvutil.c — shared plumbing of the Graphviz writers.
 *
 * Graphviz reports problems through agerr, which prints to stderr; the
 * writers catch those messages instead, so a failed render becomes an
 * ArError like every other failure and library code never prints.
 */
#include "gvutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "numfmt.h"

static char gv_msg[256];

static int catch_msg(char *msg)
{
	size_t n;
	snprintf(gv_msg, sizeof gv_msg, "%s", msg);
	n = strlen(gv_msg);
	while (n && (gv_msg[n - 1] == '\n' || gv_msg[n - 1] == ' '))
		gv_msg[--n] = '\0';
	return 0;
}

static const char *ext_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot && !strchr(dot, '/') ? dot + 1 : "";
}

GVC_t *ar_gv_context(void)
{
	static GVC_t *gvc;
	if (!gvc)
		gvc = gvContext();
	return gvc;
}

static int render(Agraph_t *g, FILE *f, const char *fmt, const char *engine,
		  const char *path, ArError *err)
{
	GVC_t *gvc;
	int rc = AR_OK;

	if (!strcmp(fmt, "dot") || !strcmp(fmt, "gv"))
		return agwrite(g, f) == 0 ? AR_OK : ar_fail(err, AR_EXIT_USAGE,
			"%s: write failed", path);
	gvc = ar_gv_context();
	if (gvLayout(gvc, g, engine) != 0)
		rc = ar_fail(err, AR_EXIT_INTERNAL, "%s: graphviz layout failed:"
			     " %s", path, gv_msg);
	else if (gvRender(gvc, g, fmt, f) != 0)
		rc = ar_fail(err, AR_EXIT_USAGE, "%s: graphviz cannot render "
			     "'%s' (use .dot, .svg, .png or .pdf): %s", path,
			     fmt, gv_msg);
	gvFreeLayout(gvc, g);
	return rc;
}

int ar_gv_write(Agraph_t *g, const char *path, const char *engine,
		ArOutFile *out, ArError *err)
{
	static const char *const formats[] = {"dot", "gv", "svg", "png", "pdf",
					      NULL};
	const char *ext = ext_of(path);
	agusererrf old;
	ArOutFile o;
	int rc, known = 0;

	for (int i = 0; formats[i]; i++)
		known |= !strcmp(ext, formats[i]);
	if (!known)
		return ar_fail(err, AR_EXIT_USAGE, "%s: unknown picture format "
			       "'%s' (use .dot, .svg, .png or .pdf)", path, ext);
	if ((rc = ar_out_open(&o, path, err)) != AR_OK)
		return rc;
	gv_msg[0] = '\0';
	old = agseterrf(catch_msg);
	rc = render(g, o.f, ext, engine, path, err);
	agseterrf(old);
	if (rc) {
		ar_out_abort(&o);
		return rc;
	}
	if (!out)
		return ar_out_commit(&o, err);
	*out = o;
	return ar_out_finish(out, err);
}

void ar_gv_set(void *obj, const char *attr, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	agsafeset(obj, (char *)attr, buf, "");
}

int64_t ar_gv_region_base(const ArPlan *p, int r)
{
	int64_t base = 0;
	for (int q = 0; q < r; q++)
		base += ar_plan_region_bytes(p, q);
	return base;
}

int64_t ar_gv_place(const ArPlan *p, int t)
{
	return ar_gv_region_base(p, p->slots[t].region) + p->slots[t].offset;
}

void ar_gv_color(char *buf, size_t n, const ArPlan *p, int t)
{
	double at = p->arena_bytes > 0 ?
		    (double)ar_gv_place(p, t) / p->arena_bytes : 0;
	/* Hues from orange through green and blue to violet; red is kept
	 * for the peak. */
	snprintf(buf, n, "%.3f 0.35 1.000", 0.08 + 0.72 * at);
}

void ar_gv_bytes(char *buf, size_t n, int64_t bytes)
{
	char s[AR_NUMFMT_LEN];
	snprintf(buf, n, "%s", ar_fmt_size(s, bytes));
}

void ar_gv_shape(char *buf, size_t n, const ArTensor *t)
{
	size_t k;
	if (t->rank < 0) {
		snprintf(buf, n, "?");
		return;
	}
	k = (size_t)snprintf(buf, n, "%s[", ar_dtype_name(t->dtype));
	for (int d = 0; d < t->rank && k < n; d++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "",
				      (long long)t->dims[d]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
}
