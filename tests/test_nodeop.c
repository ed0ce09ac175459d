/*
 * test_nodeop.c — the strings a graph owns (strpool.h): a node's op and
 * domain, one shared copy per graph, and names, packed copies that stay
 * put; and the table entry ar_op_of caches, which must follow
 * ar_node_set_op and a change of opset.
 */
#include "testutil.h"

#include <string.h>

#include "ops.h"
#include "strpool.h"

static void test_pool(void **state)
{
	ArStrPool *p = NULL;
	const char *relu, *again;
	char buf[16];
	(void)state;
	relu = ar_strpool_intern(&p, "Relu");
	assert_non_null(p);
	assert_string_equal(relu, "Relu");
	strcpy(buf, "Relu");
	again = ar_strpool_intern(&p, buf);
	assert_ptr_equal(relu, again);
	assert_ptr_not_equal(ar_strpool_intern(&p, "Relu6"), relu);
	/* Past the first table's 16 slots: copies stay put as it grows. */
	for (int i = 0; i < 100; i++) {
		snprintf(buf, sizeof buf, "op%d", i);
		assert_string_equal(ar_strpool_intern(&p, buf), buf);
	}
	assert_ptr_equal(ar_strpool_intern(&p, "Relu"), relu);
	assert_string_equal(ar_strpool_intern(&p, "op57"), "op57");
	assert_string_equal(ar_strpool_intern(&p, ""), "");
	ar_strpool_free(p);
}

static void test_copies(void **state)
{
	ArStrPool *p = NULL;
	const char *first[3], *long_one = NULL;
	char buf[32], *big = malloc(100000);
	(void)state;
	first[0] = ar_strpool_copy(&p, "x");
	first[1] = ar_strpool_copy(&p, "x");
	first[2] = ar_strpool_copy(&p, "");
	assert_ptr_not_equal(first[0], first[1]);
	assert_string_equal(first[1], "x");
	/* Past one chunk of 64 KiB, and one name larger than a chunk. */
	memset(big, 'b', 99999);
	big[99999] = 0;
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof buf, "tensor_%d", i);
		assert_string_equal(ar_strpool_copy(&p, buf), buf);
		if (i == 10000) {
			long_one = ar_strpool_copy(&p, big);
			assert_string_equal(long_one, big);
		}
	}
	assert_string_equal(first[0], "x");
	assert_string_equal(first[2], "");
	assert_int_equal(strlen(long_one), 99999);
	assert_string_equal(long_one, big);
	free(big);
	ar_strpool_free(p);
}

static void test_shared(void **state)
{
	ArGraph *g = ar_graph_new("g");
	int a, b;
	(void)state;
	a = ar_graph_add_node(g, "a", "Relu", "");
	b = ar_graph_add_node(g, "b", "Relu", "");
	assert_ptr_equal(g->nodes[a].op, g->nodes[b].op);
	assert_ptr_equal(g->nodes[a].domain, g->nodes[b].domain);
	assert_string_equal(g->nodes[b].op, "Relu");
	ar_graph_free(g);
}

static void test_cache(void **state)
{
	ArGraph *g = ar_graph_new("g");
	ArNode *n;
	const ArOpDef *d;
	int id;
	(void)state;
	g->opset = 13;
	id = ar_graph_add_node(g, "n", "Relu", "");
	n = &g->nodes[id];
	d = ar_op_of(n);
	assert_non_null(d);
	assert_string_equal(d->name, "Relu");
	assert_ptr_equal(ar_op_of(n), d);
	ar_node_set_op(g, n, "Sigmoid", "");
	assert_string_equal(ar_op_of(n)->name, "Sigmoid");
	ar_node_set_op(g, n, "Sigmoid", "com.example");
	assert_null(ar_op_of(n));
	/* Keyed on opset: Compress came in opset 9, so a node of opset 8
	 * has no entry, whatever a lookup at opset 13 found. */
	ar_node_set_op(g, n, "Compress", "");
	assert_string_equal(ar_op_of(n)->name, "Compress");
	n->opset = 8;
	assert_null(ar_op_of(n));
	n->opset = 9;
	assert_ptr_equal(ar_op_of(n), ar_op_find("", "Compress", 9));
	assert_non_null(ar_op_of(n));
	ar_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
