/*
 * fixture_plan.h — a small graph with a hand-made plan for the writers'
 * tests, independent of the planner.
 *
 * Conv -> Relu (in place) -> Reshape (a view) -> Gemm -> Add, with names
 * chosen to break naive writers: a comment terminator and an #include in
 * one, quotes, backslashes, a newline and a trigraph in another, and two
 * graph inputs whose C identifiers collide.  Offsets (align 16):
 *
 *   tensor     steps  bytes  [offset, end)
 *   in:0       0-0      768  [48, 816)
 *   in/0       0-4       40  [0, 40)
 *   c1         0-1     1024  [816, 1840)
 *   r1         1-2     1024  [816, 1840)   inplace_of c1
 *   v1         2-3     1024  [816, 1840)   alias_of r1
 *   evil       3-4       40  [48, 88)
 *   y          4-4       40  [96, 136)
 *
 * Step 0 holds 48 + 768 + 1024 = 1840 padded bytes, the arena's size.
 *
 * fixture_tiered lays the same graph out over three memories, two of whose
 * names collide as C identifiers, the last holding the weights (10704
 * padded bytes) at its start:
 *
 *   region         capacity  bandwidth  tensors [offset, end)       used
 *   0 "fast.mem"        256  5e10       in/0 [0, 40), evil [48, 88),
 *                                       y [96, 136)                   144
 *   1 "fast-mem"       1024  1e10       in:0 [0, 768)                 768
 *   2 "slow"          65536  not given  c1, r1, v1 [10704, 11728)   11728
 */
#ifndef ARENAC_FIXTURE_PLAN_H
#define ARENAC_FIXTURE_PLAN_H

#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "plan.h"
#include "strpool.h"

#define FX_EVIL "*/ #include <x>"
#define FX_NASTY "y\"\\\n\?\?/"

enum { FX_X, FX_IN2, FX_W, FX_B, FX_C1, FX_R1, FX_SHAPE, FX_V1, FX_WF,
       FX_EVILT, FX_Y, FX_NT };

typedef struct Fixture {
	ArGraph *g;
	ArPlan p;
	int steps[5];
	ArSlot slots[FX_NT];
	ArRegion regions[3];
} Fixture;

static inline void fx_tensor(ArGraph *g, const char *name, ArTensorKind k,
			     ArDType dt, int rank, const int64_t *dims)
{
	int id = ar_graph_add_tensor(g, name);
	ArTensor *t = &g->tensors[id];
	t->kind = k;
	t->dtype = dt;
	t->rank = rank;
	memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
	ar_tensor_set_bytes(t, NULL);
}

static inline ArAttr *fx_attr(ArGraph *g, ArNode *n, const char *name,
			      ArAttrType type)
{
	ArAttr *a;
	/* Room doubles at powers of two: tests add 66,000 attributes, and
	 * growing by one each time costs minutes under AddressSanitizer. */
	if (!(n->nattrs & (n->nattrs - 1)))
		n->attrs = ar_xrealloc(n->attrs, (size_t)(n->nattrs ?
						2 * n->nattrs : 1) * sizeof *a);
	a = &n->attrs[n->nattrs++];
	memset(a, 0, sizeof *a);
	a->name = ar_strpool_intern(&g->strs, name);
	a->type = type;
	return a;
}

static inline void fx_ints(ArGraph *g, ArNode *n, const char *name, int cnt,
			   const int64_t *v)
{
	ArAttr *a = fx_attr(g, n, name, AR_ATTR_INTS);
	a->ints = ar_xmalloc((size_t)cnt * sizeof *v);
	memcpy(a->ints, v, (size_t)cnt * sizeof *v);
	a->nints = cnt;
}

static inline void fx_node(ArGraph *g, const char *name, const char *op,
			   const int *in, int nin, int out)
{
	int id = ar_graph_add_node(g, name, op, "");
	ar_node_set_io(&g->nodes[id], in, nin, &out, 1);
	g->tensors[out].producer = id;
}

static inline void fx_slot(Fixture *fx, int t, int first, int last,
			   int64_t off)
{
	ArSlot *s = &fx->slots[t];
	s->planned = true;
	s->first = first;
	s->last = last;
	s->offset = off;
}

static inline void fixture_init(Fixture *fx)
{
	static const int64_t d_x[] = {1, 3, 8, 8}, d_w[] = {4, 3, 3, 3},
		d_b[] = {4}, d_c[] = {1, 4, 8, 8}, d_s[] = {2},
		d_v[] = {1, 256}, d_wf[] = {10, 256}, d_y[] = {1, 10},
		k33[] = {3, 3}, pads[] = {1, 1, 1, 1};
	ArGraph *g = ar_graph_new("fixture \"*/ graph");
	ArAttr *a;

	memset(fx, 0, sizeof *fx);
	fx->g = g;
	fx_tensor(g, "in:0", AR_TK_INPUT, AR_DT_FLOAT, 4, d_x);
	fx_tensor(g, "in/0", AR_TK_INPUT, AR_DT_FLOAT, 2, d_y);
	fx_tensor(g, "w", AR_TK_WEIGHT, AR_DT_FLOAT, 4, d_w);
	fx_tensor(g, "b", AR_TK_WEIGHT, AR_DT_FLOAT, 1, d_b);
	fx_tensor(g, "c1", AR_TK_ACTIVATION, AR_DT_FLOAT, 4, d_c);
	fx_tensor(g, "r1", AR_TK_ACTIVATION, AR_DT_FLOAT, 4, d_c);
	fx_tensor(g, "shape", AR_TK_CONSTANT, AR_DT_INT64, 1, d_s);
	fx_tensor(g, "v1", AR_TK_ACTIVATION, AR_DT_FLOAT, 2, d_v);
	fx_tensor(g, "wf", AR_TK_WEIGHT, AR_DT_FLOAT, 2, d_wf);
	fx_tensor(g, FX_EVIL, AR_TK_ACTIVATION, AR_DT_FLOAT, 2, d_y);
	fx_tensor(g, FX_NASTY, AR_TK_OUTPUT, AR_DT_FLOAT, 2, d_y);
	g->inputs = ar_xmalloc(2 * sizeof(int));
	g->inputs[0] = FX_X;
	g->inputs[1] = FX_IN2;
	g->ninputs = 2;
	g->outputs = ar_xmalloc(sizeof(int));
	g->outputs[0] = FX_Y;
	g->noutputs = 1;

	fx_node(g, "conv", "Conv", (int[]){FX_X, FX_W, FX_B}, 3, FX_C1);
	fx_ints(g, &g->nodes[0], "kernel_shape", 2, k33);
	fx_ints(g, &g->nodes[0], "pads", 4, pads);
	fx_attr(g, &g->nodes[0], "group", AR_ATTR_INT)->i = 1;
	fx_attr(g, &g->nodes[0], "auto_pad", AR_ATTR_STRING)->s =
		ar_xstrdup("NOTSET");
	fx_node(g, "relu", "Relu", (int[]){FX_C1}, 1, FX_R1);
	fx_node(g, "flatten", "Reshape", (int[]){FX_R1, FX_SHAPE}, 2, FX_V1);
	fx_node(g, "fc", "Gemm", (int[]){FX_V1, FX_WF}, 2, FX_EVILT);
	fx_attr(g, &g->nodes[3], "alpha", AR_ATTR_FLOAT)->f = 0.5f;
	fx_attr(g, &g->nodes[3], "transB", AR_ATTR_INT)->i = 1;
	fx_node(g, "add */", "Add", (int[]){FX_EVILT, FX_IN2}, 2, FX_Y);
	a = fx_attr(g, &g->nodes[4], "note", AR_ATTR_STRING);
	a->s = ar_xstrdup(FX_NASTY);

	for (int i = 0; i < FX_NT; i++)
		fx->slots[i] = (ArSlot){.first = -1, .last = -1, .offset = -1,
					.alias_of = -1, .inplace_of = -1};
	fx_slot(fx, FX_X, 0, 0, 48);
	fx_slot(fx, FX_IN2, 0, 4, 0);
	fx_slot(fx, FX_C1, 0, 1, 816);
	fx_slot(fx, FX_R1, 1, 2, 816);
	fx->slots[FX_R1].inplace_of = FX_C1;
	fx_slot(fx, FX_V1, 2, 3, 816);
	fx->slots[FX_V1].alias_of = FX_R1;
	fx_slot(fx, FX_EVILT, 3, 4, 48);
	fx_slot(fx, FX_Y, 4, 4, 96);

	for (int i = 0; i < 5; i++)
		fx->steps[i] = i;
	fx->p.nsteps = 5;
	fx->p.steps = fx->steps;
	fx->p.ntensors = FX_NT;
	fx->p.slots = fx->slots;
	fx->p.align = 16;
	fx->p.arena_bytes = 1840;
	fx->p.lower_bound = 1840;
	fx->p.file_order_peak = 1840;
	fx->p.weights_bytes = 432 + 16 + 16 + 10240;
	fx->p.peak_step = 0;
	fx->p.algorithm = "hand */ made";
	fx->p.optimal = true;
	ar_plan_facts(g, &fx->p);
}

static inline void fx_region(Fixture *fx, int r, const char *name,
			     int64_t capacity, double bandwidth,
			     int64_t weights, int64_t used)
{
	ArRegion *x = &fx->regions[r];
	x->name = (char *)name;
	x->capacity = capacity;
	x->bandwidth = bandwidth;
	x->weights_bytes = weights;
	x->used_bytes = used;
	x->lower_bound = used - weights;
	x->traffic_bytes = 1000 * (r + 1);
	x->optimal = true;
}

static inline void fixture_tiered(Fixture *fx)
{
	static const int place[][3] = {
		{FX_IN2, 0, 0}, {FX_EVILT, 0, 48}, {FX_Y, 0, 96},
		{FX_X, 1, 0}, {FX_C1, 2, 10704}, {FX_R1, 2, 10704},
		{FX_V1, 2, 10704},
	};

	fixture_init(fx);
	for (size_t i = 0; i < sizeof place / sizeof place[0]; i++) {
		fx->slots[place[i][0]].region = place[i][1];
		fx->slots[place[i][0]].offset = place[i][2];
	}
	fx_region(fx, 0, "fast.mem", 256, 5e10, 0, 144);
	fx_region(fx, 1, "fast-mem", 1024, 1e10, 0, 768);
	fx_region(fx, 2, "slow", 65536, 0, 10704, 11728);
	fx->p.nregions = 3;
	fx->p.regions = fx->regions;
	fx->p.arena_bytes = 144 + 768 + 11728;
	fx->p.algorithm = "hand-made tiers";
	fx->p.placement_optimal = true;
	ar_plan_facts(fx->g, &fx->p);
}

/*
 * fixture_io lays the graph out with --io separate: in:0, in/0 and y are
 * the caller's buffers 0, 1 and 2; the rest in 1072 bytes (step 3: v1's
 * 1024 and evil's 48 padded).
 *
 *   tensor     steps  bytes  [offset, end)
 *   c1, r1, v1 0-3     1024  [0, 1024)
 *   evil       3-4       40  [1024, 1064)
 */
static inline void fixture_io(Fixture *fx)
{
	static const int io[] = {FX_X, FX_IN2, FX_Y};

	fixture_init(fx);
	for (size_t i = 0; i < sizeof io / sizeof io[0]; i++)
		fx->slots[io[i]] = (ArSlot){.first = -1, .last = -1,
					    .offset = -1, .alias_of = -1,
					    .inplace_of = -1};
	fx->slots[FX_C1].offset = fx->slots[FX_R1].offset = 0;
	fx->slots[FX_V1].offset = 0;
	fx->slots[FX_EVILT].offset = 1024;
	fx->p.io_separate = true;
	fx->p.arena_bytes = fx->p.lower_bound = 1072;
	fx->p.peak_step = 3;
	fx->p.algorithm = "hand-made, io apart";
	ar_plan_facts(fx->g, &fx->p);
}

static inline void fixture_free(Fixture *fx)
{
	free(fx->p.noop);
	ar_graph_free(fx->g);
}

#endif
