/*
 * step.c — the training step as a graph: forward, loss, backward, update.
 *
 * One graph per checkpoint selection, from the training model (train.c):
 *
 *   forward nodes, the loss, then per forward node in reverse a gradient
 *   node (after the recompute nodes its saved inputs need),
 *   GradAccumulate where several consumers contribute to one gradient,
 *   and one optimizer update per trained parameter.
 *
 * Its node order is its step order: recompute nodes sit right before the
 * first backward step that needs them, which is what makes them pay off.
 * A recomputed value is a new tensor ("x.recompute") read by backward steps
 * in place of x, so x itself dies after its last forward use.
 *
 * A gradient step reads what its rule says the gradients of its inputs
 * need (ar_grad_reads), then the gradients flowing into its outputs; a
 * loss's gradient step has none flowing in.
 *
 * With loss_chunks N > 1 the head (the product giving the logits), its
 * views and the loss run as N chunks of the logits' rows instead, each
 * chunk's logits living only while that chunk is computed, as chunked or
 * fused linear-cross-entropy kernels do:
 *   LogitsChunk (x, W) -> logits.chunkK, CrossEntropyChunk (logits.chunkK,
 *   label) -> loss.chunkK and its log-probabilities (loss.c, --loss-dtype),
 *   CrossEntropyChunkGrad (those, label) -> logits.chunkK.grad,
 *   LogitsChunkGradInput (W, dlogits, dx so far) -> dx,
 *   LogitsChunkGradWeight (x, dlogits, dW so far) -> dW,
 * the last two adding into one buffer (in place) chunk after chunk, and a
 * Sum of the chunks' losses.  The head's nodes and the logits are then
 * dropped from the step graph, whose tensor and node ids shift (the trace
 * maps them).
 *
 * The optimizer update reads the parameter, its gradient, its fp32 master
 * copy (mixed precision) and its state, and writes "W.next": W rewritten
 * in place (the planner gives it W's storage).
 */
#include "graph_copy.h"
#include "optim.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t bit(int i)
{
	return i < 32 ? 1u << i : 0;
}

static char *join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = ar_xmalloc(na + nb + 1);
	memcpy(s, a, na);
	memcpy(s + na, b, nb + 1);
	return s;
}

/* Which op a new node runs: domain, name and the domain's opset. */
typedef struct OpRef {
	const char *domain;
	const char *op;
	int64_t opset;
} OpRef;

/* An op of the training step's own domain (gradients, sums, updates). */
static OpRef training_op(const char *op)
{
	return (OpRef){AR_TRAIN_DOMAIN, op, 1};
}

typedef struct Build {
	const ArTrainModel *m;
	const bool *resident;
	ArGraph *g;
	int *nsrc, *tsrc;       /* the trace, grown with g (see train.h) */
	int capn, capt;         /* their room, doubled as needed */
	int *redo;      /* per base tensor: its recomputed copy, or -1 */
	int *dx;        /* per base tensor: its (summed) gradient, or -1 */
	int **parts;    /* per base tensor: partial gradients so far */
	int *nparts;
	int shared[AR_MAX_STATES];      /* the optimizer's, or -1 */
	bool *updated;                  /* per base tensor: its update made */
} Build;

/* Room for index i in *a of *cap entries. */
static void room(int **a, int *cap, int i)
{
	if (i < *cap)
		return;
	while (*cap <= i)
		*cap = *cap ? 2 * *cap : 64;
	*a = ar_xrealloc(*a, (size_t)*cap * sizeof **a);
}

/* A new tensor named like's name + suffix, shaped like it, in dtype dt
 * (AR_DT_UNDEFINED: like's), recorded as stemming from like's source. */
static int tensor_typed(Build *b, int like, const char *suffix,
			ArTensorKind kind, ArDType dt)
{
	ArGraph *g = b->g;
	char *name = join(g->tensors[like].name, suffix);
	int t = ar_graph_add_tensor(g, name);
	const ArTensor *l = &g->tensors[like];
	ArTensor *x = &g->tensors[t];
	free(name);
	x->dtype = dt == AR_DT_UNDEFINED ? l->dtype : dt;
	x->rank = l->rank;
	memcpy(x->dims, l->dims, sizeof x->dims);
	x->bytes = l->bytes;
	if (x->dtype != l->dtype)
		x->bytes = ar_numel(x) * (int64_t)ar_dtype_size(x->dtype);
	x->kind = kind;
	room(&b->tsrc, &b->capt, t);
	b->tsrc[t] = b->tsrc[like];
	return t;
}

static int tensor_like(Build *b, int like, const char *suffix,
		       ArTensorKind kind)
{
	return tensor_typed(b, like, suffix, kind, AR_DT_UNDEFINED);
}

static int step(Build *b, int src, const char *name, const char *suffix,
		OpRef op, ArPhase phase, const int *in, int nin, const int *out,
		int nout)
{
	char *nm = join(name, suffix);
	int id = ar_graph_add_node(b->g, nm, op.op, op.domain);
	ArNode *n = &b->g->nodes[id];
	free(nm);
	ar_node_set_io(n, in, nin, out, nout);
	n->phase = phase;
	n->opset = op.opset;
	for (int i = 0; i < nout; i++)
		if (out[i] >= 0)
			b->g->tensors[out[i]].producer = id;
	room(&b->nsrc, &b->capn, id);
	b->nsrc[id] = src;
	return id;
}

/* Whether a backward step may read t as it is (no recompute). */
static bool available(const Build *b, int t)
{
	return b->m->base->tensors[t].kind != AR_TK_ACTIVATION ||
	       ar_train_resident(b->m, b->resident, t);
}

/* With offload_activations, a resident activation lives in the slower
 * memory from its last forward use to the backward pass. */
static bool offloaded(const Build *b, int t)
{
	return b->m->spec.offload_activations &&
	       b->m->base->tensors[t].kind == AR_TK_ACTIVATION &&
	       (!b->resident || b->resident[t]);
}

/* An offloaded t fetched back (once), right before its first use in the
 * backward pass. */
static int fetch(Build *b, int t)
{
	int x;
	if (b->redo[t] >= 0)
		return b->redo[t];
	x = tensor_like(b, t, ".fetch", AR_TK_ACTIVATION);
	step(b, b->m->base->tensors[t].producer, b->g->tensors[t].name,
	     ".fetch", (OpRef){AR_PARALLEL_DOMAIN, "Fetch", 1},
	     AR_PHASE_RECOMPUTE, NULL, 0, &x, 1);
	return b->redo[t] = x;
}

/* Whether base tensor u has a value a step may read now. */
static bool has_value(const Build *b, int u)
{
	return available(b, u) || b->redo[u] >= 0;
}

/* The value of base tensor u as a step reads it now: u, its copy fetched
 * back from the slower memory, or its recompute (-1 while there is
 * none). */
static int value_of(Build *b, int u)
{
	if (u < 0)
		return -1;
	if (available(b, u))
		return offloaded(b, u) ? fetch(b, u) : u;
	return b->redo[u];
}

/* Emits the recompute of the node producing t, whose inputs all have a
 * value by now; every output gets its recomputed copy. */
static void recompute(Build *b, int t)
{
	int p = b->m->base->tensors[t].producer, *in, *out, id;
	const ArNode *src = &b->m->base->nodes[p];
	in = ar_xmalloc(((size_t)src->ninputs + 1) * sizeof(int));
	out = ar_xmalloc(((size_t)src->noutputs + 1) * sizeof(int));
	for (int j = 0; j < src->ninputs; j++)
		in[j] = value_of(b, src->inputs[j]);
	for (int j = 0; j < src->noutputs; j++) {
		int o = src->outputs[j];
		out[j] = o < 0 ? -1 : tensor_like(b, o, ".recompute",
						  AR_TK_ACTIVATION);
		if (o >= 0)
			b->redo[o] = out[j];
	}
	id = step(b, p, src->name, ".recompute",
		  (OpRef){src->domain, src->op, src->opset}, AR_PHASE_RECOMPUTE,
		  in, src->ninputs, out, src->noutputs);
	b->g->nodes[id].nexplicit = src->nexplicit;
	free(in);
	free(out);
}

/*
 * The value of base tensor t a backward step reads: t, its copy fetched
 * back from the slower memory, or a recompute of it emitted now, after
 * the recomputes its inputs need (inputs in order,
 * depth first).  An explicit stack of (tensor, next input), not
 * recursion: a chain freed whole is as deep as the network.
 */
static int resolve(Build *b, int t)
{
	int *tensor, *next, n = 0, cap = 16;

	if (has_value(b, t))
		return value_of(b, t);
	tensor = ar_xmalloc((size_t)cap * sizeof *tensor);
	next = ar_xmalloc((size_t)cap * sizeof *next);
	tensor[n] = t, next[n++] = 0;
	while (n > 0) {
		int x = tensor[n - 1];
		const ArNode *src =
			&b->m->base->nodes[b->m->base->tensors[x].producer];
		int u;
		if (next[n - 1] == src->ninputs) {
			recompute(b, x);
			n--;
			continue;
		}
		u = src->inputs[next[n - 1]++];
		if (u < 0 || has_value(b, u))
			continue;
		if (n == cap) {
			cap *= 2;
			tensor = ar_xrealloc(tensor, (size_t)cap * sizeof *tensor);
			next = ar_xrealloc(next, (size_t)cap * sizeof *next);
		}
		tensor[n] = u, next[n++] = 0;
	}
	free(tensor);
	free(next);
	return b->redo[t];
}

/* A parameter's whole gradient is persistent, but with
 * --optimizer-in-backward, where the update right after it frees it. */
static ArTensorKind param_grad_kind(const Build *b)
{
	return b->m->spec.optim_in_backward ? AR_TK_ACTIVATION : AR_TK_WEIGHT;
}

static ArTensorKind grad_kind(const Build *b, int t)
{
	return b->m->param[t] && b->m->ncontrib[t] == 1 ? param_grad_kind(b)
						       : AR_TK_ACTIVATION;
}

/* A gradient tensor of base tensor t: a parameter's whole one in
 * --grad-dtype (Megatron-LM's main_grad: the backward adds into it in its
 * format), any other in t's. */
static int grad_tensor(Build *b, int t, const char *suffix,
		       ArTensorKind kind)
{
	bool whole = b->m->param[t] && (kind == AR_TK_WEIGHT ||
					b->m->spec.optim_in_backward);
	return tensor_typed(b, t, suffix, kind, whole ?
			    ar_train_grad_dtype(b->m, t) : AR_DT_UNDEFINED);
}

/* The tensor a backward step writes t's gradient (or a part of it) to. */
static int grad_slot(Build *b, int t)
{
	const ArTrainModel *m = b->m;
	char suffix[32];
	int x;
	if (m->ncontrib[t] == 1)
		return b->dx[t] = grad_tensor(b, t, ".grad", grad_kind(b, t));
	snprintf(suffix, sizeof suffix, ".grad.%d", b->nparts[t]);
	x = tensor_like(b, t, suffix, AR_TK_ACTIVATION);
	if (!b->parts[t])
		b->parts[t] = ar_xmalloc((size_t)m->ncontrib[t] * sizeof(int));
	b->parts[t][b->nparts[t]++] = x;
	return x;
}

/* Sums the parts of each gradient of ts whose last part was just written
 * by the backward step of base node src. */
static void accumulate(Build *b, int src, const int *ts, int n)
{
	for (int i = 0; i < n; i++) {
		int t = ts[i];
		if (b->m->ncontrib[t] < 2 || b->nparts[t] < b->m->ncontrib[t] ||
		    b->dx[t] >= 0)
			continue;
		b->dx[t] = grad_tensor(b, t, ".grad", b->m->param[t] ?
				       param_grad_kind(b) : AR_TK_ACTIVATION);
		step(b, src, b->g->tensors[t].name, ".grad.sum",
		     training_op("GradAccumulate"), AR_PHASE_BACKWARD, b->parts[t],
		     b->nparts[t], &b->dx[t], 1);
	}
}

static void backward_step(Build *b, int node)
{
	const ArTrainModel *m = b->m;
	ArGradView v;
	ArGradReads r;
	uint32_t need = 0, dout;
	int nin = 0, nout = 0, *in, *out, *of, id;
	char *op;

	if (!ar_train_grad_view(m, node, &v))
		return;
	in = ar_xmalloc(((size_t)v.nin + 2 * (size_t)v.nout + 1) * sizeof(int));
	out = ar_xmalloc(((size_t)v.nin + 1) * sizeof(int));
	of = ar_xmalloc(((size_t)v.nin + 1) * sizeof(int));
	for (int j = 0; j < v.nin; j++)
		if (v.in[j] >= 0 && (v.rule->diff & bit(j)) && m->grad[v.in[j]])
			need |= bit(j);
	r = ar_grad_reads(v.rule, need);
	for (int j = 0; j < v.nin; j++)
		if ((r.in & bit(j)) && v.in[j] >= 0)
			in[nin++] = resolve(b, v.in[j]);
	for (int j = 0; j < v.nout; j++)
		if ((r.out & bit(j)) && v.out[j] >= 0)
			in[nin++] = resolve(b, v.out[j]);
	dout = ar_train_grad_outputs(&v);
	for (int j = 0; !v.loss && j < v.nout; j++)
		if ((dout & bit(j)) && v.out[j] >= 0 && b->dx[v.out[j]] >= 0)
			in[nin++] = b->dx[v.out[j]];
	for (int j = 0; j < v.nin; j++)
		if (need & bit(j)) {
			of[nout] = v.in[j];
			out[nout++] = grad_slot(b, v.in[j]);
		}
	op = join(v.op, AR_GRAD_SUFFIX);
	id = step(b, node, m->base->nodes[node].name, ".grad", training_op(op),
		  AR_PHASE_BACKWARD, in, nin, out, nout);
	free(op);
	if (v.rule->attrs)
		ar_copy_attrs(b->g, &b->g->nodes[id], &m->base->nodes[node]);
	accumulate(b, node, of, nout);
	free(in);
	free(out);
	free(of);
}

/* A [rows, classes] tensor for chunk k of the logits. */
static int chunk_tensor(Build *b, int like, const char *suffix, int k,
			int64_t rows)
{
	char sfx[48];
	int t;
	ArTensor *x;
	snprintf(sfx, sizeof sfx, ".chunk%d%s", k, suffix);
	t = tensor_like(b, like, sfx, AR_TK_ACTIVATION);
	x = &b->g->tensors[t];
	x->rank = 2;
	x->dims[0] = rows;
	x->dims[1] = b->m->classes;
	x->bytes = rows * b->m->classes * (int64_t)ar_dtype_size(x->dtype);
	return t;
}

/* One chunk's gradient of a head input (x or W), added in place into the
 * previous chunks' (prev), the last one into t's gradient slot. */
static int chunk_grad(Build *b, int t, int k, const char *op,
		      const char *what, int other, int dlogits, int prev)
{
	const ArTrainModel *m = b->m;
	int in[3] = {other, dlogits, prev}, out;
	char sfx[48];
	if (k == m->spec.loss_chunks - 1) {
		out = grad_slot(b, t);
	} else {
		snprintf(sfx, sizeof sfx, ".grad.chunk%d", k);
		out = grad_tensor(b, t, sfx, grad_kind(b, t));
	}
	snprintf(sfx, sizeof sfx, ".chunk%d.%s", k, what);
	step(b, m->nfwd, b->g->tensors[m->logits].name, sfx, training_op(op),
	     AR_PHASE_BACKWARD, in, prev < 0 ? 2 : 3, &out, 1);
	return out;
}

/* The loss in chunks (see the header comment), in place of the loss
 * node's forward copy and backward step. */
static void chunked_loss(Build *b)
{
	const ArTrainModel *m = b->m;
	const ArNode *loss = &m->base->nodes[m->nfwd];
	int n = m->spec.loss_chunks, x = resolve(b, loss->inputs[0]);
	int w = loss->inputs[1], label = loss->inputs[2], dx = -1, dw = -1;
	int lp = loss->noutputs > 1 ? loss->outputs[1] : -1;
	int *losses = ar_xmalloc((size_t)n * sizeof(int)), of[2], nof = 0;
	const char *lname = b->g->tensors[m->logits].name;

	assert(lp >= 0);        /* train_outputs.c made it */
	for (int k = 0; k < n; k++) {
		int64_t rows = m->rows / n + (k < m->rows % n);
		int lk = chunk_tensor(b, m->logits, "", k, rows);
		int in[2] = {x, w}, dl, out[2];
		char sfx[32];
		snprintf(sfx, sizeof sfx, ".chunk%d", k);
		step(b, m->nfwd, lname, sfx, training_op("LogitsChunk"),
		     AR_PHASE_FORWARD, in, 2, &lk, 1);
		out[0] = losses[k] = tensor_like(b, loss->outputs[0], sfx,
						 AR_TK_ACTIVATION);
		out[1] = chunk_tensor(b, lp, "", k, rows);
		in[0] = lk;
		in[1] = label;
		step(b, m->nfwd, loss->name, sfx,
		     training_op("CrossEntropyChunk"), AR_PHASE_FORWARD, in, 2,
		     out, 2);
		in[0] = out[1];

		dl = chunk_tensor(b, m->logits, ".grad", k, rows);
		snprintf(sfx, sizeof sfx, ".chunk%d.grad", k);
		step(b, m->nfwd, loss->name, sfx,
		     training_op("CrossEntropyChunkGrad"), AR_PHASE_BACKWARD,
		     in, 2, &dl, 1);
		if (m->grad[loss->inputs[0]])
			dx = chunk_grad(b, loss->inputs[0], k,
					"LogitsChunkGradInput", "grad_input", w,
					dl, dx);
		if (m->grad[w])
			dw = chunk_grad(b, w, k, "LogitsChunkGradWeight",
					"grad_weight", x, dl, dw);
	}
	step(b, m->nfwd, loss->name, "", (OpRef){"", "Sum", b->g->opset},
	     AR_PHASE_FORWARD, losses, n, &loss->outputs[0], 1);
	if (m->grad[loss->inputs[0]])
		of[nof++] = loss->inputs[0];
	if (m->grad[w])
		of[nof++] = w;
	accumulate(b, m->nfwd, of, nof);
	free(losses);
}

/* A persistent tensor of the optimizer (optim.h) for parameter `like`:
 * shaped like it, or a vector of s->numel elements; named like's name
 * and the suffix, or the suffix alone (shared). */
static int state_tensor(Build *b, int like, const ArStateTensor *s,
			bool shared)
{
	int t = shared ? ar_graph_add_tensor(b->g, s->suffix)
		       : tensor_typed(b, like, s->suffix, AR_TK_WEIGHT,
				      s->dtype);
	ArTensor *x = &b->g->tensors[t];
	if (shared) {
		x->kind = AR_TK_WEIGHT;
		x->dtype = s->dtype;
		room(&b->tsrc, &b->capt, t);
		b->tsrc[t] = b->tsrc[like];
	}
	if (!s->like_param) {
		x->rank = 1;
		x->dims[0] = s->numel;
	}
	x->bytes = ar_train_mul(s->numel, (int64_t)ar_dtype_size(s->dtype));
	x->off_device = s->host;
	return t;
}

/* The optimizer's tensors kept once (optim.h: bitsandbytes' maps), made
 * at the first update and read by every update. */
static int shared_states(Build *b, int like, int *in)
{
	ArStateTensor s[AR_MAX_STATES];
	int n = ar_optim_shared(b->m, s);
	for (int k = 0; k < n; k++) {
		if (b->shared[k] < 0)
			b->shared[k] = state_tensor(b, like, &s[k], true);
		in[k] = b->shared[k];
	}
	return n;
}

static void update_step(Build *b, int t)
{
	const ArTrainModel *m = b->m;
	ArDType mdt = ar_train_master_dtype(m, t);
	ArStateTensor s[AR_MAX_STATES];
	int in[3 + 2 * AR_MAX_STATES], nin = 0, out, ns = ar_optim_states(m, t, s);
	in[nin++] = t;
	in[nin++] = b->dx[t];
	if (mdt != AR_DT_UNDEFINED)
		in[nin++] = tensor_typed(b, t, ".master", AR_TK_WEIGHT, mdt);
	for (int k = 0; k < ns; k++)
		in[nin++] = state_tensor(b, t, &s[k], false);
	if (ns > 0 && (s[0].dtype == AR_DT_UINT8 || s[ns - 1].dtype ==
						   AR_DT_UINT8))
		nin += shared_states(b, t, in + nin);
	out = tensor_like(b, t, ".next", AR_TK_WEIGHT);
	b->updated[t] = true;
	step(b, -1, b->g->tensors[t].name, ".update",
	     training_op(ar_optim_update_op(m->spec.optimizer)), AR_PHASE_UPDATE,
	     in, nin, &out, 1);
}

/* With a chunked loss: the head, its views and the loss's forward copy
 * leave the graph with the tensors only they produced; the trace follows
 * the new ids. */
static void drop_head(Build *b)
{
	const ArTrainModel *m = b->m;
	ArGraph *g = b->g;
	bool *dn = ar_xcalloc((size_t)g->nnodes + 1, sizeof *dn);
	bool *dt = ar_xcalloc((size_t)g->ntensors + 1, sizeof *dt);
	int k = 0, nn = g->nnodes, nt = g->ntensors;

	for (int i = 0; i < m->nfwd; i++)
		dn[i] = m->in_loss[i];
	dn[m->nfwd] = true;
	for (int i = 0; i <= m->nfwd; i++)
		/* The loss's scalar stays, the chunks' Sum makes it. */
		for (int j = i == m->nfwd; dn[i] && j < g->nodes[i].noutputs;
		     j++)
			if (g->nodes[i].outputs[j] >= 0)
				dt[g->nodes[i].outputs[j]] = true;
	ar_graph_drop(g, dn, dt);
	for (int i = 0; i < nn; i++)
		if (!dn[i])
			b->nsrc[k++] = b->nsrc[i];
	k = 0;
	for (int t = 0; t < nt; t++)
		if (!dt[t])
			b->tsrc[k++] = b->tsrc[t];
	free(dn);
	free(dt);
}

ArGraph *ar_train_graph_traced(const ArTrainModel *m, const bool *resident,
			       int **node_src, int **tensor_src)
{
	int nt = m->base->ntensors;
	Build b = {.m = m, .resident = resident};
	bool chunked = m->spec.loss_chunks > 1;

	b.g = ar_train_copy(m->base, NULL);
	b.capn = b.g->nnodes + 1;
	b.capt = nt + 1;
	b.nsrc = ar_xmalloc((size_t)b.capn * sizeof(int));
	b.tsrc = ar_xmalloc((size_t)b.capt * sizeof(int));
	for (int i = 0; i < b.g->nnodes; i++)
		b.nsrc[i] = i;
	for (int t = 0; t < nt; t++)
		b.tsrc[t] = t;
	b.redo = ar_xmalloc(((size_t)nt + 1) * sizeof(int));
	b.dx = ar_xmalloc(((size_t)nt + 1) * sizeof(int));
	b.parts = ar_xcalloc((size_t)nt + 1, sizeof *b.parts);
	b.nparts = ar_xcalloc((size_t)nt + 1, sizeof *b.nparts);
	for (int t = 0; t < nt; t++)
		b.redo[t] = b.dx[t] = -1;
	for (int k = 0; k < AR_MAX_STATES; k++)
		b.shared[k] = -1;

	b.updated = ar_xcalloc((size_t)nt + 1, sizeof *b.updated);
	if (chunked)
		chunked_loss(&b);
	for (int i = chunked ? m->nfwd - 1 : m->nfwd; i >= 0; i--) {
		if (m->rule[i])
			backward_step(&b, i);
		/* torchtune's optimizer_in_bwd: each parameter updated as
		 * soon as its gradient is whole, which then dies. */
		for (int t = 0; m->spec.optim_in_backward && t < nt; t++)
			if (m->param[t] && b.dx[t] >= 0 && !b.updated[t])
				update_step(&b, t);
	}
	for (int t = 0; t < nt; t++)
		if (m->param[t] && !b.updated[t])
			update_step(&b, t);
	free(b.updated);
	if (chunked)
		drop_head(&b);

	for (int t = 0; t < nt; t++)
		free(b.parts[t]);
	free(b.parts);
	free(b.nparts);
	free(b.redo);
	free(b.dx);
	if (node_src)
		*node_src = b.nsrc;
	else
		free(b.nsrc);
	if (tensor_src)
		*tensor_src = b.tsrc;
	else
		free(b.tsrc);
	return b.g;
}

ArGraph *ar_train_graph(const ArTrainModel *m, const bool *resident)
{
	return ar_train_graph_traced(m, resident, NULL, NULL);
}
