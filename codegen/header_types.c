/*
 * header_types.c — the header's enums and the types of its tables.
 *
 * Codes keep ONNX's numbering (TensorProto.DataType,
 * AttributeProto.AttributeType) so that a runtime that already speaks
 * ONNX can use them unchanged.  The struct fields are documented where
 * they are declared, since that is what a runtime author reads; their
 * widths are the ones header_limits.c checks.
 */
#include "header_parts.h"

static const char *const attr_names[] = {"UNDEFINED", "FLOAT", "INT",
					 "STRING", "TENSOR", "GRAPH",
					 "FLOATS", "INTS", "STRINGS"};

const char *hdr_attr_type_name(ArAttrType t)
{
	return (unsigned)t < sizeof attr_names / sizeof attr_names[0] ?
	       attr_names[t] : attr_names[0];
}

/* enum PREFIX_name { PREFIX_WHAT_<NAMES[0]> = 0, ... }, names upper-cased. */
static void write_enum(const Hdr *h, const char *name, const char *what,
		       const char *const *names, int n)
{
	ArText out = ar_text_on(h->f);

	ar_text_printf(&out, "typedef enum %s_%s {\n", h->lo, name);
	for (int i = 0; i < n; i++) {
		ar_text_printf(&out, "\t%s_%s_", h->up, what);
		ar_text_upper(&out, names[i]);
		ar_text_printf(&out, " = %d%s\n", i, i + 1 < n ? "," : "");
	}
	ar_text_printf(&out, "} %s_%s;\n\n", h->lo, name);
	ar_text_close(&out);
}

static void write_enums(const Hdr *h)
{
	const char *dtypes[AR_DT_COUNT], *kinds[AR_TK_CONSTANT + 1];
	const char *phases[AR_PHASE_UPDATE + 1];

	for (int i = 0; i < AR_DT_COUNT; i++)
		dtypes[i] = ar_dtype_name((ArDType)i);
	for (int i = 0; i <= AR_TK_CONSTANT; i++)
		kinds[i] = ar_kind_name((ArTensorKind)i);
	for (int i = 0; i <= AR_PHASE_UPDATE; i++)
		phases[i] = ar_phase_name((ArPhase)i);
	hdr_tmpl(h, "/* Element types, numbered as ONNX "
		 "TensorProto.DataType. */\n");
	write_enum(h, "dtype", "DT", dtypes, AR_DT_COUNT);
	write_enum(h, "kind", "KIND", kinds, AR_TK_CONSTANT + 1);
	hdr_tmpl(h, "/* Numbered as ONNX AttributeProto.AttributeType. */\n");
	write_enum(h, "attr_type", "ATTR", attr_names,
		   (int)(sizeof attr_names / sizeof attr_names[0]));
	hdr_tmpl(h, "/* Part of a training step a step belongs to (inference: "
		 "all FORWARD). */\n");
	write_enum(h, "phase", "PHASE", phases, AR_PHASE_UPDATE + 1);
}

void hdr_write_types(const Hdr *h)
{
	write_enums(h);
	hdr_tmpl(h,
		 "typedef struct @_tensor {\n"
		 "\tconst char *name;         /* 0 with arenac --strip-names */\n"
		 "\tuint8_t dtype;            /* @_dtype */\n"
		 "\tuint8_t kind;             /* @_kind */\n"
		 "\tint8_t rank;              /* -1: never computed (an unused "
		 "output) */\n"
		 "\tconst int32_t *dims;\n"
		 "\tuint32_t bytes;           /* unpadded */\n");
	if (h->nreg)
		hdr_tmpl(h, "\tuint32_t offset;          /* in its region's "
			 "arena, or $_NOT_IN_ARENA */\n"
			 "\tuint8_t region;           /* index into @_regions "
			 "(0 when not in an arena) */\n");
	else
		hdr_tmpl(h, "\tuint32_t offset;          /* in the arena, or "
			 "$_NOT_IN_ARENA */\n");
	hdr_tmpl(h,
		 "\tint32_t first, last;      /* live over these steps, "
		 "inclusive; -1 if not in the arena */\n"
		 "\tint32_t alias_of;         /* shares the bytes of this "
		 "tensor by design, or -1 */\n"
		 "\tuint32_t alias_offset;    /* at this byte offset inside "
		 "alias_of */\n"
		 "\tint32_t inplace_of;       /* overwrites this input, which "
		 "dies at this step, or -1 */\n"
		 "\tuint32_t weights_offset;  /* in the weights blob of arenac "
		 "--weights, or $_NOT_IN_ARENA */\n"
		 "\tuint32_t numel;           /* elements: the product of the "
		 "dims (1 for rank 0) */\n"
		 "\tint32_t io;               /* --io separate: index into the "
		 "caller's buffers io[]\n"
		 "\t                             (inputs, then outputs), or -1 "
		 "*/\n"
		 "\tint32_t quant;            /* a quantized tensor's scale and "
		 "zero point: an index\n"
		 "\t                             into @_quants, or $_NO_QUANT "
		 "*/\n"
		 "\tuint32_t bounded;         /* bit i: axis i's extent is known "
		 "only at run time,\n"
		 "\t                             dims[i] being its bound (bytes "
		 "are the bound's) */\n"
		 "} @_tensor;\n\n"
		 "/* real = (q - zero_point) * scale, the tensors named here "
		 "holding the\n"
		 " * numbers (in the weights blob, or the arena when computed at "
		 "run time). */\n"
		 "typedef struct @_quant {\n"
		 "\tint32_t scale;            /* tensor index */\n"
		 "\tint32_t zero_point;       /* tensor index, or -1: zero */\n"
		 "\tint32_t axis;             /* the scales run along it, or -1: "
		 "one scale */\n"
		 "\tuint32_t block;           /* elements per scale along axis "
		 "(blocked), or 0 */\n"
		 "} @_quant;\n\n"
		 "typedef struct @_attr {\n"
		 "\tconst char *name;\n"
		 "\tuint8_t type;             /* @_attr_type */\n"
		 "\tuint8_t dtype;            /* TENSOR: its @_dtype */\n"
		 "\tuint16_t count;           /* values behind ints, floats or "
		 "strings; 0 for GRAPH\n"
		 "\t                             and for large TENSOR "
		 "values, which are data */\n"
		 "\tconst int64_t *ints;      /* INT, INTS, integer TENSOR */\n"
		 "\tconst float *floats;      /* FLOAT, FLOATS, float TENSOR */\n"
		 "\tconst char *const *strings; /* STRING, STRINGS */\n"
		 "} @_attr;\n\n"
		 "typedef struct @_step {\n"
		 "\tconst char *op;           /* ONNX op type */\n"
		 "\tuint16_t op_code;         /* @_op: $_OP_<OP> */\n"
		 "\tconst char *domain;       /* \"\" for the default domain */\n"
		 "\tconst char *name;         /* 0 with arenac --strip-names */\n"
		 "\tint32_t node;             /* index in the model's node "
		 "list */\n"
		 "\tconst int32_t *inputs;    /* tensor indices, -1 for an "
		 "omitted optional one */\n"
		 "\tuint16_t ninputs;\n"
		 "\tconst int32_t *outputs;\n"
		 "\tuint16_t noutputs;\n"
		 "\tconst @_attr *attrs;\n"
		 "\tuint16_t nattrs;\n"
		 "\tuint8_t noop;             /* outputs already in place "
		 "(views, elided concat) */\n"
		 "\tint32_t opset;            /* of the op's domain: defaults "
		 "changed across versions */\n"
		 "\tuint8_t phase;            /* @_phase */\n");
	hdr_write_step_fields(h);
	hdr_write_requant_fields(h);
	hdr_tmpl(h, "} @_step;\n\n");
	hdr_write_sub_types(h);
	if (h->nreg)
		hdr_tmpl(h, "typedef struct @_region {\n"
			 "\tconst char *name;         /* as given to --memory */\n"
			 "\tuint32_t size;            /* bytes of its arena */\n"
			 "\tuint32_t weights_bytes;   /* [0, weights_bytes) holds "
			 "the weights */\n"
			 "} @_region;\n\n");
}
