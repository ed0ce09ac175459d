/*
 * header_attrs.c — the steps' attributes as header tables.
 *
 * Values are pooled by type (one int64_t, one float and one string array
 * for the whole model) and each attribute points at its slice, so that a
 * kernel reads them without parsing anything.  Floats are written in the
 * shortest form that reads back as the same float; tensor-valued
 * attributes are kept when small (a Constant's scalar, a Pad's value) and
 * left out when they are the model's data, like the weights.
 */
#include <math.h>
#include <string.h>

#include "header_parts.h"

/* Tensor-valued attributes larger than this are the model's data, which
 * the header leaves out like the weights. */
#define MAX_TENSOR_ATTR 64

static void put_i64(ArText *out, int64_t v)
{
	if (v == INT64_MIN)
		ar_text_puts(out, "(-INT64_C(9223372036854775807) - 1)");
	else if (v >= INT32_MIN && v <= INT32_MAX)
		ar_text_dec(out, v);
	else
		ar_text_printf(out, "INT64_C(%lld)", (long long)v);
}

void hdr_f32(ArText *out, float v)
{
	char buf[40];
	if (isnan(v)) {
		ar_text_puts(out, "NAN");
		return;
	}
	if (isinf(v)) {
		ar_text_puts(out, v < 0 ? "-HUGE_VALF" : "HUGE_VALF");
		return;
	}
	snprintf(buf, sizeof buf, "%.9g", v);
	ar_text_puts(out, buf);
	if (!strpbrk(buf, ".e"))
		ar_text_puts(out, ".0");
	ar_text_putc(out, 'f');
}

/* Numeric values of a small tensor attribute: integers into ints, floats
 * into floats; the count, or 0 when they are left out. */
static int tensor_attr_values(const ArTensor *t, int64_t *ints, float *floats)
{
	int64_t n = ar_numel(t);
	if (!t->data || n < 0 || n > MAX_TENSOR_ATTR)
		return 0;
	for (int64_t i = 0; i < n; i++) {
		const void *d = t->data;
		switch (t->dtype) {
		case AR_DT_FLOAT: floats[i] = ((const float *)d)[i]; break;
		case AR_DT_DOUBLE: floats[i] = (float)((const double *)d)[i]; break;
		case AR_DT_INT8: ints[i] = ((const int8_t *)d)[i]; break;
		case AR_DT_UINT8: ints[i] = ((const uint8_t *)d)[i]; break;
		case AR_DT_BOOL: ints[i] = ((const uint8_t *)d)[i]; break;
		case AR_DT_INT16: ints[i] = ((const int16_t *)d)[i]; break;
		case AR_DT_UINT16: ints[i] = ((const uint16_t *)d)[i]; break;
		case AR_DT_INT32: ints[i] = ((const int32_t *)d)[i]; break;
		case AR_DT_UINT32: ints[i] = ((const uint32_t *)d)[i]; break;
		case AR_DT_INT64: ints[i] = ((const int64_t *)d)[i]; break;
		case AR_DT_UINT64: ints[i] = (int64_t)((const uint64_t *)d)[i]; break;
		default: return 0;
		}
	}
	return (int)n;
}

static int is_float_dtype(ArDType dt)
{
	return dt == AR_DT_FLOAT || dt == AR_DT_DOUBLE;
}

/*
 * The values attribute a puts in the float pool (floats) or in the int
 * pool; returns their count, with *v pointing at them (at fv or iv when
 * they come from a tensor).
 */
static int pool_values(const ArAttr *a, bool floats, int64_t *iv, float *fv,
		       const void **v)
{
	*v = floats ? (const void *)fv : (const void *)iv;
	switch (a->type) {
	case AR_ATTR_INT:
		*v = &a->i;
		return floats ? 0 : 1;
	case AR_ATTR_INTS:
		*v = a->ints;
		return floats ? 0 : a->nints;
	case AR_ATTR_FLOAT:
		*v = &a->f;
		return floats ? 1 : 0;
	case AR_ATTR_FLOATS:
		*v = a->floats;
		return floats ? a->nfloats : 0;
	case AR_ATTR_TENSOR:
		if (is_float_dtype(a->t->dtype) != floats)
			return 0;
		return tensor_attr_values(a->t, iv, fv);
	default:
		return 0;
	}
}

void hdr_attr_counts(const ArAttr *a, int *ni, int *nf, int *ns)
{
	int64_t iv[MAX_TENSOR_ATTR];
	float fv[MAX_TENSOR_ATTR];
	const void *v;

	*ni = pool_values(a, false, iv, fv, &v);
	*nf = pool_values(a, true, iv, fv, &v);
	*ns = a->type == AR_ATTR_STRING;
}

int hdr_num_attrs(const Hdr *h)
{
	int n = 0;
	for (int s = 0; s < h->p->nsteps; s++)
		n += hdr_step_node(h, s)->nattrs;
	return n;
}

/* The int64_t pool, or with floats the float pool. */
static void write_number_pool(const Hdr *h, ArText *out, bool floats)
{
	int64_t iv[MAX_TENSOR_ATTR];
	float fv[MAX_TENSOR_ATTR];
	int k = 0;

	hdr_open_pool(h, out, floats ? "float" : "int64_t",
		      floats ? "attr_floats" : "attr_ints");
	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const void *v;
			int cnt = pool_values(&n->attrs[a], floats, iv, fv, &v);
			for (int j = 0; j < cnt; j++) {
				hdr_pool_sep(out, &k);
				if (floats)
					hdr_f32(out, ((const float *)v)[j]);
				else
					put_i64(out, ((const int64_t *)v)[j]);
				ar_text_putc(out, ',');
			}
		}
	}
	hdr_pool_sep(out, &k);
	ar_text_puts(out, floats ? "0.0f\n};\n\n" : "0\n};\n\n");
}

static void write_string_pool(const Hdr *h, ArText *out)
{
	hdr_open_pool(h, out, "char *const", "attr_strings");
	ar_text_putc(out, '\n');
	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const ArAttr *at = &n->attrs[a];
			if (at->type != AR_ATTR_STRING)
				continue;
			ar_text_putc(out, '\t');
			hdr_str(out, at->s);
			ar_text_puts(out, ",\n");
		}
	}
	ar_text_puts(out, "\t0\n};\n\n");
}

void hdr_write_attrs(const Hdr *h, ArText *out)
{
	int pi = 0, pf = 0, ps = 0;

	write_number_pool(h, out, false);
	write_number_pool(h, out, true);
	write_string_pool(h, out);
	hdr_open_table(h, out, "attr", "attrs", "NUM_ATTRS", h->nattrs);
	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const ArAttr *at = &n->attrs[a];
			int ni, nf, ns;
			hdr_attr_counts(at, &ni, &nf, &ns);
			ar_text_puts(out, "\t{");
			hdr_str(out, at->name);
			ar_text_puts(out, ", ");
			hdr_macro(h, out, "ATTR_");
			ar_text_puts(out, hdr_attr_type_name(at->type));
			ar_text_puts(out, ", ");
			hdr_dtype(h, out, at->type == AR_ATTR_TENSOR ? at->t->dtype :
				  AR_DT_UNDEFINED);
			ar_text_puts(out, ", ");
			hdr_num(out, ni + nf + ns, ", ");
			hdr_pool_ref(h, out, "_attr_ints + ", pi);
			hdr_pool_ref(h, out, "_attr_floats + ", pf);
			ar_text_puts(out, h->tab);
			ar_text_puts(out, "_attr_strings + ");
			hdr_num(out, ps, "},\n");
			pi += ni;
			pf += nf;
			ps += ns;
		}
	}
	ar_text_printf(out, "\t{0, %s_ATTR_UNDEFINED, %s_DT_UNDEFINED, 0, "
		"%s_attr_ints, %s_attr_floats, %s_attr_strings}\n};\n\n",
		h->up, h->up, h->tab, h->tab, h->tab);
}

static int set_needs_math(const Hdr *h)
{
	int64_t iv[MAX_TENSOR_ATTR];
	float fv[MAX_TENSOR_ATTR];

	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const void *v;
			int cnt = pool_values(&n->attrs[a], true, iv, fv, &v);
			for (int j = 0; j < cnt; j++)
				if (!isfinite(((const float *)v)[j]))
					return 1;
		}
	}
	return 0;
}

/* NAN and HUGE_VALF come from math.h, which most headers can do without. */
int hdr_needs_math(const Hdr *h)
{
	return hdr_any_set(h, set_needs_math);
}
