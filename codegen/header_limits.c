/*
 * header_limits.c — every narrow field of the header's tables, checked
 * before a byte is written.
 *
 * A firmware wants small tables: 32-bit offsets, sizes, element counts
 * and dims, 16-bit operand and attribute counts, 8-bit codes.  A model
 * whose numbers do not fit one of them (an arena past 4 GiB, a Concat of
 * 66,000 inputs) is refused with the field named, never written with a
 * value that the compiler silently wraps (66,000 inputs reading back as
 * 464).  Fields whose range the IR bounds already are checked once, at
 * compile time.
 */
#include <limits.h>

#include "header_parts.h"
#include "numfmt.h"

/* The 8-bit codes hold every value the IR can give them. */
_Static_assert(AR_DT_COUNT <= UINT8_MAX, "dtype is a uint8_t");
_Static_assert(AR_TK_CONSTANT <= UINT8_MAX, "kind is a uint8_t");
_Static_assert(AR_PHASE_UPDATE <= UINT8_MAX, "phase is a uint8_t");
_Static_assert(AR_MAX_RANK <= INT8_MAX, "rank is an int8_t");
_Static_assert(AR_MAX_TIERS <= UINT8_MAX, "region is a uint8_t");
/* Tensor, node and step indices are ints in the IR, int32_t here. */
_Static_assert(INT_MAX <= INT32_MAX, "indices are int32_t");

static int too_big(ArError *err, const char *what, const char *name,
		   long long v, const char *field, long long max)
{
	return ar_fail(err, AR_EXIT_USAGE, "--header: %s '%s' has %lld %s, "
		       "past the header's limit of %lld", what, name, v, field,
		       max);
}

static int check_sizes(const Hdr *h, ArError *err)
{
	const ArPlan *p = h->p;

	char n[AR_NUMFMT_LEN];

	if (!h->nreg && p->arena_bytes >= UINT32_MAX)
		return ar_fail(err, AR_EXIT_USAGE, "--header: the arena of "
			       "%s bytes does not fit the header's 32-bit "
			       "offsets", ar_fmt_count(n, p->arena_bytes));
	for (int r = 0; r < h->nreg; r++)
		if (p->regions[r].used_bytes >= UINT32_MAX)
			return ar_fail(err, AR_EXIT_USAGE, "--header: the "
				       "arena of memory '%s', %s bytes, does "
				       "not fit the header's 32-bit offsets",
				       p->regions[r].name,
				       ar_fmt_count(n, p->regions[r].used_bytes));
	if (ar_weights_layout(h->g, p, NULL) >= UINT32_MAX)
		return ar_fail(err, AR_EXIT_USAGE, "--header: the weights do "
			       "not fit the header's 32-bit offsets");
	return AR_OK;
}

static int check_tensors(const Hdr *h, ArError *err)
{
	char n[AR_NUMFMT_LEN];
	for (int i = 0; i < h->g->ntensors; i++) {
		const ArTensor *t = &h->g->tensors[i];
		if (t->bytes >= UINT32_MAX)
			return ar_fail(err, AR_EXIT_USAGE, "--header: tensor "
				       "'%s' of %s bytes does not fit the "
				       "header's 32-bit sizes", t->name,
				       ar_fmt_count(n, t->bytes));
		/* Sub-byte types may hold more elements than bytes. */
		if (t->rank >= 0 && ar_numel(t) >= UINT32_MAX)
			return too_big(err, "tensor", t->name, ar_numel(t),
				       "elements", UINT32_MAX - 1LL);
		for (int d = 0; d < t->rank; d++)
			if (t->dims[d] > INT32_MAX)
				return ar_fail(err, AR_EXIT_USAGE, "--header: "
					       "tensor '%s' has dim %lld, past "
					       "the header's 32-bit dims",
					       t->name, (long long)t->dims[d]);
	}
	return AR_OK;
}

static int check_steps(const Hdr *h, ArError *err)
{
	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		if (n->nexplicit > UINT16_MAX)
			return too_big(err, "step", n->name, n->nexplicit,
				       "inputs", UINT16_MAX);
		if (n->noutputs > UINT16_MAX)
			return too_big(err, "step", n->name, n->noutputs,
				       "outputs", UINT16_MAX);
		if (n->nattrs > UINT16_MAX)
			return too_big(err, "step", n->name, n->nattrs,
				       "attributes", UINT16_MAX);
		if (n->opset < 0 || n->opset > INT32_MAX)
			return too_big(err, "step", n->name, (long long)n->opset,
				       "as opset", INT32_MAX);
		for (int a = 0; a < n->nattrs; a++) {
			int ni, nf, ns;
			hdr_attr_counts(&n->attrs[a], &ni, &nf, &ns);
			if (ni + nf + ns > UINT16_MAX)
				return too_big(err, "attribute",
					       n->attrs[a].name, ni + nf + ns,
					       "values", UINT16_MAX);
		}
	}
	return AR_OK;
}

typedef struct SubCheck {
	ArError *err;
	int rc;
} SubCheck;

static void check_sub(const Hdr *sh, void *ctx)
{
	SubCheck *c = ctx;
	if (!c->rc)
		c->rc = check_tensors(sh, c->err);
	if (!c->rc)
		c->rc = check_steps(sh, c->err);
	if (!c->rc && (sh->g->ninputs > UINT16_MAX ||
		       sh->g->noutputs > UINT16_MAX))
		c->rc = too_big(c->err, "subgraph", sh->g->name,
				sh->g->ninputs > sh->g->noutputs ?
				sh->g->ninputs : sh->g->noutputs,
				"inputs or outputs", UINT16_MAX);
}

int hdr_check_limits(const Hdr *h, ArError *err)
{
	SubCheck c = {err, check_sizes(h, err)};
	if (!c.rc)
		c.rc = check_tensors(h, err);
	if (!c.rc)
		c.rc = check_steps(h, err);
	if (!c.rc)
		hdr_each_sub(h, check_sub, &c);
	return c.rc;
}
