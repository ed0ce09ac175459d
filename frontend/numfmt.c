/*
 * numfmt.c — number formatting for people (see numfmt.h).
 *
 * Locale-free on purpose: outputs must not change with LC_NUMERIC, and a
 * comma every three digits reads the same to everyone who reads the
 * English messages.
 */
#include "numfmt.h"

#include <inttypes.h>
#include <stdio.h>

const char *ar_fmt_count(char buf[AR_NUMFMT_LEN], int64_t v)
{
	char digits[24];
	/* The magnitude as unsigned, so INT64_MIN has one too. */
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int n = snprintf(digits, sizeof digits, "%" PRIu64, m), o = 0;

	if (v < 0)
		buf[o++] = '-';
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

const char *ar_fmt_size(char buf[AR_NUMFMT_LEN], int64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB",
					    "PiB", "EiB"};
	double v = (double)bytes;
	int u = 0;

	while ((v >= 1024 || v <= -1024) && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, AR_NUMFMT_LEN, "%" PRId64 " B", bytes);
	else
		snprintf(buf, AR_NUMFMT_LEN, v < 100 && v > -100 ? "%.3g %s" :
			 "%.0f %s", v, units[u]);
	return buf;
}
