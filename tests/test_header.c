/*
 * test_header.c — the C header writer on a hand-made plan: the macros and
 * comment, hostile names, determinism, and the header compiled with gcc,
 * clang and g++ at -Werror by tests/header_check.c, whose read-back of the
 * tables must match the plan in memory line for line.  The same for the
 * fixture laid out over three memories: the tiered header's region macros,
 * arenas, section hooks and region column; and laid out with its inputs
 * and outputs in the caller's buffers (--io separate).  Every narrow field
 * of the tables refuses a value it cannot hold.
 */
#include "testutil.h"

#include <math.h>
#include <unistd.h>

#include "emit.h"
#include "fixture_plan.h"
#include "graph_build.h"
#include "ops.h"
#include "sanitize.h"

static char *header_text(const Fixture *fx, const char *prefix)
{
	ArEmitInfo info = {.model_path = "models/fx.onnx", .prefix = prefix,
			   .options = "--align 16 */", .dot_weights = false};
	ArError err = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(ar_write_header(f, fx->g, &fx->p, &info, &err), AR_OK);
	fclose(f);
	return buf;
}

/* Lines of C comments (after the first "/" "*" until the closing one) must
 * never hold a second opener or a closer: a name cannot end a comment. */
static void assert_comments_sealed(const char *s)
{
	const char *p = s;
	while ((p = strstr(p, "/*"))) {
		const char *end = strstr(p + 2, "*/");
		assert_non_null(end);
		for (const char *q = p + 2; q < end; q++)
			assert_false(q[0] == '/' && q[1] == '*');
		p = end + 2;
	}
}

static void test_macros(void **state)
{
	Fixture fx;
	char *h;

	fixture_init(&fx);
	h = header_text(&fx, "m");
	assert_non_null(strstr(h, "#define M_ARENA_SIZE 1840u\n"));
	assert_non_null(strstr(h, "#define M_ARENA_ALIGN 16\n"));
	assert_non_null(strstr(h, "#define M_NUM_TENSORS 11\n"));
	assert_non_null(strstr(h, "#define M_NUM_STEPS 5\n"));
	/* The model's 7 attributes and 4 ONNX defaults (Conv's auto_pad,
	 * dilations, strides; Gemm's transA). */
	assert_non_null(strstr(h, "#define M_NUM_ATTRS 11\n"
			       "#define M_NUM_QUANTS 0\n"
			       "#define M_IO_SEPARATE 0\n"));
	assert_non_null(strstr(h, "#define M_INPUT_in_0_NUMEL 192u\n"));
	/* The tables: declared for every file, defined for one. */
	assert_non_null(strstr(h, "extern const m_tensor m_tensors["
			       "M_NUM_TENSORS + 1];\n"));
	assert_non_null(strstr(h, "extern const int32_t m_inputs["
			       "M_NUM_INPUTS + 1];\n"));
	assert_non_null(strstr(h, "extern const uint8_t m_weights["
			       "M_WEIGHTS_SIZE > 0 ? M_WEIGHTS_SIZE : 1];\n"));
	assert_non_null(strstr(h, "#ifdef M_DEFINE_TABLES\n"));
	assert_non_null(strstr(h, "const int32_t m_inputs[M_NUM_INPUTS + 1] "
			       "= {0, 1, -1};\n"));
	assert_null(strstr(h, "static const m_tensor"));
	assert_non_null(strstr(h, "#define M_TENSOR_F32(...) ((float *)"
			       "M_TENSOR_PTR(__VA_ARGS__))\n"));
	/* c1: 256 elements, no caller buffer, no quantization; the Reshape:
	 * a no-op (noop 1, opset 1), forward. */
	assert_non_null(strstr(h, "/* 4 */ {\"c1\", M_DT_FLOAT32, "
			       "M_KIND_ACTIVATION, 4, m_dims + 11, 1024u, "
			       "816u, 0, 1, -1, 0u, -1, M_NOT_IN_ARENA, 256u, "
			       "-1, M_NO_QUANT, 0x0u},\n"));
	assert_non_null(strstr(h, "/* 2 */ {\"Reshape\", M_OP_RESHAPE, \"\", "
			       "\"flatten\", 2, m_step_io + 6, 2, m_step_io + 8, "
			       "1, m_attrs + 6, 0, 1, 1, M_PHASE_FORWARD},\n"));
	/* The op enum: the plan's ops in name order, numbered densely. */
	assert_non_null(strstr(h, "typedef enum m_op {\n\tM_OP_ADD = 0,\n"
			       "\tM_OP_CONV = 1,\n\tM_OP_GEMM = 2,\n"
			       "\tM_OP_RELU = 3,\n\tM_OP_RESHAPE = 4,\n"
			       "\tM_NUM_OPS = 5\n} m_op;\n"));
	/* Conv's defaults after its own attributes, ONNX's values: one
	 * dilation and stride per spatial axis. */
	assert_non_null(strstr(h, "{\"group\", M_ATTR_INT, M_DT_UNDEFINED, 1, "
			       "m_attr_ints + 6, m_attr_floats + 0, "
			       "m_attr_strings + 0},\n\t{\"auto_pad\", "
			       "M_ATTR_STRING,"));
	assert_non_null(strstr(h, "\t{\"strides\", M_ATTR_INTS, "
			       "M_DT_UNDEFINED, 2, m_attr_ints + 9,"));
	/* Each input and output by position too, with its type. */
	assert_non_null(strstr(h, "#define M_INPUT_0_INDEX 0\n"
			       "#define M_INPUT_0_OFFSET 48u\n"
			       "#define M_INPUT_0_SIZE 768u\n"
			       "#define M_INPUT_0_NUMEL 192u\n"
			       "#define M_INPUT_0_DTYPE 1 /* M_DT_FLOAT32 */\n"
			       "#define M_INPUT_0_RANK 4\n"
			       "#define M_INPUT_0_SHAPE {1, 3, 8, 8}\n"
			       "#define M_INPUT_0_BYTES 768u\n"));
	assert_non_null(strstr(h, "#define M_OUTPUT_0_SHAPE {1, 10}\n"));
	/* A float model: no scale, no requantisation columns. */
	assert_null(strstr(h, "_SCALE "));
	assert_null(strstr(h, "M_HAS_REQUANT"));
	assert_non_null(strstr(h, "#define M_STEP_REQUANT_COUNT(s) 0u\n"));
	/* The model by its file name, wherever it was. */
	assert_non_null(strstr(h, "Memory plan for fx.onnx, "));
	assert_null(strstr(h, "models/"));
	/* "in:0" and "in/0" both sanitise to in_0: the second gets _2. */
	assert_non_null(strstr(h, "#define M_INPUT_in_0_OFFSET 48u\n"));
	assert_non_null(strstr(h, "#define M_INPUT_in_0_SIZE 768u\n"));
	assert_non_null(strstr(h, "#define M_INPUT_in_0_2_OFFSET 0u\n"));
	assert_non_null(strstr(h, "#define M_OUTPUT_y_OFFSET 96u\n"));
	assert_non_null(strstr(h, "\nconst m_tensor m_tensors[M_NUM_TENSORS + "
			       "1] = {\n"));
	assert_non_null(strstr(h, "efficiency 100.0%"));
	assert_non_null(strstr(h, "peak step:   0 of 5: Conv \"conv\""));
	assert_non_null(strstr(h, "optimal:     yes"));
	assert_non_null(strstr(h, "arenac:      " ARENAC_VERSION));
	/* The hostile names reach string literals escaped ... */
	assert_non_null(strstr(h, "\"*/ #include <x>\""));
	assert_non_null(strstr(h, "\"y\\\"\\\\\\n\\?\\?/\""));
	/* ... never a line of their own, and comments stay closed. */
	assert_null(strstr(h, "\n#include <x>"));
	assert_comments_sealed(h);
	free(h);
	fixture_free(&fx);
}

static void test_deterministic_and_prefix(void **state)
{
	Fixture fx;
	char *a, *b;

	fixture_init(&fx);
	a = header_text(&fx, "net");
	b = header_text(&fx, "net");
	assert_string_equal(a, b);
	free(b);
	/* A file name as prefix: sanitised, not refused. */
	b = header_text(&fx, "3d-net");
	assert_non_null(strstr(b, "#define M_3D_NET_ARENA_SIZE 1840u"));
	assert_non_null(strstr(b, "const m_3d_net_step m_3d_net_steps["));
	free(a), free(b);
	fixture_free(&fx);
}

static void test_sanitize(void **state)
{
	const char *names[] = {"a.b", "a-b", "", "a_b", "__x__"};
	char **v = ar_c_idents_unique(names, 5, "t");
	char *s;

	assert_string_equal(v[0], "a_b");
	assert_string_equal(v[1], "a_b_2");
	assert_string_equal(v[2], "t2");
	assert_string_equal(v[3], "a_b_3");
	assert_string_equal(v[4], "x");
	ar_strv_free(v, 5);
	s = ar_dot_label("a\\N\nb", 0);
	assert_string_equal(s, "a\\\\N?b");
	free(s);
	s = ar_dot_label("abcdefghij", 6);
	assert_string_equal(s, "abc...");
	free(s);
}

/* What header_check must print for the fixture, from the plan in memory. */
static void hex(FILE *f, const char *s)
{
	fputc(' ', f);
	if (!*s)
		fputc('-', f);
	for (; *s; s++)
		fprintf(f, "%02x", (unsigned char)*s);
}

static void ids(FILE *f, const int *v, int n)
{
	fputc(' ', f);
	if (!n)
		fputc('-', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", v[i]);
}

static char *expected_lines(const Fixture *fx)
{
	const ArGraph *g = fx->g;
	const ArPlan *p = &fx->p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ArAttr *dflt;
	int nd;

	fprintf(f, "arena %lld %lld %lld %lld %d\n", (long long)p->arena_bytes,
		(long long)p->align, (long long)p->lower_bound,
		(long long)p->weights_bytes, p->peak_step);
	for (int r = 0; r < p->nregions; r++) {
		fprintf(f, "region %d", r);
		hex(f, p->regions[r].name);
		fprintf(f, " %lld %lld\n", (long long)p->regions[r].used_bytes,
			(long long)p->regions[r].weights_bytes);
	}
	for (int i = 0; i < g->ntensors; i++) {
		const ArTensor *t = &g->tensors[i];
		const ArSlot *s = &p->slots[i];
		int dims[AR_MAX_RANK];
		for (int d = 0; d < t->rank; d++)
			dims[d] = (int)t->dims[d];
		fprintf(f, "tensor %d", i);
		hex(f, t->name);
		fprintf(f, " %d %d %d", t->dtype, t->kind, t->rank);
		ids(f, dims, t->rank > 0 ? t->rank : 0);
		fprintf(f, " %lld", (long long)t->bytes);
		if (s->planned)
			fprintf(f, " %lld", (long long)s->offset);
		else
			fputs(" -", f);
		if (p->nregions && s->planned)
			fprintf(f, " %d", s->region);
		else if (p->nregions)
			fputs(" -", f);
		fprintf(f, " %d %d %d %lld %d %lld %d %u", s->first, s->last,
			s->alias_of, (long long)s->alias_offset, s->inplace_of,
			(long long)ar_numel(t), s->io, (unsigned)t->bounded);
		if (t->quant.scale >= 0 || t->quant.zero_point >= 0)
			fprintf(f, " %d,%d,%d,%lld\n", t->quant.scale,
				t->quant.zero_point, t->quant.axis,
				(long long)t->quant.block);
		else
			fputs(" -\n", f);
	}
	fprintf(f, "io %d", p->io_separate);
	ids(f, g->inputs, g->ninputs);
	ids(f, g->outputs, g->noutputs);
	fputc('\n', f);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		fprintf(f, "step %d", s);
		hex(f, n->op);
		hex(f, n->domain);
		hex(f, n->name);
		ids(f, n->inputs, n->nexplicit);
		ids(f, n->outputs, n->noutputs);
		/* Only the Reshape's output is a view. */
		assert_int_equal(p->noop[s], s == 2);
		fprintf(f, " %d %d\n", s == 2, n->phase);
		nd = ar_attr_defaults(g, n, &dflt);
		for (int a = 0; a < n->nattrs + nd; a++) {
			const ArAttr *at = a < n->nattrs ? &n->attrs[a] :
					   &dflt[a - n->nattrs];
			fprintf(f, "attr %d", s);
			hex(f, at->name);
			switch (at->type) {
			case AR_ATTR_INT:
				fprintf(f, " 2 1 %lld", (long long)at->i);
				break;
			case AR_ATTR_FLOAT:
				fprintf(f, " 1 1 %.9g", (double)at->f);
				break;
			case AR_ATTR_STRING:
				fputs(" 3 1", f);
				hex(f, at->s);
				break;
			default:
				fprintf(f, " 7 %d", at->nints);
				for (int j = 0; j < at->nints; j++)
					fprintf(f, " %lld",
						(long long)at->ints[j]);
			}
			fputc('\n', f);
		}
		for (int a = 0; a < nd; a++) {
			free(dflt[a].s);
			free(dflt[a].ints);
		}
		free(dflt);
	}
	fclose(f);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/*
 * Builds header_check against fx's header (with extra flags) and a second
 * file whose body reads one macro: that TU must not warn about the tables
 * it leaves alone, nor define the arenas a second time.  Each compiler's
 * read-back must be expected_lines; check, when given, then runs on each
 * binary in dir (as $1).
 */
static void build_and_read_back(const Fixture *fx, const char *few_body,
				const char *flags, const char *check)
{
	static const char *const compilers[][2] = {
		{"gcc", "-std=c99 -Wall -Wextra -Werror -pedantic -x c"},
		{"clang", "-std=c99 -Wall -Wextra -Werror -pedantic -x c"},
		{"g++", "-std=c++11 -Wall -Wextra -Werror -x c++"},
	};
	char dir[] = "/tmp/arenac_hdrXXXXXX", path[4200], cmd[8192];
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m",
			   .options = "", .dot_weights = false};
	ArError err = {0};
	char *want, *got;
	FILE *f;
	int ran = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/m.h", dir);
	f = fopen(path, "w");
	assert_int_equal(ar_write_header(f, fx->g, &fx->p, &info, &err), AR_OK);
	fclose(f);
	snprintf(path, sizeof path, "%s/few.c", dir);
	f = fopen(path, "w");
	fprintf(f, "#include \"m.h\"\nint few(void);\n"
		"int few(void) { %s }\n", few_body);
	fclose(f);
	want = expected_lines(fx);
	for (int c = 0; c < 3; c++) {
		snprintf(cmd, sizeof cmd, "command -v %s >/dev/null",
			 compilers[c][0]);
		if (system(cmd) != 0) {
			printf("skipped: no %s\n", compilers[c][0]);
			continue;
		}
		snprintf(cmd, sizeof cmd, "%1$s %2$s -c %3$s/few.c -o "
			 "%3$s/few.o && %1$s %2$s -I%3$s "
			 "'-DARENAC_HEADER=\"m.h\"' -DLO=m -DUP=M "
			 "-DM_DEFINE_ARENA -DM_DEFINE_TABLES %4$s "
			 "tests/header_check.c -x none "
			 "%3$s/few.o -o %3$s/check && %3$s/check > "
			 "%3$s/out.txt", compilers[c][0], compilers[c][1],
			 dir, flags);
		assert_int_equal(system(cmd), 0);
		snprintf(path, sizeof path, "%s/out.txt", dir);
		got = slurp(path);
		assert_string_equal(got, want);
		free(got);
		if (check) {
			snprintf(cmd, sizeof cmd, "set -- %s/check; %s", dir,
				 check);
			assert_int_equal(system(cmd), 0);
		}
		ran++;
	}
	assert_true(ran > 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(want);
}

static void test_compiles_and_reads_back(void **state)
{
	Fixture fx;

	fixture_init(&fx);
	/* The second file reads the tables through their declarations. */
	build_and_read_back(&fx, "return (int)(M_ARENA_SIZE + "
			    "m_tensors[1].bytes + m_steps[0].ninputs);", "",
			    NULL);
	fixture_free(&fx);
}

static void test_tiered_macros(void **state)
{
	Fixture fx;
	char *h, *again;

	fixture_tiered(&fx);
	h = header_text(&fx, "m");
	/* "fast.mem" and "fast-mem" meet in FAST_MEM: the second gets _2. */
	assert_non_null(strstr(h, "#define M_NUM_REGIONS 3\n"
			       "#define M_REGION_FAST_MEM 0\n"
			       "#define M_ARENA_FAST_MEM_SIZE 144u\n"
			       "#define M_REGION_FAST_MEM_2 1\n"
			       "#define M_ARENA_FAST_MEM_2_SIZE 768u\n"
			       "#define M_REGION_SLOW 2\n"
			       "#define M_ARENA_SLOW_SIZE 11728u\n"
			       "#define M_WEIGHTS_REGION M_REGION_SLOW\n"
			       "#define M_WEIGHTS_RESERVED 10704u\n"));
	/* No one arena: single-arena code must not build against this. */
	assert_null(strstr(h, "M_ARENA_SIZE"));
	assert_null(strstr(h, " m_arena["));
	assert_non_null(strstr(h, "#define M_INPUT_in_0_REGION "
			       "M_REGION_FAST_MEM_2\n"
			       "#define M_INPUT_in_0_OFFSET 0u\n"));
	assert_non_null(strstr(h, "#define M_OUTPUT_y_PTR(bases) ((void *)"
			       "((uint8_t *)(bases)[M_OUTPUT_y_REGION] + "
			       "M_OUTPUT_y_OFFSET))\n"));
	/* Each memory's hook, PREFIX_ARENA_SECTION (every layout's) unless
	 * given; ARENAC_RT_BIND binds the regions by PREFIX_HAS_REGIONS. */
	assert_non_null(strstr(h, "#ifndef M_ARENA_SECTION\n"
			       "#define M_ARENA_SECTION\n#endif\n"
			       "#ifndef M_ARENA_FAST_MEM_SECTION\n"));
	assert_non_null(strstr(h, "#ifndef M_ARENA_FAST_MEM_2_SECTION\n"
			       "#define M_ARENA_FAST_MEM_2_SECTION "
			       "M_ARENA_SECTION\n#endif\n"));
	assert_non_null(strstr(h, "#define M_HAS_REGIONS 1\n"));
	assert_non_null(strstr(h, "#define M_STEP_SCRATCH_REGION(s) "));
	assert_non_null(strstr(h, "_Alignas(M_ARENA_ALIGN) uint8_t "
			       "m_arena_fast_mem_2[768] "
			       "M_ARENA_FAST_MEM_2_SECTION;\n"));
	assert_non_null(strstr(h, "uint8_t *const m_arenas[M_NUM_REGIONS] = "
			       "{m_arena_fast_mem, m_arena_fast_mem_2, "
			       "m_arena_slow};\n"));
	assert_non_null(strstr(h, "\t{\"slow\", M_ARENA_SLOW_SIZE, 10704u}\n"));
	/* c1: offset 10704 in region 2. */
	assert_non_null(strstr(h, "/* 4 */ {\"c1\", M_DT_FLOAT32, "
			       "M_KIND_ACTIVATION, 4, m_dims + 11, 1024u, "
			       "10704u, 2, 0, 1, "));
	/* The comment block: every region, the weights' place. */
	assert_non_null(strstr(h, " * region 0:    fast.mem "
			       "(M_ARENA_FAST_MEM_SIZE): 144 of 256 bytes "
			       "used,\n *              bandwidth 5e+10 bytes/s, "
			       "traffic 1000 bytes, 2e-08 s\n"));
	assert_non_null(strstr(h, " * region 2:    slow (M_ARENA_SLOW_SIZE): "
			       "11728 of 65536 bytes used,\n *              "
			       "bandwidth not given, traffic 3000 bytes\n"
			       " *              [0, 10704) is reserved for the "
			       "weights (M_WEIGHTS_RESERVED)\n"));
	assert_non_null(strstr(h, "-DM_ARENA_FAST_MEM_SECTION='__attribute__"
			       "((section(\".fast_mem\")))'"));
	assert_non_null(strstr(h, "placement:   proven least"));
	assert_comments_sealed(h);
	again = header_text(&fx, "m");
	assert_string_equal(h, again);
	free(again);
	free(h);
	fixture_free(&fx);
}

/* 32-bit offsets bound each region, not their sum. */
static void test_tiered_limits(void **state)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m"};
	ArError err = {0};
	Fixture fx;
	FILE *f = fopen("/dev/null", "w");

	fixture_tiered(&fx);
	fx.regions[0].used_bytes = (int64_t)3 << 30;
	fx.regions[2].used_bytes = (int64_t)3 << 30;
	fx.p.arena_bytes = (int64_t)6 << 30;
	assert_int_equal(ar_write_header(f, fx.g, &fx.p, &info, &err), AR_OK);
	fx.regions[2].used_bytes = (int64_t)4 << 30;
	assert_int_equal(ar_write_header(f, fx.g, &fx.p, &info, &err),
			 AR_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "'slow'"));
	fclose(f);
	fixture_free(&fx);
}

/*
 * The tiered header built by all three compilers reads back as the plan,
 * with each region's macros checked against its array and table entry,
 * and a section hook given on the command line really placing its arena
 * (where objdump can tell).
 */
static void test_tiered_compiles_and_reads_back(void **state)
{
	Fixture fx;

	fixture_tiered(&fx);
	build_and_read_back(&fx, "return (int)(M_ARENA_FAST_MEM_SIZE + "
			    "M_ARENA_SLOW_SIZE + M_WEIGHTS_RESERVED);",
			    "-DTIERED '-DREGIONS=R(FAST_MEM, fast_mem) "
			    "R(FAST_MEM_2, fast_mem_2) R(SLOW, slow)' "
			    "'-DM_ARENA_SLOW_SECTION=__attribute__((section("
			    "\"m_slow\")))'",
			    "! command -v objdump >/dev/null || objdump -t \"$1\" "
			    "| grep -q 'm_slow.*m_arena_slow$'");
	fixture_free(&fx);
}

/* Against fx's header, a file returning good builds at -Werror and one
 * returning bad does not build at all. */
static void assert_builds_only(const Fixture *fx, const char *good,
			       const char *bad)
{
	char dir[] = "/tmp/arenac_hdrXXXXXX", path[4200], cmd[8192];
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m"};
	ArError err = {0};
	FILE *f;

	if (system("command -v gcc >/dev/null") != 0) {
		printf("skipped: no gcc\n");
		return;
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/m.h", dir);
	f = fopen(path, "w");
	assert_int_equal(ar_write_header(f, fx->g, &fx->p, &info, &err), AR_OK);
	fclose(f);
	snprintf(path, sizeof path, "%s/one.c", dir);
	f = fopen(path, "w");
	fputs("#include \"m.h\"\nvoid *one(void *const *bufs);\n"
	      "void *one(void *const *bufs) { (void)bufs; return WHAT; }\n", f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "gcc -std=c99 -Wall -Werror '-DWHAT=%2$s' "
		 "-c %1$s/one.c -o %1$s/one.o", dir, good);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "gcc -std=c99 '-DWHAT=%2$s' -c %1$s/one.c "
		 "-o %1$s/one.o 2>/dev/null", dir, bad);
	assert_int_not_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Code written for one arena does not build against a tiered header,
 * while the same code over the regions' bases does. */
static void test_tiered_rejects_one_arena_code(void **state)
{
	Fixture fx;

	fixture_tiered(&fx);
	assert_builds_only(&fx, "M_TENSOR_PTR(m_arenas, 0)",
			   "M_TENSOR_PTR(m_arena, 0)");
	fixture_free(&fx);
}

/* --io separate: inputs and outputs in the caller's buffers 0, 1, 2. */
static void test_io_separate(void **state)
{
	Fixture fx;
	char *h;

	fixture_io(&fx);
	h = header_text(&fx, "m");
	assert_non_null(strstr(h, "#define M_IO_SEPARATE 1\n"));
	assert_non_null(strstr(h, "#define M_INPUT_in_0_INDEX 0\n"
			       "#define M_INPUT_in_0_IO 0\n"
			       "#define M_INPUT_in_0_SIZE 768u\n"
			       "#define M_INPUT_in_0_NUMEL 192u\n"
			       "#define M_INPUT_in_0_DTYPE 1 /* M_DT_FLOAT32 */\n"
			       "#define M_INPUT_in_0_RANK 4\n"
			       "#define M_INPUT_in_0_SHAPE {1, 3, 8, 8}\n"
			       "#define M_INPUT_in_0_BYTES 768u\n/*"));
	assert_non_null(strstr(h, "#define M_OUTPUT_y_IO 2\n"));
	/* No offset or arena pointer for what is not in the arena. */
	assert_null(strstr(h, "M_INPUT_in_0_OFFSET"));
	assert_null(strstr(h, "M_INPUT_in_0_PTR"));
	assert_non_null(strstr(h, "#define M_TENSOR_PTR(arena, bufs, i) \\\n"
			       "\t(m_tensors[i].io >= 0 ? (void *)(bufs)"
			       "[m_tensors[i].io] : \\\n"));
	assert_non_null(strstr(h, " * io:          graph inputs and outputs "
			       "in the caller's buffers (--io separate)\n"));
	/* in/0: not in the arena, buffer 1. */
	assert_non_null(strstr(h, "/* 1 */ {\"in/0\", M_DT_FLOAT32, "
			       "M_KIND_INPUT, 2, m_dims + 4, 40u, "
			       "M_NOT_IN_ARENA, -1, -1, -1, 0u, -1, "
			       "M_NOT_IN_ARENA, 10u, 1, M_NO_QUANT, 0x0u},\n"));
	assert_comments_sealed(h);
	free(h);
	build_and_read_back(&fx, "return (int)(M_ARENA_SIZE + M_OUTPUT_y_IO);",
			    "", NULL);
	assert_builds_only(&fx, "M_TENSOR_PTR(m_arena, bufs, 0)",
			   "M_TENSOR_PTR(m_arena, 0)");
	fixture_free(&fx);
}

/* A value past a narrow field: ar_write_header refuses, naming it. */
static void assert_refused(const Fixture *fx, const char *what)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m"};
	ArError err = {0};
	FILE *f = fopen("/dev/null", "w");

	assert_int_equal(ar_write_header(f, fx->g, &fx->p, &info, &err),
			 AR_EXIT_USAGE);
	if (!strstr(err.msg, what))
		fail_msg("'%s' does not say '%s'", err.msg, what);
	fclose(f);
}

/* --strip-names: no tensor or step name in the tables, the ops kept (the
 * runtime's resolver matches them). */
static void test_strip_names(void **state)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m",
			   .options = "", .strip_names = true};
	ArError err = {0};
	Fixture fx;
	char *h = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&h, &len);

	fixture_init(&fx);
	assert_int_equal(ar_write_header(f, fx.g, &fx.p, &info, &err), AR_OK);
	fclose(f);
	assert_non_null(strstr(h, "/* 4 */ {0, M_DT_FLOAT32, "));
	assert_non_null(strstr(h, "/* 2 */ {\"Reshape\", M_OP_RESHAPE, \"\", 0, "
			       "2, "));
	assert_null(strstr(h, "\"flatten\""));
	free(h);
	fixture_free(&fx);
}

/* Names and values of node n's defaults, "name=v,v ..." joined by " ". */
static char *defaults_text(const ArGraph *g, const ArNode *n)
{
	ArAttr *d;
	int nd = ar_attr_defaults(g, n, &d);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (int i = 0; i < nd; i++) {
		fprintf(f, "%s%s=", i ? " " : "", d[i].name);
		if (d[i].type == AR_ATTR_INT)
			fprintf(f, "%lld", (long long)d[i].i);
		else if (d[i].type == AR_ATTR_FLOAT)
			fprintf(f, "%g", (double)d[i].f);
		else if (d[i].type == AR_ATTR_STRING)
			fputs(d[i].s, f);
		for (int j = 0; d[i].type == AR_ATTR_INTS && j < d[i].nints; j++)
			fprintf(f, "%s%lld", j ? "," : "", (long long)d[i].ints[j]);
		free(d[i].s);
		free(d[i].ints);
	}
	free(d);
	fclose(f);
	return buf;
}

/* The op table's defaults per version and shape: a Conv with auto_pad
 * gets no pads and W's kernel shape; Softmax's axis is 1 before opset 13
 * and -1 from it; MaxPool-8 has no ceil_mode or dilations yet. */
static void test_attr_defaults(void **state)
{
	ArGraph *g = ar_graph_new("d");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, 3, 8, 8);
	int w = gb_tensor(g, "w", AR_TK_WEIGHT, 4, 3, 5, 3);
	int y = gb_tensor(g, "y", AR_TK_ACTIVATION, 1, 4, 8, 8);
	int sm = gb_tensor(g, "s", AR_TK_ACTIVATION, 1, 4, 8, 8);
	int pm = gb_tensor(g, "p", AR_TK_OUTPUT, 1, 4, 4, 4);
	int cin[] = {x, w}, c, s, mp;
	char *t;

	c = gb_node(g, "Conv", cin, 2, y);
	ar_node_add_attr(g, &g->nodes[c], "auto_pad", AR_ATTR_STRING)->s =
		ar_xstrdup("SAME_UPPER");
	s = gb_node(g, "Softmax", &y, 1, sm);
	mp = gb_node(g, "MaxPool", &sm, 1, pm);
	g->nodes[mp].opset = 8;
	t = defaults_text(g, &g->nodes[c]);
	assert_string_equal(t, "dilations=1,1 group=1 kernel_shape=5,3 "
			    "strides=1,1");
	free(t);
	t = defaults_text(g, &g->nodes[s]);
	assert_string_equal(t, "axis=-1");
	free(t);
	g->nodes[s].opset = 11;
	t = defaults_text(g, &g->nodes[s]);
	assert_string_equal(t, "axis=1");
	free(t);
	t = defaults_text(g, &g->nodes[mp]);
	assert_string_equal(t, "auto_pad=NOTSET pads=0,0,0,0 storage_order=0 "
			    "strides=1,1");
	free(t);
	ar_graph_free(g);
}

/* QuantizeMultiplier's edges (TFLM quantization_util.cc): 0, a mantissa
 * that rounds up to 2^31 (halved, shift + 1), below 2^-31 (flushed). */
static void test_quantize_multiplier(void **state)
{
	int32_t m;
	int sh;

	ar_quantize_multiplier(0.0, &m, &sh);
	assert_true(m == 0 && sh == 0);
	ar_quantize_multiplier(0.5, &m, &sh);
	assert_true(m == 1073741824 && sh == 0);
	ar_quantize_multiplier(1.0, &m, &sh);
	assert_true(m == 1073741824 && sh == 1);
	/* 1 - 2^-40: q * 2^31 rounds to 2^31. */
	ar_quantize_multiplier(1.0 - ldexp(1.0, -40), &m, &sh);
	assert_true(m == 1073741824 && sh == 1);
	ar_quantize_multiplier(ldexp(1.0, -33), &m, &sh);
	assert_true(m == 0 && sh == 0);
	ar_quantize_multiplier(0.0003, &m, &sh);
	assert_true(m == 1319413953 && sh == -11);
}


/*
 * The 16-bit counts: a 66,000-input step (it would read back as 464),
 * outputs, attributes and attribute values past 65,535, each refused;
 * exactly 65,535 inputs is fine.
 */
static void test_narrow_fields(void **state)
{
	enum { N = 66000 };
	int *ids = malloc(N * sizeof *ids);
	int64_t *vals = calloc(N, sizeof *vals);
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m"};
	ArError err = {0};
	FILE *f = fopen("/dev/null", "w");
	Fixture fx;
	ArNode *add;

	for (int i = 0; i < N; i++)
		ids[i] = FX_EVILT;
	fixture_init(&fx);
	add = &fx.g->nodes[4];
	ar_node_set_io(add, ids, 65535, (int[]){FX_Y}, 1);
	assert_int_equal(ar_write_header(f, fx.g, &fx.p, &info, &err), AR_OK);
	ar_node_set_io(add, ids, N, (int[]){FX_Y}, 1);
	assert_refused(&fx, "step 'add */' has 66000 inputs, past the "
		       "header's limit of 65535");
	fixture_free(&fx);

	fixture_init(&fx);
	add = &fx.g->nodes[4];
	ar_node_set_io(add, (int[]){FX_EVILT, FX_IN2}, 2, ids, N);
	assert_refused(&fx, "66000 outputs");
	fixture_free(&fx);

	fixture_init(&fx);
	fx_ints(fx.g, &fx.g->nodes[0], "huge", N, vals);
	assert_refused(&fx, "attribute 'huge' has 66000 values");
	fixture_free(&fx);

	fixture_init(&fx);
	for (int i = 0; i < N; i++)
		fx_attr(fx.g, &fx.g->nodes[1], "a", AR_ATTR_INT);
	assert_refused(&fx, "step 'relu' has 66000 attributes");
	fixture_free(&fx);

	fixture_init(&fx);
	fx.g->nodes[2].opset = (int64_t)1 << 31;
	assert_refused(&fx, "2147483648 as opset");
	fixture_free(&fx);
	fclose(f);
	free(ids);
	free(vals);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_macros),
		cmocka_unit_test(test_deterministic_and_prefix),
		cmocka_unit_test(test_compiles_and_reads_back),
		cmocka_unit_test(test_tiered_macros),
		cmocka_unit_test(test_tiered_limits),
		cmocka_unit_test(test_tiered_compiles_and_reads_back),
		cmocka_unit_test(test_tiered_rejects_one_arena_code),
		cmocka_unit_test(test_io_separate),
		cmocka_unit_test(test_strip_names),
		cmocka_unit_test(test_quantize_multiplier),
		cmocka_unit_test(test_attr_defaults),
		cmocka_unit_test(test_narrow_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
