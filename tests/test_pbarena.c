/*
 * test_pbarena.c — the arena the loader unpacks protobuf models into
 * (frontend/pbarena.h): small allocations aligned and apart, large ones
 * given back on free exactly once (a second free, or a free of a small
 * one, is a no-op), everything released by ar_pb_arena_free (the
 * sanitizer build's leak check holds it to that), and a model unpacked
 * through it.
 */
#include "testutil.h"

#include <stdint.h>
#include <string.h>

#include "pbarena.h"
#include "onnx.pb-c.h"

static void test_small_aligned_apart(void **state)
{
	enum { N = 20000 };
	static unsigned char *p[N];
	ArPbArena a;
	(void)state;

	ar_pb_arena_init(&a);
	for (int i = 0; i < N; i++) {
		size_t n = (size_t)(i % 300);
		p[i] = a.alloc.alloc(a.alloc.allocator_data, n);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % AR_PB_ALIGN, 0);
		memset(p[i], i & 0xff, n);
	}
	for (int i = 0; i < N; i++)
		for (size_t k = 0; k < (size_t)(i % 300); k++)
			assert_int_equal(p[i][k], i & 0xff);
	/* Frees of small allocations change nothing. */
	a.alloc.free(a.alloc.allocator_data, p[7]);
	assert_int_equal(p[8][0], 8);
	ar_pb_arena_free(&a);
}

static void test_large_freed_once(void **state)
{
	ArPbArena a;
	void *big[100];
	(void)state;

	ar_pb_arena_init(&a);
	for (int i = 0; i < 100; i++) {
		big[i] = a.alloc.alloc(a.alloc.allocator_data, 100000);
		memset(big[i], 1, 100000);
	}
	assert_int_equal(a.used, 100);
	for (int i = 0; i < 100; i += 2) {
		a.alloc.free(a.alloc.allocator_data, big[i]);
		/* Again: no longer in the set, so not freed twice. */
		a.alloc.free(a.alloc.allocator_data, big[i]);
	}
	/* The odd ones are still there and still found. */
	for (int i = 1; i < 100; i += 2)
		assert_int_equal(((unsigned char *)big[i])[99999], 1);
	ar_pb_arena_free(&a);
	assert_null(a.head);
	assert_null(a.big);
}

static void test_unpacks_a_model(void **state)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT, *u;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	uint8_t buf[256];
	size_t len;
	ArPbArena a;
	(void)state;

	g.name = "g";
	m.graph = &g;
	m.has_ir_version = 1;
	m.ir_version = 8;
	len = onnx__model_proto__pack(&m, buf);
	ar_pb_arena_init(&a);
	u = onnx__model_proto__unpack(&a.alloc, len, buf);
	assert_non_null(u);
	assert_int_equal(u->ir_version, 8);
	assert_string_equal(u->graph->name, "g");
	ar_pb_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_aligned_apart),
		cmocka_unit_test(test_large_freed_once),
		cmocka_unit_test(test_unpacks_a_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
