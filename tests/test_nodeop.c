/*
 * test_nodeop.c — a node's op and domain: one shared copy per graph
 * (strpool.h), and the table entry ar_op_of caches, which must follow
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
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
