/*
 * train.c — the training step as a graph: forward, loss, backward, update.
 *
 * ar_train_model prepares the forward graph once (loss attached to the
 * first output, Dropout masks materialised) and works out, with the rules
 * of grad_rules.c, which tensors get a gradient, which are parameters and
 * which forward activations a backward step reads.  ar_train_graph then
 * emits one graph per checkpoint selection:
 *
 *   forward nodes, Loss | LossGrad, then per forward node in reverse a
 *   gradient node (after the recompute nodes its saved inputs need),
 *   GradAccumulate where several consumers contribute to one gradient,
 *   and one optimizer update per parameter.
 *
 * Its node order is its step order: recompute nodes sit right before the
 * first backward step that needs them, which is what makes them pay off.
 * A recomputed value is a new tensor ("x.recompute") read by backward steps
 * in place of x, so x itself dies after its last forward use.
 */
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_float(ArDType dt)
{
	return dt == AR_DT_FLOAT || dt == AR_DT_FLOAT16 ||
	       dt == AR_DT_BFLOAT16 || dt == AR_DT_DOUBLE;
}

static bool is_stored(const ArTensor *t)
{
	return t->kind == AR_TK_WEIGHT || t->kind == AR_TK_CONSTANT;
}

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

/* Tensors (without data) and nodes (without attributes) of src. */
static ArGraph *copy_skeleton(const ArGraph *src)
{
	ArGraph *g = ar_graph_new(src->name);
	g->opset = src->opset;
	g->ir_version = src->ir_version;
	for (int i = 0; i < src->ntensors; i++) {
		const ArTensor *s = &src->tensors[i];
		int id = ar_graph_add_tensor(g, s->name);
		ArTensor *t = &g->tensors[id];
		t->dtype = s->dtype;
		t->rank = s->rank;
		memcpy(t->dims, s->dims, sizeof t->dims);
		t->bytes = s->bytes;
		t->kind = s->kind;
		t->producer = s->producer;
	}
	for (int i = 0; i < src->nnodes; i++) {
		const ArNode *s = &src->nodes[i];
		int id = ar_graph_add_node(g, s->name, s->op, s->domain);
		ArNode *n = &g->nodes[id];
		ar_node_set_io(n, s->inputs, s->ninputs, s->outputs,
			       s->noutputs);
		n->nexplicit = s->nexplicit;
		n->phase = s->phase;
		n->opset = s->opset;
	}
	g->inputs = ar_xmalloc(((size_t)src->ninputs + 1) * sizeof(int));
	memcpy(g->inputs, src->inputs, (size_t)src->ninputs * sizeof(int));
	g->ninputs = src->ninputs;
	g->outputs = ar_xmalloc(((size_t)src->noutputs + 1) * sizeof(int));
	memcpy(g->outputs, src->outputs, (size_t)src->noutputs * sizeof(int));
	g->noutputs = src->noutputs;
	return g;
}

/* A new tensor named like's name + suffix, with like's type and shape. */
static int add_like(ArGraph *g, int like, const char *suffix,
		    ArTensorKind kind)
{
	char *name = join(g->tensors[like].name, suffix);
	int t = ar_graph_add_tensor(g, name);
	const ArTensor *l = &g->tensors[like];
	ArTensor *x = &g->tensors[t];
	free(name);
	x->dtype = l->dtype;
	x->rank = l->rank;
	memcpy(x->dims, l->dims, sizeof x->dims);
	x->bytes = l->bytes;
	x->kind = kind;
	return t;
}

static int emit(ArGraph *g, const char *name, const char *suffix,
		const char *op, ArPhase phase, const int *in, int nin,
		const int *out, int nout)
{
	char *nm = join(name, suffix);
	int id = ar_graph_add_node(g, nm, op, "");
	ArNode *n = &g->nodes[id];
	free(nm);
	ar_node_set_io(n, in, nin, out, nout);
	n->phase = phase;
	for (int i = 0; i < nout; i++)
		if (out[i] >= 0)
			g->tensors[out[i]].producer = id;
	return id;
}

/* Training-mode Dropout writes its mask: give it one, shaped like Y. */
static int add_dropout_mask(ArGraph *g, int node, ArError *err)
{
	ArNode *n = &g->nodes[node];
	int y = n->noutputs ? n->outputs[0] : -1, m;
	if (y < 0)
		return AR_OK;
	if (n->noutputs >= 2 && n->outputs[1] >= 0) {
		m = n->outputs[1];
	} else {
		m = add_like(g, y, ".mask", AR_TK_ACTIVATION);
		n = &g->nodes[node];
		n->outputs = ar_xrealloc(n->outputs, 2 * sizeof(int));
		n->outputs[1] = m;
		n->noutputs = 2;
		g->tensors[m].producer = node;
	}
	if (g->tensors[m].rank < 0) {
		ArTensor *t = &g->tensors[m];
		t->dtype = AR_DT_BOOL;
		t->rank = g->tensors[y].rank;
		memcpy(t->dims, g->tensors[y].dims, sizeof t->dims);
		return ar_tensor_set_bytes(t, err);
	}
	return AR_OK;
}

/* The label (class indices: the output's shape less its last axis) and
 * the loss node; returns the loss node's id. */
static int add_loss(ArTrainModel *m, ArError *err)
{
	ArGraph *g = m->base;
	const char *lname = ar_graph_find(g, "label") < 0 ? "label"
							   : "label.train";
	int label = ar_graph_add_tensor(g, lname), loss, in[2], node, rc;
	ArTensor *y = &g->tensors[m->loss_in], *l = &g->tensors[label];

	l->dtype = AR_DT_INT64;
	l->rank = y->rank > 0 ? y->rank - 1 : 0;
	memcpy(l->dims, y->dims, sizeof l->dims);
	l->kind = AR_TK_INPUT;
	if ((rc = ar_tensor_set_bytes(l, err)))
		return -1;
	g->inputs[g->ninputs++] = label;
	loss = ar_graph_add_tensor(g, ar_graph_find(g, "loss") < 0 ? "loss"
							: "loss.train");
	g->tensors[loss].dtype = g->tensors[m->loss_in].dtype;
	g->tensors[loss].rank = 0;
	g->tensors[loss].bytes = (int64_t)ar_dtype_size(g->tensors[loss].dtype);
	g->tensors[loss].kind = AR_TK_OUTPUT;
	g->tensors[m->loss_in].kind = AR_TK_ACTIVATION;
	/* The loss replaces the first output; the others stay outputs. */
	g->outputs[0] = loss;
	in[0] = m->loss_in;
	in[1] = label;
	node = emit(g, "loss", "", "SoftmaxCrossEntropyLoss", AR_PHASE_FORWARD,
		    in, 2, &loss, 1);
	return node;
}

static int check_loss_output(const ArGraph *fwd, ArError *err)
{
	const ArTensor *y;
	if (fwd->noutputs < 1)
		return ar_fail(err, AR_EXIT_MODEL, "--train: the model has no "
			       "output to attach the loss to");
	y = &fwd->tensors[fwd->outputs[0]];
	if (!is_float(y->dtype) || y->bytes < 0 || y->producer < 0)
		return ar_fail(err, AR_EXIT_MODEL, "--train: the loss needs a "
			       "computed float output, and output '%s' is %s%s",
			       y->name, ar_dtype_name(y->dtype),
			       y->producer < 0 ? " and not computed" : "");
	return AR_OK;
}

/* Which tensors depend on a parameter (a float initializer or constant
 * read at a differentiable input). */
static void requires_grad(const ArTrainModel *m, bool *rg)
{
	const ArGraph *g = m->base;
	for (int i = 0; i < m->nfwd; i++) {
		const ArNode *n = &g->nodes[i];
		const ArGradRule *r = ar_grad_rule(n->op);
		bool any = false;
		if (!ar_is_step(g, i))
			continue;
		for (int j = 0; j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (t < 0 || (r && !(r->diff & bit(j))))
				continue;
			if (is_float(g->tensors[t].dtype) &&
			    (rg[t] || is_stored(&g->tensors[t])))
				any = true;
		}
		for (int j = 0; any && j < n->noutputs; j++)
			if (n->outputs[j] >= 0)
				rg[n->outputs[j]] = true;
	}
}

/* Input j of node n gets a gradient from n's backward step. */
static bool gets_grad(const ArTrainModel *m, const bool *rg, const ArNode *n,
		      const ArGradRule *r, int j)
{
	int t = n->inputs[j];
	const ArTensor *x;
	if (t < 0 || (r && !(r->diff & bit(j))))
		return false;
	x = &m->base->tensors[t];
	return is_float(x->dtype) && (rg[t] || is_stored(x));
}

static void mark_saved(ArTrainModel *m, const ArNode *n, const ArGradRule *r,
		       const bool *rg)
{
	for (int j = 0; j < n->ninputs; j++) {
		bool need = r->save_in & bit(j);
		if (r->cross && j <= 1 && 1 - j < n->ninputs)
			need = need || gets_grad(m, rg, n, r, 1 - j);
		if (need && n->inputs[j] >= 0)
			m->saved[n->inputs[j]] = true;
	}
	for (int j = 0; j < n->noutputs; j++)
		if ((r->save_out & bit(j)) && n->outputs[j] >= 0)
			m->saved[n->outputs[j]] = true;
}

/* Walks back from the loss: which tensors get gradients, which nodes get
 * a backward step, what those steps read. */
static int backward_flow(ArTrainModel *m, const bool *rg, ArError *err)
{
	const ArGraph *g = m->base;
	if (!rg[m->loss_in])
		return ar_fail(err, AR_EXIT_MODEL, "--train: output '%s' does "
			       "not depend on any parameter",
			       g->tensors[m->loss_in].name);
	m->grad[m->loss_in] = true;
	m->saved[m->loss_in] = true;
	m->ncontrib[m->loss_in] = 1;
	for (int i = m->nfwd - 1; i >= 0; i--) {
		const ArNode *n = &g->nodes[i];
		const ArGradRule *r = ar_grad_rule(n->op);
		bool any = false;
		if (!ar_is_step(g, i) || !n->noutputs || n->outputs[0] < 0 ||
		    !m->grad[n->outputs[0]])
			continue;
		for (int j = 0; j < n->ninputs; j++)
			any = any || gets_grad(m, rg, n, r, j);
		if (!any)
			continue;
		if (!r)
			return ar_fail(err, AR_EXIT_MODEL, "--train: no "
				       "gradient rule for op '%s' (node '%s')",
				       n->op, n->name);
		m->rule[i] = r;
		for (int j = 0; j < n->ninputs; j++)
			if (gets_grad(m, rg, n, r, j)) {
				m->grad[n->inputs[j]] = true;
				m->ncontrib[n->inputs[j]]++;
			}
		mark_saved(m, n, r, rg);
	}
	return AR_OK;
}

/* Candidates: saved activations and the activations they are computed
 * from, in production order. */
static void find_candidates(ArTrainModel *m)
{
	const ArGraph *g = m->base;
	bool *need = ar_xcalloc((size_t)g->ntensors, sizeof *need);
	for (int t = 0; t < g->ntensors; t++)
		need[t] = m->saved[t] && g->tensors[t].kind == AR_TK_ACTIVATION;
	for (int i = m->nfwd - 1; i >= 0; i--) {
		const ArNode *n = &g->nodes[i];
		bool any = false;
		for (int j = 0; j < n->noutputs; j++)
			any = any || (n->outputs[j] >= 0 && need[n->outputs[j]]);
		for (int j = 0; any && j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (t >= 0 && g->tensors[t].kind == AR_TK_ACTIVATION &&
			    ar_in_arena(g, t))
				need[t] = true;
		}
	}
	m->cand = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	for (int i = 0; i < m->nfwd; i++)
		for (int j = 0; j < g->nodes[i].noutputs; j++) {
			int t = g->nodes[i].outputs[j];
			if (t >= 0 && need[t])
				m->cand[m->ncand++] = t;
		}
	free(need);
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;
	return ar_add64(a, b, &r) ? r : INT64_MAX;
}

static void count_flops(ArTrainModel *m, const ArGraph *fwd)
{
	const ArGraph *g = m->base;
	int64_t out = ar_numel(&g->tensors[m->loss_in]);
	m->flops = ar_xcalloc((size_t)g->nnodes, sizeof *m->flops);
	for (int i = 0; i < m->nfwd; i++)
		if (ar_is_step(fwd, i))
			m->flops[i] = ar_node_flops(fwd, &fwd->nodes[i]);
	/* Softmax, log and pick per output element. */
	m->flops[m->nfwd] = out < 0 || out > INT64_MAX / 3 ? INT64_MAX : 3 * out;
	for (int i = 0; i < g->nnodes; i++)
		m->forward_flops = add_sat(m->forward_flops, m->flops[i]);
	/* A backward step costs what its forward did, once per operand
	 * gradient of a bilinear op; the loss gradient one op per element. */
	m->backward_flops = out < 0 ? 0 : out;
	for (int i = 0; i < m->nfwd; i++)
		if (m->rule[i])
			m->backward_flops = add_sat(m->backward_flops,
				m->rule[i]->cross ? add_sat(m->flops[i],
							    m->flops[i])
						  : m->flops[i]);
}

int ar_train_model(const ArGraph *fwd, ArOptimizer opt, ArTrainModel **out,
		   ArError *err)
{
	ArTrainModel *m;
	bool *rg;
	int rc, nt, states = opt == AR_OPTIM_ADAM ? 2 :
			      opt == AR_OPTIM_MOMENTUM ? 1 : 0;

	*out = NULL;
	if ((rc = check_loss_output(fwd, err)))
		return rc;
	m = ar_xcalloc(1, sizeof *m);
	m->optimizer = opt;
	m->loss_in = fwd->outputs[0];
	m->nfwd = fwd->nnodes;
	m->base = copy_skeleton(fwd);
	for (int i = 0; i < m->nfwd; i++)
		if (!strcmp(fwd->nodes[i].op, "Dropout") && ar_is_step(fwd, i) &&
		    (rc = add_dropout_mask(m->base, i, err)))
			goto fail;
	if (add_loss(m, err) < 0) {
		rc = err->code;
		goto fail;
	}
	nt = m->base->ntensors;
	m->rule = ar_xcalloc((size_t)m->base->nnodes, sizeof *m->rule);
	m->param = ar_xcalloc((size_t)nt, sizeof *m->param);
	m->grad = ar_xcalloc((size_t)nt, sizeof *m->grad);
	m->saved = ar_xcalloc((size_t)nt, sizeof *m->saved);
	m->ncontrib = ar_xcalloc((size_t)nt, sizeof *m->ncontrib);
	rg = ar_xcalloc((size_t)nt, sizeof *rg);
	requires_grad(m, rg);
	rc = backward_flow(m, rg, err);
	free(rg);
	if (rc)
		goto fail;
	for (int t = 0; t < nt; t++) {
		m->param[t] = m->grad[t] && is_stored(&m->base->tensors[t]);
		if (m->param[t])
			m->parameter_bytes = add_sat(m->parameter_bytes,
						     m->base->tensors[t].bytes);
	}
	if (!ar_mul64(m->parameter_bytes, states, &m->state_bytes)) {
		rc = ar_fail(err, AR_EXIT_MODEL, "--train: optimizer state "
			     "size overflows");
		goto fail;
	}
	find_candidates(m);
	count_flops(m, fwd);
	*out = m;
	return AR_OK;
fail:
	ar_train_model_free(m);
	return rc;
}

void ar_train_model_free(ArTrainModel *m)
{
	if (!m)
		return;
	ar_graph_free(m->base);
	free(m->rule);
	free(m->param);
	free(m->grad);
	free(m->saved);
	free(m->ncontrib);
	free(m->cand);
	free(m->flops);
	free(m);
}

/* Whether a backward step may read t as it is (no recompute). */
static bool available(const ArTrainModel *m, const bool *resident, int t)
{
	return m->base->tensors[t].kind != AR_TK_ACTIVATION || !resident ||
	       resident[t];
}

/* Marks the forward nodes that must re-run to get t back.  A stack of its
 * own, not recursion: a chain freed whole is as deep as the network.
 * Each node pushes its inputs once, so stack holds as many as all nodes'
 * inputs together, plus one. */
static void closure(const ArTrainModel *m, const bool *resident, int t,
		    bool *redo, int *stack)
{
	int n = 0;
	stack[n++] = t;
	while (n > 0) {
		int x = stack[--n], p = m->base->tensors[x].producer;
		const ArNode *node;
		if (available(m, resident, x) || p < 0 || redo[p])
			continue;
		redo[p] = true;
		node = &m->base->nodes[p];
		for (int j = 0; j < node->ninputs; j++)
			if (node->inputs[j] >= 0)
				stack[n++] = node->inputs[j];
	}
}

int64_t ar_train_recompute_flops(const ArTrainModel *m, const bool *resident)
{
	const ArGraph *g = m->base;
	bool *redo = ar_xcalloc((size_t)g->nnodes, sizeof *redo);
	size_t inputs = 1;
	int *stack;
	int64_t f = 0;
	for (int i = 0; i < g->nnodes; i++)
		inputs += (size_t)g->nodes[i].ninputs;
	stack = ar_xmalloc(inputs * sizeof *stack);
	for (int t = 0; t < g->ntensors; t++)
		if (m->saved[t])
			closure(m, resident, t, redo, stack);
	for (int i = 0; i < g->nnodes; i++)
		if (redo[i])
			f = add_sat(f, m->flops[i]);
	free(redo);
	free(stack);
	return f;
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

/* add_like and emit on the step graph, recording where each new tensor
 * and node stems from. */
static int tensor_like(Build *b, int t, const char *suffix, ArTensorKind kind)
{
	int x = add_like(b->g, t, suffix, kind);
	room(&b->tsrc, &b->capt, x);
	b->tsrc[x] = b->tsrc[t];
	return x;
}

static int step(Build *b, int src, const char *name, const char *suffix,
		const char *op, ArPhase phase, const int *in, int nin,
		const int *out, int nout)
{
	int id = emit(b->g, name, suffix, op, phase, in, nin, out, nout);
	room(&b->nsrc, &b->capn, id);
	b->nsrc[id] = src;
	return id;
}

/* The value of base tensor u as a recompute may read it now. */
static int value_of(const Build *b, int u)
{
	return u < 0 ? -1 : available(b->m, b->resident, u) ? u : b->redo[u];
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
	id = step(b, p, src->name, ".recompute", src->op, AR_PHASE_RECOMPUTE,
		  in, src->ninputs, out, src->noutputs);
	b->g->nodes[id].nexplicit = src->nexplicit;
	free(in);
	free(out);
}

/*
 * The value of base tensor t a backward step reads: t, or a recompute of
 * it emitted now, after the recomputes its inputs need (inputs in order,
 * depth first).  An explicit stack of (tensor, next input), not
 * recursion: a chain freed whole is as deep as the network.
 */
static int resolve(Build *b, int t)
{
	int *tensor, *next, n = 0, cap = 16;

	if (value_of(b, t) >= 0)
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
		if (u < 0 || value_of(b, u) >= 0)
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

/* The tensor a backward step writes t's gradient (or a part of it) to. */
static int grad_slot(Build *b, int t)
{
	const ArTrainModel *m = b->m;
	ArTensorKind k = m->param[t] ? AR_TK_WEIGHT : AR_TK_ACTIVATION;
	char suffix[32];
	int x;
	if (m->ncontrib[t] == 1)
		return b->dx[t] = tensor_like(b, t, ".grad", k);
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
		b->dx[t] = tensor_like(b, t, ".grad", b->m->param[t] ?
				AR_TK_WEIGHT : AR_TK_ACTIVATION);
		step(b, src, b->g->tensors[t].name, ".grad.sum",
		     "GradAccumulate", AR_PHASE_BACKWARD, b->parts[t],
		     b->nparts[t], &b->dx[t], 1);
	}
}

static void backward_step(Build *b, int node)
{
	const ArGraph *base = b->m->base;
	const ArNode *n = &base->nodes[node];
	const ArGradRule *r = b->m->rule[node];
	int nin = 0, nout = 0, *in, *out, *of;
	char *op;

	in = ar_xmalloc(((size_t)n->ninputs + n->noutputs + 1) * sizeof(int));
	out = ar_xmalloc(((size_t)n->ninputs + 1) * sizeof(int));
	of = ar_xmalloc(((size_t)n->ninputs + 1) * sizeof(int));
	for (int j = 0; j < n->ninputs; j++) {
		bool need = r->save_in & bit(j);
		if (r->cross && j <= 1 && 1 - j < n->ninputs)
			need = need || (n->inputs[1 - j] >= 0 &&
					b->m->grad[n->inputs[1 - j]] &&
					(r->diff & bit(1 - j)));
		if (need && n->inputs[j] >= 0)
			in[nin++] = resolve(b, n->inputs[j]);
	}
	for (int j = 0; j < n->noutputs; j++)
		if ((r->save_out & bit(j)) && n->outputs[j] >= 0)
			in[nin++] = resolve(b, n->outputs[j]);
	in[nin++] = b->dx[n->outputs[0]];
	for (int j = 0; j < n->ninputs; j++) {
		int t = n->inputs[j];
		if (t >= 0 && (r->diff & bit(j)) && b->m->grad[t]) {
			of[nout] = t;
			out[nout++] = grad_slot(b, t);
		}
	}
	op = join(n->op, "Grad");
	step(b, node, base->nodes[node].name, ".grad", op, AR_PHASE_BACKWARD,
	     in, nin, out, nout);
	free(op);
	accumulate(b, node, of, nout);
	free(in);
	free(out);
	free(of);
}

static void update_step(Build *b, int t)
{
	static const char *const ops[] = {"SgdUpdate", "MomentumUpdate",
					  "AdamUpdate"};
	static const char *const states[][2] = {{NULL, NULL},
						{".momentum", NULL},
						{".adam_m", ".adam_v"}};
	int in[4], nin = 0, out;
	in[nin++] = t;
	in[nin++] = b->dx[t];
	for (int s = 0; s < 2; s++)
		if (states[b->m->optimizer][s])
			in[nin++] = tensor_like(b, t, states[b->m->optimizer][s],
					 AR_TK_WEIGHT);
	/* W.next is W rewritten in place: persistent, not in the arena. */
	out = tensor_like(b, t, ".next", AR_TK_WEIGHT);
	step(b, -1, b->g->tensors[t].name, ".update", ops[b->m->optimizer],
	     AR_PHASE_UPDATE, in, nin, &out, 1);
}

ArGraph *ar_train_graph_traced(const ArTrainModel *m, const bool *resident,
			       int **node_src, int **tensor_src)
{
	int nt = m->base->ntensors, in[2], loss_grad;
	Build b = {.m = m, .resident = resident};

	b.g = copy_skeleton(m->base);
	room(&b.nsrc, &b.capn, b.g->nnodes);
	room(&b.tsrc, &b.capt, nt);
	for (int i = 0; i < b.g->nnodes; i++)
		b.nsrc[i] = i;
	for (int t = 0; t < nt; t++)
		b.tsrc[t] = t;
	b.redo = ar_xmalloc((size_t)nt * sizeof(int));
	b.dx = ar_xmalloc((size_t)nt * sizeof(int));
	b.parts = ar_xcalloc((size_t)nt, sizeof *b.parts);
	b.nparts = ar_xcalloc((size_t)nt, sizeof *b.nparts);
	for (int t = 0; t < nt; t++)
		b.redo[t] = b.dx[t] = -1;

	in[0] = resolve(&b, m->loss_in);
	in[1] = m->base->nodes[m->nfwd].inputs[1];
	loss_grad = grad_slot(&b, m->loss_in);
	step(&b, m->nfwd, "loss", ".grad", "SoftmaxCrossEntropyLossGrad",
	     AR_PHASE_BACKWARD, in, 2, &loss_grad, 1);
	for (int i = m->nfwd - 1; i >= 0; i--)
		if (m->rule[i])
			backward_step(&b, i);
	for (int t = 0; t < nt; t++)
		if (m->param[t])
			update_step(&b, t);

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

const char *ar_optimizer_name(ArOptimizer o)
{
	static const char *const names[] = {"sgd", "momentum", "adam"};
	return (unsigned)o < 3 ? names[o] : "invalid";
}
