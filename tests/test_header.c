/*
 * test_header.c — the C header writer on a hand-made plan: the macros and
 * comment, hostile names, determinism, and the header compiled with gcc,
 * clang and g++ at -Werror by tests/header_check.c, whose read-back of the
 * tables must match the plan in memory line for line.
 */
#include "testutil.h"

#include <unistd.h>

#include "emit.h"
#include "fixture_plan.h"
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
	/* "in:0" and "in/0" both sanitise to in_0: the second gets _2. */
	assert_non_null(strstr(h, "#define M_INPUT_in_0_OFFSET 48u\n"));
	assert_non_null(strstr(h, "#define M_INPUT_in_0_SIZE 768u\n"));
	assert_non_null(strstr(h, "#define M_INPUT_in_0_2_OFFSET 0u\n"));
	assert_non_null(strstr(h, "#define M_OUTPUT_y_OFFSET 96u\n"));
	assert_non_null(strstr(h, "static const m_tensor m_tensors["));
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
	assert_non_null(strstr(b, "static const m_3d_net_step m_3d_net_steps"));
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

	fprintf(f, "arena %lld %lld %lld %lld %d\n", (long long)p->arena_bytes,
		(long long)p->align, (long long)p->lower_bound,
		(long long)p->weights_bytes, p->peak_step);
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
		fprintf(f, " %d %d %d %lld %d\n", s->first, s->last,
			s->alias_of, (long long)s->alias_offset, s->inplace_of);
	}
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		fprintf(f, "step %d", s);
		hex(f, n->op);
		hex(f, n->domain);
		hex(f, n->name);
		ids(f, n->inputs, n->nexplicit);
		ids(f, n->outputs, n->noutputs);
		/* Only the Reshape's output is a view. */
		fprintf(f, " %d\n", s == 2);
		for (int a = 0; a < n->nattrs; a++) {
			const ArAttr *at = &n->attrs[a];
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

static void test_compiles_and_reads_back(void **state)
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
	Fixture fx;
	char *want, *got;
	FILE *f;
	int ran = 0;

	fixture_init(&fx);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/m.h", dir);
	f = fopen(path, "w");
	assert_int_equal(ar_write_header(f, fx.g, &fx.p, &info, &err), AR_OK);
	fclose(f);
	/* A second file that reads one macro: its TU must not warn about the
	 * tables it leaves alone, nor define the arena a second time. */
	snprintf(path, sizeof path, "%s/few.c", dir);
	f = fopen(path, "w");
	fputs("#include \"m.h\"\nint few(void);\n"
	      "int few(void) { return (int)M_ARENA_SIZE; }\n", f);
	fclose(f);
	want = expected_lines(&fx);
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
			 "-DM_DEFINE_ARENA tests/header_check.c -x none "
			 "%3$s/few.o -o %3$s/check && %3$s/check > "
			 "%3$s/out.txt", compilers[c][0], compilers[c][1],
			 dir);
		assert_int_equal(system(cmd), 0);
		snprintf(path, sizeof path, "%s/out.txt", dir);
		got = slurp(path);
		assert_string_equal(got, want);
		free(got);
		ran++;
	}
	assert_true(ran > 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(want);
	fixture_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_macros),
		cmocka_unit_test(test_deterministic_and_prefix),
		cmocka_unit_test(test_compiles_and_reads_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
