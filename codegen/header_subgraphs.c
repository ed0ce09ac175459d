/*
 * header_subgraphs.c — what workspaces and subgraphs add to the header:
 * the steps' workspace columns, the subgraph table and its type, its
 * macros, and its lines in the opening comment.
 *
 * A header whose plan has neither is byte for byte what it was before
 * they existed, so these parts appear only when some step has a
 * workspace (a kernel's scratch, a subgraph region) or some node runs
 * subgraphs; $_HAS_SCRATCH says which layout of the step type a header
 * has.  Each planned subgraph has a tensor and a step table of the model
 * graph's types (header_tables.c writes them), with absolute offsets, so
 * a runtime walks a branch or a loop body as it walks the model: pick
 * the table, run its steps.  What it does around them (pick a branch,
 * copy carried values) is in the comment, written here.
 */
#include <stdlib.h>

#include "header_parts.h"
#include "sanitize.h"

static bool plan_scratch(const ArGraph *g, const ArPlan *p)
{
	for (int i = 0; i < g->nnodes; i++)
		if (ar_plan_scratch(p, i))
			return true;
	for (int k = 0; k < p->nsubs; k++)
		if (p->subs[k].plan && plan_scratch(p->subs[k].g,
						    p->subs[k].plan))
			return true;
	return false;
}

bool hdr_any_scratch(const Hdr *h)
{
	return plan_scratch(h->g, h->p);
}

void hdr_write_sub_macros(const Hdr *h)
{
	/* A step's workspace whichever layout its type has (ARENAC_RT_BIND
	 * reads it so). */
	if (!h->work) {
		hdr_tmpl(h, "#define $_STEP_SCRATCH_OFFSET(s) $_NOT_IN_ARENA\n"
			 "#define $_STEP_SCRATCH_BYTES(s) 0u\n");
		return;
	}
	hdr_tmpl(h, "#define $_STEP_SCRATCH_OFFSET(s) ((s)->scratch_offset)\n"
		 "#define $_STEP_SCRATCH_BYTES(s) ((s)->scratch_bytes)\n");
	hdr_tmpl(h, "#define $_HAS_SCRATCH 1\n");
	if (h->nsubs)
		fprintf(h->f, "#define %s_HAS_SUBGRAPHS 1\n"
			"#define %s_NUM_SUBGRAPHS %d\n"
			"#define %s_SUBGRAPH_BRANCH 0\n"
			"#define %s_SUBGRAPH_LOOP_BODY 1\n", h->up, h->up,
			h->nsubs, h->up, h->up);
}

void hdr_write_step_fields(const Hdr *h)
{
	if (!h->work)
		return;
	hdr_tmpl(h, "\tuint32_t scratch_offset;  /* workspace while it runs: "
		 "its kernel's scratch, or\n"
		 "\t                             the region its subgraphs run "
		 "in; $_NOT_IN_ARENA: none */\n"
		 "\tuint32_t scratch_bytes;\n");
	if (h->nreg)
		hdr_tmpl(h, "\tuint8_t scratch_region;   /* index into @_regions "
			 "*/\n");
	hdr_tmpl(h, "\tconst int32_t *subgraphs; /* indices into @_subgraphs "
		 "of those it runs */\n"
		 "\tuint16_t nsubgraphs;\n");
}

void hdr_write_sub_types(const Hdr *h)
{
	if (!h->nsubs)
		return;
	hdr_tmpl(h,
		 "typedef struct @_subgraph {\n"
		 "\tconst char *name;         /* its graph's name */\n"
		 "\tconst char *attribute;    /* then_branch, else_branch or "
		 "body */\n"
		 "\tint32_t parent;           /* the subgraph whose step runs "
		 "it; -1: the model graph */\n"
		 "\tint32_t step;             /* that step, in the parent's "
		 "steps */\n"
		 "\tuint8_t kind;             /* $_SUBGRAPH_BRANCH, or "
		 "$_SUBGRAPH_LOOP_BODY (Loop, Scan) */\n"
		 "\tuint8_t planned;          /* 0: no tables; it never runs, "
		 "or is not planned\n"
		 "\t                             (the comment at the top says "
		 "which) */\n"
		 "\tuint32_t arena_bytes;     /* its own arena, at its step's "
		 "scratch_offset */\n"
		 "\tconst @_tensor *tensors;  /* offsets absolute, like "
		 "@_tensors' */\n"
		 "\tint32_t ntensors;\n"
		 "\tconst @_step *steps;      /* in execution order; tensor "
		 "indices into tensors */\n"
		 "\tint32_t nsteps;\n"
		 "\tconst int32_t *inputs;    /* its graph inputs (a Loop "
		 "body's: iteration, condition,\n"
		 "\t                             carried values) */\n"
		 "\tuint16_t ninputs;\n"
		 "\tconst int32_t *outputs;   /* its graph outputs (a Loop "
		 "body's: condition, carried\n"
		 "\t                             values, scan slices) */\n"
		 "\tuint16_t noutputs;\n"
		 "} @_subgraph;\n\n");
}

/* The ids of the subgraphs each step runs, one pool per table set. */
void hdr_write_step_sub_pool(const Hdr *h, ArText *out)
{
	int k = 0, first = h->sub ? h->sub_id + 1 : 0;
	hdr_open_pool(h, out, "int32_t", "step_subgraphs");
	for (int s = 0; s < h->p->nsteps; s++)
		for (int j = 0; j < h->p->nsubs; j++)
			if (h->p->subs[j].node == h->p->steps[s]) {
				hdr_pool_sep(out, &k);
				ar_text_printf(out, "%d,", ar_plan_sub_id(h->p, first,
								    j));
			}
	hdr_pool_sep(out, &k);
	ar_text_puts(out, "-1\n};\n\n");
}

void hdr_write_step_work(const Hdr *h, ArText *out, int s)
{
	const ArScratch *x = ar_plan_scratch(h->p, h->p->steps[s]);
	int n = 0, at = 0;

	for (int t = 0; t < s; t++)
		for (int j = 0; j < h->p->nsubs; j++)
			at += h->p->subs[j].node == h->p->steps[t];
	for (int j = 0; j < h->p->nsubs; j++)
		n += h->p->subs[j].node == h->p->steps[s];
	if (x)
		ar_text_printf(out, ", %lldu, %lldu", (long long)((h->sub ?
			h->sub->base : 0) + x->offset), (long long)x->bytes);
	else
		ar_text_printf(out, ", %s_NOT_IN_ARENA, 0u", h->up);
	if (h->nreg)
		ar_text_printf(out, ", %d", x ? (h->sub ? h->sub->region :
					   x->region) : 0);
	ar_text_printf(out, ", %s_step_subgraphs + %d, %d", h->tab, at, n);
}

static void write_sub_row(const ArSubPlan *sp, int id, int parent, void *ctx)
{
	const Hdr *h = ctx;
	ArText out = ar_text_on(h->f);
	int step = -1;

	for (int s = 0; s < sp->up_p->nsteps; s++)
		if (sp->up_p->steps[s] == sp->node)
			step = s;
	ar_text_printf(&out, "\t/* %d */ {", id);
	hdr_name(h, &out, sp->g->name);
	ar_text_puts(&out, ", ");
	hdr_str(&out, sp->attr);
	ar_text_printf(&out, ", %d, %d, %s_SUBGRAPH_%s, %d, ", parent, step, h->up,
		sp->loop ? "LOOP_BODY" : "BRANCH", sp->plan != NULL);
	if (sp->plan)
		ar_text_printf(&out, "%lldu, %s_sg%d_tensors, %d, %s_sg%d_steps, %d, "
			"%s_sg%d_inputs, %d, %s_sg%d_outputs, %d},\n",
			(long long)sp->plan->arena_bytes, h->lo, id,
			sp->g->ntensors, h->lo, id, sp->plan->nsteps, h->lo, id,
			sp->g->ninputs, h->lo, id, sp->g->noutputs);
	else
		ar_text_puts(&out, "0u, 0, 0, 0, 0, 0, 0, 0, 0},\n");
	ar_text_close(&out);
}

void hdr_write_subgraphs(const Hdr *h)
{
	hdr_tmpl(h, "/* Depth first: each subgraph before those nested in it. "
		 "*/\nconst @_subgraph @_subgraphs[$_NUM_SUBGRAPHS + 1] = {\n");
	ar_plan_walk_subs(h->p, write_sub_row, (void *)h);
	fputs("\t{0, 0, -1, -1, 0, 0, 0u, 0, 0, 0, 0, 0, 0, 0, 0}\n};\n\n",
	      h->f);
}

/* The opening comment's account of them: nothing left out unsaid. */
static void intro_unplanned(const ArSubPlan *sp, int id, int parent,
			    void *ctx)
{
	FILE *f = ctx;
	(void)parent;
	if (sp->plan || sp->never_runs)
		return;
	fprintf(f, " *              NOT PLANNED: subgraph %d, '", id);
	ar_c_comment(f, sp->attr);
	fputs("' of node '", f);
	ar_c_comment(f, sp->up_g->nodes[sp->node].name);
	fputs("': ", f);
	ar_c_comment(f, sp->why);
	fputs("\n", f);
}

void hdr_write_sub_intro(const Hdr *h)
{
	ArSubCounts c;

	if (!h->nsubs)
		return;
	ar_plan_sub_counts(h->p, &c);
	fprintf(h->f, " * subgraphs:   %d (%s_subgraphs), %d planned, each in "
		"the workspace of its step\n", c.total, h->lo, c.planned);
	if (c.never_run)
		fprintf(h->f, " *              %d never run%s: a constant If "
			"condition skips them\n", c.never_run,
			c.never_run == 1 ? "s" : "");
	ar_plan_walk_subs(h->p, intro_unplanned, h->f);
}

/* How a runtime runs a step with a workspace or subgraphs. */
const char *hdr_sub_use(const Hdr *h)
{
	if (!h->work)
		return "";
	if (!h->nsubs)
		return "A step whose scratch_bytes is not 0 has that many bytes "
		       "of workspace at scratch_offset while it runs, for its "
		       "kernel alone.  ";
	return "A step whose scratch_bytes is not 0 has that many bytes of "
	       "workspace at scratch_offset while it runs: its kernel's, or "
	       "the region the subgraphs it runs (@_subgraphs[subgraphs[k]]) "
	       "use.  A planned subgraph has tables of the same types, with "
	       "absolute offsets; its tensors that are not live in its own "
	       "steps (first = -1) are the enclosing graph's (captures, an If "
	       "branch's outputs) at their place.  If: run the steps of the "
	       "branch the condition picks (then_branch when true); its "
	       "outputs are the node's, so copy an output that is not already "
	       "at the node output's place (a capture, a constant) there.  "
	       "Loop: copy the node's carried inputs (2, 3, ...) to the body's "
	       "inputs 2, 3, ...; per iteration write its number to body "
	       "input 0 and the condition to input 1, run the body's steps, "
	       "copy its scan outputs (past the carried ones) into the node's "
	       "at that iteration's slice, then body output j onto body input "
	       "j + 1, in order (the plan keeps that safe; nothing to do when "
	       "the output is that input); after the last, copy body inputs "
	       "2, 3, ... to the node's outputs.  Scan goes the same way with "
	       "its states: body inputs and outputs 0 .. states - 1 carry "
	       "them, output j back onto input j, and its scan inputs' slices "
	       "are written to the body inputs after them each iteration.  ";
}
