/*
 * sanitize.c — model names made safe for C identifiers, C string literals,
 * C comments and Graphviz labels.
 *
 * The rules are conservative on purpose: generated headers must build with
 * -std=c99 -pedantic (trigraphs on, 4095-byte literal limit) and C++11
 * alike, so anything outside printable ASCII is escaped or replaced.
 */
#include "sanitize.h"

#include <stdlib.h>
#include <string.h>

#include "graph.h"

static int is_ident_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

char *ar_c_ident(const char *s)
{
	size_t n = strlen(s);
	char *d = ar_xmalloc(n + 1), *p = d;

	for (; *s; s++) {
		int c = is_ident_char((unsigned char)*s) ? *s : '_';
		/* Runs of separators collapse into one underscore, and none is
		 * kept at either end, so fragments join without "__". */
		if (c == '_' && (p == d || p[-1] == '_'))
			continue;
		*p++ = (char)c;
	}
	if (p > d && p[-1] == '_')
		p--;
	*p = '\0';
	return d;
}

static int taken(char **v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

char **ar_c_idents_unique(const char *const *names, int n,
			  const char *fallback)
{
	char **v = ar_xcalloc((size_t)n + 1, sizeof *v);

	for (int i = 0; i < n; i++) {
		char *base = ar_c_ident(names[i]);
		size_t len = strlen(base) + strlen(fallback) + 24;
		char *s = ar_xmalloc(len);

		if (*base)
			snprintf(s, len, "%s", base);
		else
			snprintf(s, len, "%s%d", fallback, i);
		for (int k = 2; taken(v, i, s); k++)
			snprintf(s, len, "%s_%d", *base ? base : fallback, k);
		free(base);
		v[i] = s;
	}
	return v;
}

void ar_strv_free(char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void ar_c_comment(FILE *f, const char *s)
{
	int prev = 0;

	for (; *s; s++) {
		int c = (unsigned char)*s;
		/* A backslash could splice lines or, after "?" "?", form a
		 * trigraph; in a comment a slash reads the same for a path. */
		if (c == '\\')
			c = '/';
		else if (c < 0x20 || c >= 0x7f)
			c = '?';
		/* Break "*" "/", "/" "*" and "?" "?" apart with a space. */
		if ((prev == '*' && c == '/') || (prev == '/' && c == '*') ||
		    (prev == '?' && c == '?'))
			fputc(' ', f);
		fputc(c, f);
		prev = c;
	}
}

char *ar_dot_label(const char *s, int max)
{
	size_t n = strlen(s);
	int cut = max > 3 && n > (size_t)max;
	size_t keep = cut ? (size_t)max - 3 : n;
	char *d = ar_xmalloc(2 * keep + 4), *p = d;

	for (size_t i = 0; i < keep; i++) {
		int c = (unsigned char)s[i];
		if (c == '\\')
			*p++ = '\\';
		*p++ = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	if (cut)
		p += sprintf(p, "...");
	*p = '\0';
	return d;
}
