/*
 * dot.c — the dataflow graph as a Graphviz picture.
 *
 * Ops are rounded boxes numbered by step; tensors are smaller boxes
 * between them, labelled with shape, size and their [offset, end) in the
 * arena and filled with the colour of what made them, as in the timeline
 * (a legend says which).  The peak step and the tensors live there get a
 * red border.  Weights and constants sit outside the arena and would
 * double the picture, so they appear only with --dot-weights.
 *
 * A graph of more than CONDENSE_ABOVE steps would be a strip tens of
 * thousands of pixels long, so it is condensed (dotfold.c): a run of
 * repeated blocks is drawn once, in a cluster saying how many times it
 * runs, and a chain of ops is one box; the tensors between the same boxes
 * become one node that says how many they are.  Where that still leaves
 * too many boxes, each run of steps of one phase is one box whose label
 * sums up its blocks and ops.  --dot-expand draws every step; --dot-focus
 * draws the steps near one step, every one.
 */
#include <stdlib.h>
#include <string.h>

#include "dotfold.h"
#include "emit.h"
#include "gvutil.h"
#include "sanitize.h"

/* Names longer than this are cut: a 200-op picture must stay readable. */
#define NAME_MAX_CHARS 28
#define CONDENSE_ABOVE 80   /* steps */
#define LINE_CHARS 44       /* a box's list of ops wraps here */
#define LIST_STEPS 6        /* steps of a scattered box named one by one */
#define DOT_MARGIN_X 0.06   /* inches each side of a box's words */
#define DOT_MARGIN "0.06,0.03"

typedef struct Dot {
	Agraph_t *gv;
	const ArGraph *g;
	const ArPlan *p;
	const ArEmitInfo *info;
	ArDotView v;
	ArDotMode mode;
	bool training;
	const int *step_of;     /* the view's */
	Agnode_t **boxes;       /* per box */
	Agraph_t **clusters;    /* per block */
	Agnode_t **tnode;       /* per tensor: its node, or NULL */
	bool kind_used[AR_GV_NKINDS];
} Dot;

static const ArNode *node_at_step(const Dot *d, int s)
{
	return &d->g->nodes[d->p->steps[s]];
}

/* The box of tensor t's maker: -1 for none (a graph input, a weight), -2
 * for a step not drawn. */
static int maker_box(const Dot *d, int t)
{
	int n = d->g->tensors[t].producer, s = n >= 0 ? d->step_of[n] : -1;
	return s < 0 ? -1 : d->v.box[s] < 0 ? -2 : d->v.box[s];
}

/* Whether reader step r of tensor t reads it in a later repeat of the
 * block that made it: the block's output fed back to its start. */
static bool loop_read(const Dot *d, int t, int r)
{
	int n = d->g->tensors[t].producer, s = n >= 0 ? d->step_of[n] : -1;
	return s >= 0 && !d->v.segments && d->v.block[s] >= 0 &&
	       d->v.block[r] == d->v.block[s] && d->v.repeat[r] > d->v.repeat[s];
}

/*
 * What tensor t connects in the picture: its maker's box, then its
 * readers' boxes (2 * box, + 1 for a loop read), sorted and unique, then
 * 1 if it is a graph output.  sig has room for nreaders + 2 entries;
 * returns the length, 0 when t is not drawn: a weight without
 * --dot-weights, a tensor whose maker and readers are all off the
 * picture, or in a condensed picture one whose readers are all in its
 * maker's box.
 */
static int connects(const Dot *d, int t, const int *readers, int nreaders,
		    int *sig)
{
	const ArTensor *x = &d->g->tensors[t];
	bool weight = x->kind == AR_TK_WEIGHT || x->kind == AR_TK_CONSTANT;
	int n = 0, from = maker_box(d, t), drawn = from >= 0, across = 0;
	int k, e;

	if (weight ? !d->info->dot_weights : !d->p->slots[t].planned)
		return 0;
	sig[n++] = from;
	for (int i = 0; i < nreaders; i++) {
		int r = readers[i], box = d->v.box[r];
		if (box < 0)
			continue;
		drawn = 1;
		if (box == from && !loop_read(d, t, r))
			continue;
		across = 1;
		e = 2 * box + loop_read(d, t, r);
		/* Insertion into the sorted, unique list after sig[0]. */
		k = n;
		while (k > 1 && sig[k - 1] > e)
			k--;
		if (k > 1 && sig[k - 1] == e)
			continue;
		memmove(sig + k + 1, sig + k, (size_t)(n - k) * sizeof *sig);
		sig[k] = e;
		n++;
	}
	sig[n++] = x->kind == AR_TK_OUTPUT;
	if (!drawn || (d->mode == AR_DOT_CONDENSED && !across &&
		       x->kind != AR_TK_OUTPUT && nreaders > 0))
		return 0;
	return n;
}

static void tensor_label(const Dot *d, Agnode_t *n, int t, int count,
			 int64_t lo, int64_t hi, const char *more)
{
	const ArTensor *x = &d->g->tensors[t];
	const ArSlot *s = &d->p->slots[t];
	char shape[256], size[32], where[160], sizes[80];
	char *name = ar_dot_label(x->name, NAME_MAX_CHARS);

	ar_gv_shape(shape, sizeof shape, x);
	ar_gv_bytes(size, sizeof size, x->bytes > 0 ? x->bytes : 0);
	if (!s->planned) {
		snprintf(where, sizeof where, "%s, not in the arena",
			 ar_kind_name(x->kind));
	} else {
		int64_t end = s->offset + (x->bytes > 0 ? x->bytes : 0);
		char *region = ar_dot_label(d->p->nregions > 0 ?
				d->p->regions[s->region].name : "", 12);
		char from[32], to[32];
		int k;

		ar_gv_count(from, sizeof from, s->offset);
		ar_gv_count(to, sizeof to, end);
		k = snprintf(where, sizeof where, "%s%s[%s, %s)", region,
			     *region ? " " : "", from, to);
		char *other = NULL;
		if (s->alias_of >= 0 || s->inplace_of >= 0)
			other = ar_dot_label(d->g->tensors[s->alias_of >= 0 ?
				s->alias_of : s->inplace_of].name, 16);
		if (s->alias_of >= 0)
			snprintf(where + k, sizeof where - k, " within %s",
				 other);
		else if (s->inplace_of >= 0)
			snprintf(where + k, sizeof where - k, " over %s", other);
		free(other), free(region);
	}
	if (count == 1) {
		ar_gv_set(n, "label", "%s\\n%s %s\\n%s%s", name, shape, size,
			  where, more);
	} else {
		char a[32], b[32];
		ar_gv_bytes(a, sizeof a, lo);
		ar_gv_bytes(b, sizeof b, hi);
		if (lo == hi)
			snprintf(sizes, sizeof sizes, "%s each", a);
		else
			snprintf(sizes, sizeof sizes, "%s to %s", a, b);
		ar_gv_set(n, "label", "%d tensors, %s\\n%s: %s %s\\n%s%s",
			  count, sizes, name, shape, size, where, more);
	}
	free(name);
}

/* The block whose cluster holds a tensor node: the one its maker's and
 * all its readers' boxes are in, or -1 (see connects for sig). */
static int home_block(const Dot *d, const int *sig, int len)
{
	int b = sig[0] >= 0 ? d->v.box_block[sig[0]] : -1;
	for (int i = 1; i < len - 1 && b >= 0; i++)
		if (d->v.box_block[sig[i] / 2] != b)
			return -1;
	return sig[len - 1] ? -1 : b;
}

/* One node for the tensors members[0..count) (alike: the same boxes),
 * in the cluster of block, if any. */
static void tensor_node(Dot *d, const int *members, int count, int block)
{
	int t = members[0];
	const ArTensor *x = &d->g->tensors[t];
	const ArSlot *s = &d->p->slots[t];
	int64_t lo = x->bytes, hi = x->bytes;
	bool peak = false;
	char id[32], more[96] = "";
	Agnode_t *n;

	snprintf(id, sizeof id, "t%d", t);
	n = ar_gv()->agnode(block >= 0 ? d->clusters[block] : d->gv, id, 1);
	for (int i = 0; i < count; i++) {
		const ArTensor *y = &d->g->tensors[members[i]];
		const ArSlot *z = &d->p->slots[members[i]];
		lo = y->bytes < lo ? y->bytes : lo;
		hi = y->bytes > hi ? y->bytes : hi;
		peak |= z->planned && d->p->peak_step >= z->first &&
			d->p->peak_step <= z->last;
		d->tnode[members[i]] = n;
	}
	if (d->mode == AR_DOT_FOCUS && maker_box(d, t) == -2)
		snprintf(more, sizeof more, "\\nmade at step %d, not drawn",
			 d->step_of[x->producer]);
	tensor_label(d, n, t, count, lo, hi, more);
	if (!s->planned) {
		ar_gv_set(n, "style", "dashed");
	} else {
		ArGvKind kind = ar_gv_kind(d->g, d->training, t);
		ar_gv_set(n, "style", "filled");
		ar_gv_set(n, "fillcolor", "%s", ar_gv_kind_fill(kind));
		d->kind_used[kind] = true;
		if (peak) {
			ar_gv_set(n, "color", "red");
			ar_gv_set(n, "penwidth", "2");
		}
	}
	ar_gv_set(n, "shape", x->kind == AR_TK_INPUT ? "invhouse" :
		  x->kind == AR_TK_OUTPUT ? "house" : "box");
	ar_gv_set(n, "class", "tensor");
}

/* "BatchNormalization → Relu → Conv", wrapped, into buf. */
static void op_list(const Dot *d, int b, char *buf, size_t size)
{
	size_t k = 0, line = 0;

	buf[0] = '\0';
	for (int i = d->v.start[b]; i < d->v.start[b + 1] && k + 1 < size;
	     i++) {
		char *op = ar_dot_label(node_at_step(d, d->v.steps[i])->op,
					NAME_MAX_CHARS);
		size_t len = strlen(op);
		if (i > d->v.start[b]) {
			bool wrap = line + len + 5 > LINE_CHARS;
			k += (size_t)snprintf(buf + k, size - k, "%s",
					      wrap ? " \xe2\x86\x92\\n" :
					      " \xe2\x86\x92 ");
			line = wrap ? 0 : line + 3;
		}
		if (k < size)
			k += (size_t)snprintf(buf + k, size - k, "%s", op);
		line += len;
		free(op);
	}
	if (k >= size)
		snprintf(buf + size - 4, 4, "...");
}

typedef struct OpCount {
	const char *op;
	int n;
} OpCount;

static int by_count(const void *a, const void *b)
{
	const OpCount *x = a, *y = b;
	return x->n != y->n ? y->n - x->n : strcmp(x->op, y->op);
}

/*
 * A segment's label: its phase and steps, the repeated blocks in it
 * (their ops), and the commonest other ops with their counts.
 */
static void segment_label(const Dot *d, int b, char *buf, size_t size)
{
	const ArDotView *v = &d->v;
	int first = v->steps[v->start[b]], last = v->steps[v->start[b + 1] - 1];
	int nops = 0, listed = 0, block = -1;
	OpCount *ops = ar_xmalloc(((size_t)(last - first) + 2) * sizeof *ops);
	size_t k;

	k = (size_t)snprintf(buf, size, "%s: steps %d to %d (%d steps)",
			     ar_phase_name(node_at_step(d, first)->phase), first,
			     last, last - first + 1);
	for (int s = first; s <= last; s++) {
		int i = 0;
		if (v->block[s] >= 0) {
			const ArDotBlock *x = &v->blocks[v->block[s]];
			char list[256];
			size_t m = 0;
			if (v->block[s] == block)
				continue;
			block = v->block[s];
			if (++listed > 3)
				continue;
			list[0] = '\0';
			for (int r = 0; r < x->period && r < 5 && m < sizeof list;
			     r++) {
				char *op = ar_dot_label(node_at_step(d,
						x->first + r)->op, NAME_MAX_CHARS);
				m += (size_t)snprintf(list + m, sizeof list - m,
					"%s%s", r ? " \xe2\x86\x92 " : "", op);
				free(op);
			}
			if (k < size)
				k += (size_t)snprintf(buf + k, size - k, "\\n\xc3\x97%d: "
					"%s%s", x->count, list,
					x->period > 5 ? " \xe2\x86\x92 ..." : "");
			continue;
		}
		while (i < nops && strcmp(ops[i].op, node_at_step(d, s)->op))
			i++;
		if (i == nops)
			ops[nops++] = (OpCount){node_at_step(d, s)->op, 0};
		ops[i].n++;
	}
	if (listed > 3 && k < size)
		k += (size_t)snprintf(buf + k, size - k, "\\nand %d more repeated "
				      "blocks", listed - 3);
	qsort(ops, (size_t)nops, sizeof *ops, by_count);
	for (int i = 0; i < nops && i < 4 && k < size; i++) {
		char *op = ar_dot_label(ops[i].op, NAME_MAX_CHARS);
		k += (size_t)snprintf(buf + k, size - k, "%s%s \xc3\x97%d",
				      i ? ", " : "\\n", op, ops[i].n);
		free(op);
	}
	if (nops > 4 && k < size)
		snprintf(buf + k, size - k, ", ...");
	free(ops);
}

static void box_node(Dot *d, int b)
{
	const ArDotView *v = &d->v;
	int first = v->steps[v->start[b]], count = v->start[b + 1] - v->start[b];
	int last = v->steps[v->start[b + 1] - 1], block = v->box_block[b];
	int peak = d->p->peak_step;
	bool has_peak = peak >= 0 && peak < d->p->nsteps && v->box[peak] == b;
	char id[32], what[1024], where[96], live[64] = "";
	Agnode_t *n;

	snprintf(id, sizeof id, "s%d", first);
	/* Made in its block's cluster: Graphviz adds it to the root too. */
	n = d->boxes[b] = ar_gv()->agnode(block >= 0 ? d->clusters[block] :
					  d->gv, id, 1);
	if (has_peak) {
		char lb[32];
		ar_gv_bytes(lb, sizeof lb, d->p->lower_bound);
		snprintf(live, sizeof live, "\\nPEAK at step %d: %s live", peak,
			 lb);
	}
	if (v->segments) {
		segment_label(d, b, what, sizeof what);
		ar_gv_set(n, "label", "%s%s", what, live);
	} else if (count == 1) {
		const ArNode *x = node_at_step(d, first);
		char *op = ar_dot_label(x->op, NAME_MAX_CHARS);
		char *name = ar_dot_label(x->name, NAME_MAX_CHARS);
		/* The peak's own box keeps the words of old: "PEAK: N live". */
		if (has_peak && peak == first)
			snprintf(live, sizeof live, "\\nPEAK: %s",
				 strstr(live, ": ") + 2);
		ar_gv_set(n, "label", "%d: %s\\n%s%s", first, op, name, live);
		free(op), free(name);
	} else {
		int k = 0;
		if (last - first + 1 == count) {
			snprintf(where, sizeof where, "steps %d to %d", first,
				 last);
		} else {
			k = snprintf(where, sizeof where, "steps");
			for (int i = 0; i < count && i < LIST_STEPS; i++)
				k += snprintf(where + k, sizeof where - (size_t)k,
					      "%s %d", i ? "," : "",
					      v->steps[v->start[b] + i]);
			if (count > LIST_STEPS)
				snprintf(where + k, sizeof where - (size_t)k,
					 ", ... (%d)", count);
		}
		op_list(d, b, what, sizeof what);
		ar_gv_set(n, "label", "%s\\n%s%s", where, what, live);
	}
	ar_gv_set(n, "shape", "box");
	ar_gv_set(n, "class", count == 1 ? "op" : "ops");
	if (has_peak) {
		ar_gv_set(n, "style", "rounded,filled,bold");
		ar_gv_set(n, "fillcolor", "#ffd6d6");
		ar_gv_set(n, "color", "red");
		ar_gv_set(n, "penwidth", "3");
	} else {
		ar_gv_set(n, "style", "rounded,filled");
		ar_gv_set(n, "fillcolor", "#eeeeee");
	}
	if (d->mode == AR_DOT_FOCUS && first == d->info->dot_focus && !has_peak) {
		ar_gv_set(n, "color", "#1f78b4");
		ar_gv_set(n, "penwidth", "3");
	}
}

static void block_cluster(Dot *d, int k)
{
	const ArDotBlock *b = &d->v.blocks[k];
	char name[32];
	Agraph_t *c;

	snprintf(name, sizeof name, "cluster_b%d", k);
	c = d->clusters[k] = ar_gv()->agsubg(d->gv, name, 1);
	ar_gv_set(c, "label", "\xc3\x97%d: steps %d to %d, %d repeats of %d "
		  "step%s (the first drawn)", b->count, b->first,
		  b->first + b->period * b->count - 1, b->count, b->period,
		  b->period == 1 ? "" : "s");
	ar_gv_set(c, "class", "block");
	ar_gv_set(c, "style", "rounded,dashed");
	ar_gv_set(c, "color", "#777777");
	ar_gv_set(c, "labeljust", "l");
}

static void edge(Dot *d, Agnode_t *tail, Agnode_t *head, bool loop)
{
	Agedge_t *e = ar_gv()->agedge(d->gv, tail, head, NULL, 0);
	if (e)
		return;
	e = ar_gv()->agedge(d->gv, tail, head, NULL, 1);
	if (loop) {
		/* The value the next repeat starts from: drawn, but not
		 * allowed to pull the layout back up. */
		ar_gv_set(e, "style", "dashed");
		ar_gv_set(e, "color", "#888888");
		ar_gv_set(e, "constraint", "false");
	}
}

/* The edges of a tensor node from what connects it (see connects). */
static void edges(Dot *d, Agnode_t *n, const int *sig, int len)
{
	if (sig[0] >= 0)
		edge(d, d->boxes[sig[0]], n, false);
	for (int i = 1; i < len - 1; i++)
		edge(d, n, d->boxes[sig[i] / 2], sig[i] % 2);
}

typedef struct Sig {
	int t, len;
	const int *sig;
} Sig;

static int cmp_sig(const void *a, const void *b)
{
	const Sig *x = a, *y = b;
	for (int i = 0; i < x->len && i < y->len; i++)
		if (x->sig[i] != y->sig[i])
			return x->sig[i] < y->sig[i] ? -1 : 1;
	if (x->len != y->len)
		return x->len - y->len;
	return x->t - y->t;
}

static bool same_sig(const Sig *x, const Sig *y)
{
	return x->len == y->len &&
	       !memcmp(x->sig, y->sig, (size_t)x->len * sizeof *x->sig);
}

/*
 * The tensor nodes and their edges.  In a condensed picture the tensors
 * that connect the same boxes the same way are one node; otherwise each
 * is its own, in tensor order.
 */
static void tensors(Dot *d)
{
	const ArGraph *g = d->g;
	const ArDotView *v = &d->v;
	int *pool = ar_xmalloc(((size_t)v->rstart[g->ntensors] +
				3 * (size_t)g->ntensors + 1) * sizeof *pool);
	int *members = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *members);
	Sig *sigs = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *sigs);
	int n = 0, used = 0;

	for (int t = 0; t < g->ntensors; t++) {
		int len = connects(d, t, v->readers + v->rstart[t],
				   v->rstart[t + 1] - v->rstart[t], pool + used);
		if (!len)
			continue;
		sigs[n++] = (Sig){t, len, pool + used};
		used += len;
	}
	if (d->mode == AR_DOT_CONDENSED)
		qsort(sigs, (size_t)n, sizeof *sigs, cmp_sig);
	for (int i = 0, j; i < n; i = j) {
		int count = 0;
		for (j = i; j < n && (j == i || (d->mode == AR_DOT_CONDENSED &&
						  same_sig(&sigs[i], &sigs[j])));
		     j++)
			members[count++] = sigs[j].t;
		tensor_node(d, members, count,
			    home_block(d, sigs[i].sig, sigs[i].len));
		edges(d, d->tnode[members[0]], sigs[i].sig, sigs[i].len);
	}
	free(pool), free(members), free(sigs);
}

/* What the fill colours mean, as an HTML-like table node. */
static void legend(Dot *d)
{
	char html[2048];
	size_t k = 0;
	Agnode_t *n = ar_gv()->agnode(d->gv, "legend", 1);
	Agsym_t *label = ar_gv()->agattr(d->gv, AGNODE, "label", NULL);
	char *s;

	/* Room around each cell's words: pango measures hinted glyphs, a
	 * point or two narrower than a viewer may draw them. */
	k += (size_t)snprintf(html + k, sizeof html - k, "<table border=\"0\" "
			      "cellspacing=\"3\" cellpadding=\"4\"><tr>"
			      "<td>%s</td>",
			      d->training ? "colour: the phase that made "
			      "the tensor" : "colour: the kind of op that made "
			      "the tensor");
	for (int i = 0; i < AR_GV_NKINDS && k < sizeof html; i++)
		if (d->kind_used[i])
			k += (size_t)snprintf(html + k, sizeof html - k,
				"<td bgcolor=\"%s\" border=\"1\">%s</td>",
				ar_gv_kind_fill((ArGvKind)i),
				ar_gv_kind_label((ArGvKind)i));
	if (k < sizeof html)
		snprintf(html + k, sizeof html - k, "<td>red border: live at "
			 "the peak</td></tr></table>");
	ar_gv_set(n, "shape", "plaintext");
	ar_gv_set(n, "class", "legend");
	s = ar_gv()->agstrdup_html(d->gv, html);
	ar_gv()->agxset(n, label, s);
	ar_gv()->agstrfree(d->gv, s);
}

static void title(Dot *d)
{
	const ArPlan *p = d->p;
	char *model = ar_dot_label(ar_gv_basename(d->info->model_path ?
				   d->info->model_path : d->g->name), 80);
	char arena[32], exact[32], lb[32], view[256] = "";

	ar_gv_bytes(arena, sizeof arena, p->arena_bytes);
	ar_gv_count(exact, sizeof exact, p->arena_bytes);
	ar_gv_bytes(lb, sizeof lb, p->lower_bound);
	if (d->mode == AR_DOT_CONDENSED && d->v.segments)
		snprintf(view, sizeof view, "\\n%d steps in %d segments, runs of "
			 "steps of one phase (--dot-focus STEP draws the steps "
			 "near one, --dot-expand every step)", p->nsteps,
			 d->v.nboxes);
	else if (d->mode == AR_DOT_CONDENSED)
		snprintf(view, sizeof view, "\\n%d steps in %d boxes: %d run%s of "
			 "repeated blocks drawn once, chains of ops in one box "
			 "(--dot-expand draws every step)", p->nsteps,
			 d->v.nboxes, d->v.nblocks, d->v.nblocks == 1 ? "" : "s");
	else if (d->mode == AR_DOT_FOCUS)
		snprintf(view, sizeof view, "\\nthe %d steps within %d tensor%s "
			 "of step %d (%s), of %d", d->v.nboxes,
			 d->info->dot_radius, d->info->dot_radius == 1 ? "" : "s",
			 d->info->dot_focus, d->info->dot_focus == p->peak_step ?
			 "outlined red: it is the peak" : "outlined blue",
			 p->nsteps);
	ar_gv_set(d->gv, "label", "%s: arena %s (%s B), lower bound %s, peak "
		  "at step %d%s", model, arena, exact, lb, p->peak_step, view);
	free(model);
}

/*
 * Graphviz sizes a box to its label as pango measures it: hinted, a few
 * percent narrower than a viewer draws the same font, and in whichever
 * sans the machine has.  Each box is made at least as wide as its widest
 * line in DejaVu Sans (textwidth.c), the margins and a thick border, so
 * its words stay inside in any common sans.
 */
static void widen(Dot *d)
{
	const ArGvLib *lib = ar_gv();
	for (Agnode_t *n = lib->agfstnode(d->gv); n; n = lib->agnxtnode(d->gv,
									 n)) {
		char *label = lib->agget(n, "label");
		double w;
		if (!label || lib->aghtmlstr(label))
			continue;
		w = ar_gv_label_width(label, atof(lib->agget(n, "fontsize"))) +
		    2 * DOT_MARGIN_X * 72 + 4;
		if (w > 0.75 * 72)      /* Graphviz's default width */
			ar_gv_set(n, "width", "%.3f", w / 72);
	}
}

static Agraph_t *build(const ArGraph *g, const ArPlan *p,
		       const ArEmitInfo *info)
{
	const ArGvLib *lib = ar_gv();
	Dot d = {.gv = lib->agopen("dataflow", lib->Agdirected,
				   ar_gv_ordered()),
		 .g = g, .p = p, .info = info};

	d.mode = info->dot_focus_set ? AR_DOT_FOCUS :
		 !info->dot_expand && p->nsteps > CONDENSE_ABOVE ?
		 AR_DOT_CONDENSED : AR_DOT_FULL;
	d.training = ar_gv_training(g, p);
	ar_dot_view(g, p, d.mode, info->dot_focus, info->dot_radius, &d.v);
	d.step_of = d.v.step_of;
	ar_gv_set(d.gv, "labelloc", "t");
	ar_gv_set(d.gv, "fontname", AR_GV_FONT);
	ar_gv_set(d.gv, "nodesep", "0.2");
	ar_gv_set(d.gv, "ranksep", "0.25");
	lib->agattr(d.gv, AGNODE, "fontname", AR_GV_FONT);
	lib->agattr(d.gv, AGNODE, "fontsize", "10");
	lib->agattr(d.gv, AGNODE, "margin", DOT_MARGIN);
	lib->agattr(d.gv, AGNODE, "height", "0.3");
	lib->agattr(d.gv, AGEDGE, "arrowsize", "0.6");
	title(&d);
	d.boxes = ar_xcalloc((size_t)d.v.nboxes + 1, sizeof *d.boxes);
	d.clusters = ar_xcalloc((size_t)d.v.nblocks + 1, sizeof *d.clusters);
	d.tnode = ar_xcalloc((size_t)g->ntensors + 1, sizeof *d.tnode);
	for (int k = 0; k < d.v.nblocks && !d.v.segments; k++)
		block_cluster(&d, k);
	for (int b = 0; b < d.v.nboxes; b++)
		box_node(&d, b);
	tensors(&d);
	widen(&d);
	legend(&d);
	free(d.boxes), free(d.clusters), free(d.tnode);
	ar_dot_view_free(&d.v);
	return d.gv;
}

int ar_write_dot(const char *path, const ArGraph *g, const ArPlan *p,
		 const ArEmitInfo *info, ArOutFile *out, ArError *err)
{
	Agraph_t *gv;
	int rc;

	if (info->dot_focus_set && (info->dot_focus < 0 ||
				    info->dot_focus >= p->nsteps))
		return ar_fail(err, AR_EXIT_USAGE, "%s: --dot-focus %d: the "
			       "plan has steps 0 to %d", path, info->dot_focus,
			       p->nsteps - 1);
	if ((rc = ar_gv_load(path, err)) != AR_OK)
		return rc;
	gv = build(g, p, info);
	rc = ar_gv_write(gv, path, "dot", out, err);
	ar_gv()->agclose(gv);
	return rc;
}
