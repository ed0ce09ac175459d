/*
 * header_arena.c — where a tensor's bytes are: the pointer macros and the
 * arena (or, tiered, one arena per region) that PREFIX_DEFINE_ARENA
 * defines.
 *
 * The pointer macros take what the layout needs: one arena, or the
 * regions' bases with tiers, and the caller's io[] buffers with --io
 * separate.  Code written for another layout then fails to build instead
 * of reading the wrong memory.  Typed variants (PREFIX_TENSOR_F32, ...)
 * spare a runtime the cast from void *, which C++ does not make
 * implicitly.  Each arena is aligned to the plan's alignment in the
 * spelling of the compiler at hand.
 */
#include "header_parts.h"

/* C types of the typed pointer macros; half floats are their raw bits. */
static const char *const typed[][2] = {
	{"F32", "float"}, {"F64", "double"}, {"I8", "int8_t"},
	{"U8", "uint8_t"}, {"I16", "int16_t"}, {"U16", "uint16_t"},
	{"I32", "int32_t"}, {"U32", "uint32_t"}, {"I64", "int64_t"},
	{"U64", "uint64_t"}, {"BOOL", "uint8_t"}, {"F16", "uint16_t"},
	{"BF16", "uint16_t"},
};

static void write_ptr_macros(const Hdr *h)
{
	const char *args = h->nreg ? "bases" : "arena";
	const char *base = h->nreg ? "(bases)[@_tensors[i].region]" :
			   "(arena)";

	if (h->nreg)
		hdr_tmpl(h, "/* Tensor i's bytes, where bases[r] is the start of "
			 "region r's arena");
	else
		hdr_tmpl(h, "/* Tensor i's bytes inside an arena laid out by "
			 "this plan");
	hdr_tmpl(h, h->p->io_separate ? ", io[] the\n * caller's buffers for "
		 "the graph's inputs and outputs. */\n" : ". */\n");
	fprintf(h->f, "#define %s_TENSOR_PTR(%s%s, i) \\\n\t", h->up, args,
		h->p->io_separate ? ", bufs" : "");
	if (h->p->io_separate)
		hdr_tmpl(h, "(@_tensors[i].io >= 0 ? (void *)(bufs)[@_tensors[i]."
			 "io] : \\\n\t ");
	fputs("((void *)((uint8_t *)", h->f);
	hdr_tmpl(h, base);
	hdr_tmpl(h, h->p->io_separate ? " + @_tensors[i].offset)))\n" :
		 " + @_tensors[i].offset))\n");
	hdr_tmpl(h, "#define $_TENSOR_SIZE(i) (@_tensors[i].bytes)\n"
		 "#define $_TENSOR_NUMEL(i) (@_tensors[i].numel)\n"
		 "/* Typed: the arguments of $_TENSOR_PTR; half floats as their "
		 "bits. */\n");
	for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
		fprintf(h->f, "#define %s_TENSOR_%s(...) ((%s *)%s_TENSOR_PTR("
			"__VA_ARGS__))\n", h->up, typed[i][0], typed[i][1],
			h->up);
	hdr_tmpl(h, "/* Weight or constant i in the blob of arenac --weights. "
		 "*/\n#define $_WEIGHT_PTR(weights, i) \\\n"
		 "\t((const void *)((const uint8_t *)(weights) + "
		 "@_tensors[i].weights_offset))\n\n");
}

/* One arena's definition in one compiler family's spelling, with its
 * section hook after the declarator (a tiered plan's: its region's). */
static void put_arena_def(const Hdr *h, const char *const *def, int r)
{
	int64_t n = h->nreg ? h->p->regions[r].used_bytes : h->p->arena_bytes;

	hdr_tmpl(h, def[0]);
	if (h->nreg)
		fprintf(h->f, "uint8_t %s_arena_%s[%lld]", h->lo, h->rlo[r],
			(long long)(n > 0 ? n : 1));
	else
		fprintf(h->f, "uint8_t %s_arena[%lld]", h->lo,
			(long long)(n > 0 ? n : 1));
	hdr_tmpl(h, def[1]);
	if (h->nreg)
		fprintf(h->f, " %s_ARENA_%s_SECTION", h->up, h->rup[r]);
	else
		hdr_tmpl(h, " $_ARENA_SECTION");
	fputs(";\n", h->f);
}

void hdr_write_arena(const Hdr *h)
{
	/* How each compiler family spells an aligned definition: the line
	 * choosing it, then what goes before and after the declarator. */
	static const char *const defs[][3] = {
		{"#if defined(__cplusplus) && __cplusplus >= 201103L\n",
		 "alignas($_ARENA_ALIGN) ", ""},
		{"#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= "
		 "201112L\n", "_Alignas($_ARENA_ALIGN) ", ""},
		{"#elif defined(__GNUC__)\n", "",
		 " __attribute__((aligned($_ARENA_ALIGN)))"},
		{"#elif defined(_MSC_VER)\n", "__declspec(align($_ARENA_ALIGN)) ",
		 ""},
	};

	write_ptr_macros(h);
	if (!h->nreg) {
		hdr_tmpl(h, "extern uint8_t @_arena[];\n#ifdef $_DEFINE_ARENA\n"
			 "/* The arena's section hook: an attribute placing it, "
			 "such as a GNU\n * __attribute__((section(...))) naming "
			 "a section of your linker script. */\n"
			 "#ifndef $_ARENA_SECTION\n#define $_ARENA_SECTION\n"
			 "#endif\n");
		for (int i = 0; i < 4; i++) {
			hdr_tmpl(h, defs[i][0]);
			put_arena_def(h, defs[i] + 1, 0);
		}
		hdr_tmpl(h, "#else\n#error \"define @_arena aligned to "
			 "$_ARENA_ALIGN for this compiler\"\n#endif\n#endif\n\n");
		return;
	}
	for (int r = 0; r < h->nreg; r++)
		fprintf(h->f, "extern uint8_t %s_arena_%s[];\n", h->lo,
			h->rlo[r]);
	hdr_tmpl(h, "extern uint8_t *const @_arenas[$_NUM_REGIONS];\n"
		 "#ifdef $_DEFINE_ARENA\n"
		 "/* Each arena's section hook: an attribute placing it, such as "
		 "a GNU\n * __attribute__((section(...))) naming a section of "
		 "your linker script;\n * $_ARENA_SECTION, the hook of every "
		 "layout, places those not given\n * their own. */\n"
		 "#ifndef $_ARENA_SECTION\n#define $_ARENA_SECTION\n#endif\n");
	for (int r = 0; r < h->nreg; r++)
		fprintf(h->f, "#ifndef %1$s_ARENA_%2$s_SECTION\n"
			"#define %1$s_ARENA_%2$s_SECTION %1$s_ARENA_SECTION\n"
			"#endif\n", h->up, h->rup[r]);
	for (int i = 0; i < 4; i++) {
		hdr_tmpl(h, defs[i][0]);
		for (int r = 0; r < h->nreg; r++)
			put_arena_def(h, defs[i] + 1, r);
	}
	hdr_tmpl(h, "#else\n#error \"define the @_arena_ arrays aligned to "
		 "$_ARENA_ALIGN for this compiler\"\n#endif\n"
		 "uint8_t *const @_arenas[$_NUM_REGIONS] = {");
	for (int r = 0; r < h->nreg; r++)
		fprintf(h->f, "%s%s_arena_%s", r ? ", " : "", h->lo, h->rlo[r]);
	fputs("};\n#endif\n\n", h->f);
}
