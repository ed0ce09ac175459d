/*
 * gvutil.c — shared plumbing of the Graphviz writers.
 *
 * Graphviz reports problems through agerr, which prints to stderr; the
 * writers catch those messages instead, so a failed render becomes an
 * ArError like every other failure and library code never prints.
 */
#include "gvutil.h"

#include <assert.h>
#include <math.h>
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
		gvc = ar_gv()->gvContext();
	return gvc;
}

/*
 * Graphviz's cairo renderer scales a bitmap down on its own when a side
 * would reach 32,767 pixels, and says so on stderr, past any error hook.
 * A bitmap is never that large here: when the laid-out drawing would be,
 * its "size" is set to fit (at 96 pixels per inch, the renderer's, with
 * room for the pad) and the caller lays it out again.  The same cap keeps
 * the pixel count, hence the renderer's memory, bounded.  Returns whether
 * it set the size.
 */
#define BITMAP_MAX_SIDE 32000.0
#define BITMAP_MAX_PIXELS 2.0e8

static bool fit_bitmap(Agraph_t *g)
{
	boxf bb = GD_bb(g);
	double w = (bb.UR.x - bb.LL.x) * 96 / 72 + 64,
	       h = (bb.UR.y - bb.LL.y) * 96 / 72 + 64, k = 1;

	if (w > BITMAP_MAX_SIDE)
		k = BITMAP_MAX_SIDE / w;
	if (h * k > BITMAP_MAX_SIDE)
		k = BITMAP_MAX_SIDE / h;
	if (w * h * k * k > BITMAP_MAX_PIXELS)
		k = sqrt(BITMAP_MAX_PIXELS / (w * h));
	if (k >= 1)
		return false;
	ar_gv_set(g, "size", "%.2f,%.2f", (bb.UR.x - bb.LL.x) * k / 72,
		  (bb.UR.y - bb.LL.y) * k / 72);
	return true;
}

static int render(Agraph_t *g, FILE *f, const char *fmt, const char *engine,
		  const char *path, ArError *err)
{
	const ArGvLib *lib = ar_gv();
	GVC_t *gvc;
	int rc = AR_OK;

	if (!strcmp(fmt, "dot") || !strcmp(fmt, "gv"))
		return lib->agwrite(g, f) == 0 ? AR_OK : ar_fail(err,
			AR_EXIT_USAGE, "%s: write failed", path);
	gvc = ar_gv_context();
	if (lib->gvLayout(gvc, g, engine) != 0)
		rc = ar_fail(err, AR_EXIT_INTERNAL, "%s: graphviz layout failed:"
			     " %s", path, gv_msg);
	else if (!strcmp(fmt, "png") && fit_bitmap(g) &&
		 (lib->gvFreeLayout(gvc, g),
		  lib->gvLayout(gvc, g, engine) != 0))
		rc = ar_fail(err, AR_EXIT_INTERNAL, "%s: graphviz layout failed:"
			     " %s", path, gv_msg);
	else if (lib->gvRender(gvc, g, fmt, f) != 0)
		rc = ar_fail(err, AR_EXIT_USAGE, "%s: graphviz cannot render "
			     "'%s' (use .dot, .svg, .png or .pdf): %s", path,
			     fmt, gv_msg);
	lib->gvFreeLayout(gvc, g);
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
	old = ar_gv()->agseterrf(catch_msg);
	rc = render(g, o.f, ext, engine, path, err);
	ar_gv()->agseterrf(old);
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
	ar_gv()->agsafeset(obj, (char *)attr, buf, "");
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

bool ar_gv_training(const ArGraph *g, const ArPlan *p)
{
	for (int s = 0; s < p->nsteps; s++)
		if (g->nodes[p->steps[s]].phase != AR_PHASE_FORWARD)
			return true;
	return false;
}

/* Op classes for an inference plan's colours, by ONNX op name. */
static const char *const conv_ops[] = {"Conv", "ConvTranspose", "ConvInteger",
	"QLinearConv", "MatMul", "MatMulInteger", "QLinearMatMul", "Gemm",
	"PreactConv", "Einsum", "Attention", NULL};
static const char *const norm_ops[] = {"BatchNormalization",
	"LayerNormalization", "InstanceNormalization", "GroupNormalization",
	"LRN", "LpNormalization", "MeanVarianceNormalization",
	"SimplifiedLayerNormalization", "SkipLayerNormalization", NULL};
static const char *const pool_ops[] = {"MaxPool", "AveragePool",
	"GlobalMaxPool", "GlobalAveragePool", "LpPool", "GlobalLpPool",
	"MaxRoiPool", "RoiAlign", "ReduceMax", "ReduceMin", "ReduceMean",
	"ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
	"ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "TopK", NULL};
static const char *const data_ops[] = {"Concat", "Split", "Slice", "Gather",
	"GatherElements", "GatherND", "Scatter", "ScatterElements", "ScatterND",
	"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity",
	"Expand", "Tile", "Pad", "Resize", "Upsample", "DepthToSpace",
	"SpaceToDepth", "Cast", "Shape", "Size", "ConstantOfShape", "Range",
	"NonZero", "Compress", "OneHot", "Where", NULL};
/* Softmax and friends count as elementwise: one value in, one out, per
 * position, as far as memory goes. */

static bool among(const char *op, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(op, list[i]))
			return true;
	return false;
}

ArGvKind ar_gv_kind(const ArGraph *g, bool training, int t)
{
	const ArTensor *x = &g->tensors[t];
	const ArNode *n;

	if (x->kind == AR_TK_INPUT)
		return AR_GV_INPUT;
	if (x->kind == AR_TK_OUTPUT)
		return AR_GV_OUTPUT;
	if (x->producer < 0)
		return training ? AR_GV_FORWARD : AR_GV_OTHER;
	n = &g->nodes[x->producer];
	if (training)
		return n->phase == AR_PHASE_RECOMPUTE ? AR_GV_RECOMPUTE :
		       n->phase == AR_PHASE_BACKWARD ? AR_GV_GRADIENT :
		       n->phase == AR_PHASE_UPDATE ? AR_GV_UPDATE : AR_GV_FORWARD;
	return among(n->op, conv_ops) ? AR_GV_CONV :
	       among(n->op, norm_ops) ? AR_GV_NORM :
	       among(n->op, pool_ops) ? AR_GV_POOL :
	       among(n->op, data_ops) ? AR_GV_DATA : AR_GV_ELEMWISE;
}

/*
 * Fills from ColorBrewer's pastel sets, lighter than the red kept for the
 * peak; a phase's band behind the timeline is a paler tint of the colour
 * of the tensors that phase makes.
 */
static const struct {
	const char *label, *fill;
} kinds[AR_GV_NKINDS] = {
	[AR_GV_INPUT] = {"graph input", "#cab2d6"},
	[AR_GV_OUTPUT] = {"graph output", "#fb9a99"},
	[AR_GV_CONV] = {"conv / matmul", "#a6cee3"},
	[AR_GV_NORM] = {"normalisation", "#b2df8a"},
	[AR_GV_ELEMWISE] = {"elementwise", "#fdbf6f"},
	[AR_GV_POOL] = {"pool / reduce", "#d9d9f3"},
	[AR_GV_DATA] = {"data movement", "#ffff99"},
	[AR_GV_OTHER] = {"other op", "#d9d9d9"},
	[AR_GV_FORWARD] = {"forward activation", "#a6cee3"},
	[AR_GV_RECOMPUTE] = {"recomputed", "#fdbf6f"},
	[AR_GV_GRADIENT] = {"gradient", "#b2df8a"},
	[AR_GV_UPDATE] = {"update", "#d9d9f3"},
};

const char *ar_gv_kind_label(ArGvKind k)
{
	assert((unsigned)k < AR_GV_NKINDS);
	return kinds[k].label;
}

const char *ar_gv_kind_fill(ArGvKind k)
{
	assert((unsigned)k < AR_GV_NKINDS);
	return kinds[k].fill;
}

const char *ar_gv_phase_fill(ArPhase ph)
{
	static const char *const fills[] = {"#eaf3f9", "#fef2e2", "#eef7e6",
					    "#f0f0f8"};
	assert((unsigned)ph < 4);
	return fills[ph];
}

const char *ar_gv_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

void ar_gv_count(char *buf, size_t n, int64_t v)
{
	char digits[32];
	int len = snprintf(digits, sizeof digits, "%lld",
			   (long long)(v < 0 ? -v : v));
	size_t k = 0;

	if (v < 0 && k + 1 < n)
		buf[k++] = '-';
	for (int i = 0; i < len && k + 1 < n; i++) {
		if (i > 0 && (len - i) % 3 == 0 && k + 2 < n)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k < n ? k : n - 1] = '\0';
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
