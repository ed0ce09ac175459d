/*
 * numfmt.h — how numbers read in messages and reports: byte counts with
 * thousands separators, sizes in binary units.  Every summary, picture,
 * statistics line and error message formats through these two, so one
 * size reads the same everywhere.
 */
#ifndef ARENAC_NUMFMT_H
#define ARENAC_NUMFMT_H

#include <stdint.h>

/* Room for any int64_t either way, sign and separators included. */
#define AR_NUMFMT_LEN 32

/* 1234567 -> "1,234,567"; returns buf. */
const char *ar_fmt_count(char buf[AR_NUMFMT_LEN], int64_t v);
/* 7225344 -> "6.89 MiB", 768 -> "768 B": three significant digits. */
const char *ar_fmt_size(char buf[AR_NUMFMT_LEN], int64_t bytes);

#endif
