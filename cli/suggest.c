/*
 * suggest.c — the distance behind "did you mean": optimal string
 * alignment (Levenshtein with adjacent transpositions, so "--bugdet" is
 * one step from "--budget").  Option names are short; longer strings are
 * simply far.
 */
#include "values.h"

#include <string.h>

/* Optimal string alignment distance, for "did you mean". */
int cli_edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b);
	int d[40][40];
	if (la >= 40 || lb >= 40)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = d[i - 1][j - 1] + cost;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

