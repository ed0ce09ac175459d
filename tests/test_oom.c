/*
 * test_oom.c — out of memory, the library neither prints nor exits: it
 * calls the handler the program installed, with the size it asked for
 * (the handler here jumps back instead of exiting, as the CLI does).
 */
#include "testutil.h"

#include "graph.h"

/* malloc of an impossible size returns NULL under ASan too. */
const char *__asan_default_options(void);
__attribute__((used)) const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static jmp_buf back;
static size_t asked;

static void handler(size_t bytes)
{
	asked = bytes;
	longjmp(back, 1);
}

static void test_handler_called(void **state)
{
	/* Past any real memory, below what calloc's overflow check refuses. */
	const size_t huge = (size_t)1 << 60;
	volatile int calls = 0;
	(void)state;
	ar_set_oom_handler(handler);
	if (setjmp(back) == 0) {
		calls++;
		(void)ar_xmalloc(huge);
		fail_msg("ar_xmalloc returned after running out of memory");
	}
	assert_int_equal(asked, huge);
	if (setjmp(back) == 0) {
		calls++;
		(void)ar_xrealloc(NULL, huge);
		fail_msg("ar_xrealloc returned");
	}
	assert_int_equal(asked, huge);
	if (setjmp(back) == 0) {
		calls++;
		(void)ar_xcalloc(huge / 8, 8);
		fail_msg("ar_xcalloc returned");
	}
	assert_int_equal(asked, huge);
	assert_int_equal(calls, 3);
	/* Memory that is there still comes back. */
	free(ar_xmalloc(16));
	ar_set_oom_handler(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handler_called),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
