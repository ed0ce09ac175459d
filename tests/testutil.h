/*
 * testutil.h — what every cmocka test program shares: the cmocka includes
 * and where the shared models live.
 */
#ifndef ARENAC_TESTUTIL_H
#define ARENAC_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/*
 * $ARENAC_SHARED, else ../shared beside the repository (tests run from the
 * repository root).  NULL when neither exists, and the caller skips.
 */
static inline const char *test_shared_dir(void)
{
	static char buf[4096];
	const char *env = getenv("ARENAC_SHARED");
	FILE *f;
	snprintf(buf, sizeof buf, "%s/models/README.md",
		 env && *env ? env : "../shared");
	f = fopen(buf, "r");
	if (!f)
		return NULL;
	fclose(f);
	snprintf(buf, sizeof buf, "%s", env && *env ? env : "../shared");
	return buf;
}

/*
 * The randomised tests' generator (a linear congruential one, as in
 * ANSI C's example rand()): a number in [0, n), *state advanced; the
 * same seed gives the same instances on every machine.
 */
static inline int test_rand(uint32_t *state, int n)
{
	*state = *state * 1103515245u + 12345u;
	return (int)((*state >> 16) % (unsigned)n);
}

#endif
