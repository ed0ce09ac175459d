/*
 * rt_arenas.c — a plan of two memories bound against arenas that do not
 * match it: each run must stop with its error code before the first step
 * (no byte of either arena written), and the matching arenas must run.
 *
 *   cc -DARENAC_HEADER='"m.h"' -DLO=m -DUP=M rt_arenas.c m_weights.c ...
 *
 * m.h is a header of arenac --memory A:.. --memory B:.. (two regions, the
 * weights not reserved in either), m_weights.c its --weights C array.
 * Prints a line per case and exits 0 when every case behaves.
 */
#include <stdio.h>
#include <string.h>

#include "ops.h"                /* the error codes, ART_E_... */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define L(x) CAT(LO, x)
#define U(x) CAT(UP, x)

#include ARENAC_HEADER

ARENAC_RT_BIND(LO, UP)

#if U(_NUM_REGIONS) != 2
#error "rt_arenas wants a header of two memories"
#endif

/* Room for both regions' arenas, and a little more. */
static uint8_t mem[2][U(_ARENA_ALIGN) + 65536 +
		      (U(_LOWER_BOUND) > 65536 ? U(_LOWER_BOUND) : 0)];

static int bad;

/* Runs with arenas a[0 .. n), which the plan must refuse with code want
 * (0: must run), and checks that a refused run wrote nothing. */
static void expect(const char *what, const art_arena *a, int n,
		   const void *w, size_t wbytes, int want)
{
	static uint8_t before[sizeof mem];
	art_error err;
	int rc, same;

	memset(mem, 0xA5, sizeof mem);
	memcpy(before, mem, sizeof mem);
	rc = art_run_arenas(L(_rt_model)(), a, n, w, wbytes, NULL, &err);
	same = !memcmp(before, mem, sizeof mem);
	if (want ? rc == -1 && err.code == want && err.step == -1 && same :
	    rc == 0 && err.code == 0) {
		char msg[256];
		if (want)
			art_error_message(&err, msg, sizeof msg);
		printf("ok   %s%s%s\n", what, want ? ": " : "", want ? msg : "");
		return;
	}
	printf("FAIL %s: rc %d, code %d (want %d), step %d, arenas %s\n",
	       what, rc, err.code, want, err.step,
	       same ? "untouched" : "written");
	bad++;
}

static uint8_t *aligned(int k)
{
	uintptr_t p = (uintptr_t)mem[k], a = U(_ARENA_ALIGN);
	return (uint8_t *)((p + a - 1) / a * a);
}

int main(void)
{
	uint32_t s0 = L(_regions)[0].size, s1 = L(_regions)[1].size;
	const uint8_t *w = L(_weights);
	size_t wb = U(_WEIGHTS_SIZE);
	art_arena ok[2] = {{aligned(0), s0}, {aligned(1), s1}};
	art_arena swapped[2] = {{aligned(1), s1}, {aligned(0), s0}};
	art_arena short1[2] = {{aligned(0), s0}, {aligned(1), s1 - 1}};
	art_arena same[2] = {{aligned(0), s0}, {aligned(0) + s0 / 2, s1}};
	art_error err;
	int rc;

	if (s0 + U(_ARENA_ALIGN) > sizeof mem[0] ||
	    s1 + U(_ARENA_ALIGN) > sizeof mem[1] || s0 == s1) {
		printf("FAIL the plan's regions (%lu, %lu bytes) do not suit "
		       "this test\n", (unsigned long)s0, (unsigned long)s1);
		return 1;
	}
	expect("the arenas the plan wants", ok, 2, w, wb, 0);
	expect("one arena for two memories", ok, 1, w, wb,
	       ART_E_ARENAS_PLAN_MEMORIES);
	expect("three arenas for two memories", ok, 3, w, wb,
	       ART_E_ARENAS_PLAN_MEMORIES);
	expect("the arenas swapped", swapped, 2, w, wb,
	       ART_E_ARENA_BYTES_PLAN_NEEDS);
	expect("an arena a byte short", short1, 2, w, wb,
	       ART_E_ARENA_BYTES_PLAN_NEEDS);
	expect("two memories in one arena", same, 2, w, wb,
	       ART_E_ARENAS_OVERLAP);
	expect("the weights inside an arena that reserves none", ok, 2,
	       aligned(1), wb, ART_E_WEIGHTS_OVERLAP_ARENA);
	/* art_run takes one arena: a plan of two refuses it. */
	memset(mem, 0xA5, sizeof mem);
	rc = art_run(L(_rt_model)(), aligned(0), sizeof mem[0], w, wb, &err);
	if (rc == -1 && err.code == ART_E_ARENAS_PLAN_MEMORIES)
		printf("ok   art_run (one arena) refuses a plan of two\n");
	else
		printf("FAIL art_run (one arena) on a plan of two: rc %d, "
		       "code %d\n", rc, err.code), bad++;
	printf("arenas: %s\n", bad ? "FAIL" : "ok");
	return bad ? 1 : 0;
}
