/*
 * text.c — ArText, the buffered writer of text.h.
 *
 * The buffer (BUF bytes, more only for one longer piece) goes to the FILE
 * whenever it is full, so a table of any length costs a few large fwrites
 * and bounded memory.  Write errors stay with the FILE, whose owner checks
 * ferror (outfile.c).
 */
#include "text.h"

#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define BUF ((size_t)1 << 16)

ArText ar_text_on(FILE *f)
{
	ArText t = {f, NULL, 0, 0};
	return t;
}

static void flush(ArText *t)
{
	if (t->n)
		fwrite(t->s, 1, t->n, t->f);
	t->n = 0;
}

void ar_text_close(ArText *t)
{
	flush(t);
	free(t->s);
	*t = ar_text_on(t->f);
}

char *ar_text_room_slow(ArText *t, size_t n)
{
	flush(t);
	if (n >= t->cap) {
		t->cap = n < BUF ? BUF : n + 1;
		free(t->s);
		t->s = ar_xmalloc(t->cap);
	}
	return t->s;
}

void ar_text_upper(ArText *t, const char *s)
{
	size_t n = strlen(s);
	char *d = ar_text_room(t, n);
	for (size_t i = 0; i < n; i++)
		d[i] = s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i];
	t->n += n;
}

/* v in decimal (hex: in base 16), with a minus sign when neg; the two
 * bases apart so that each divides by a constant. */
static void put_num(ArText *t, uint64_t v, bool hex, bool neg)
{
	char buf[24], *p = buf + sizeof buf;
	if (hex) {
		do {
			*--p = "0123456789abcdef"[v & 15];
			v >>= 4;
		} while (v);
	} else {
		do {
			*--p = (char)('0' + v % 10);
			v /= 10;
		} while (v);
	}
	if (neg)
		*--p = '-';
	ar_text_putn(t, p, (size_t)(buf + sizeof buf - p));
}

void ar_text_printf(ArText *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	while (*fmt) {
		int len = 0;          /* 0 int, 1 long, 2 long long, 3 size_t */
		int64_t sv;
		uint64_t uv;

		if (*fmt != '%') {
			/* Literal text up to the next conversion: found by
			 * libc's vector scan, copied at once (a loop over its
			 * bytes was a tenth of writing a large report). */
			size_t k = strcspn(fmt, "%");
			ar_text_putn(t, fmt, k);
			fmt += k;
			continue;
		}
		fmt++;
		if (*fmt == 'z')
			len = 3, fmt++;
		else if (fmt[0] == 'l' && fmt[1] == 'l')
			len = 2, fmt += 2;
		else if (*fmt == 'l')
			len = 1, fmt++;
		switch (*fmt++) {
		case 'd':
			sv = len == 0 ? va_arg(ap, int) : len == 1 ?
			     va_arg(ap, long) : len == 2 ? va_arg(ap, long long)
			     : (int64_t)va_arg(ap, size_t);
			/* 0 - (uint64_t)sv is |sv| even for INT64_MIN. */
			put_num(t, sv < 0 ? 0 - (uint64_t)sv : (uint64_t)sv, false,
				sv < 0);
			break;
		case 'u':
		case 'x':
			uv = len == 0 ? va_arg(ap, unsigned) : len == 1 ?
			     va_arg(ap, unsigned long) : len == 2 ?
			     va_arg(ap, unsigned long long) : va_arg(ap, size_t);
			put_num(t, uv, fmt[-1] == 'x', false);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			assert(s && len == 0);
			ar_text_puts(t, s);
			break;
		}
		case 'c':
			ar_text_putc(t, (char)va_arg(ap, int));
			break;
		case '%':
			ar_text_putc(t, '%');
			break;
		default:
			assert(!"ar_text_printf: conversion not supported");
		}
	}
	va_end(ap);
}

void ar_text_c_str(ArText *t, const char *s, size_t max)
{
	ar_text_putc(t, '"');
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': ar_text_puts(t, "\\\""); break;
		case '\\': ar_text_puts(t, "\\\\"); break;
		case '\n': ar_text_puts(t, "\\n"); break;
		case '\t': ar_text_puts(t, "\\t"); break;
		/* "??/" and friends are trigraphs under -std=c99. */
		case '?': ar_text_puts(t, "\\?"); break;
		default:
			/* Three octal digits always: a following digit in the
			 * name cannot extend the escape. */
			if (c < 0x20 || c >= 0x7f) {
				char e[4] = {'\\', (char)('0' + (c >> 6)),
					     (char)('0' + ((c >> 3) & 7)),
					     (char)('0' + (c & 7))};
				ar_text_putn(t, e, 4);
			} else {
				ar_text_putc(t, (char)c);
			}
		}
	}
	ar_text_putc(t, '"');
}

void ar_text_json_str(ArText *t, const char *s)
{
	ar_text_putc(t, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		/* A run that needs no escapes goes in one copy. */
		size_t k = 0;
		while (p[k] >= 0x20 && p[k] != '"' && p[k] != '\\' &&
		       p[k] != 0x7f)
			k++;
		ar_text_putn(t, (const char *)p, k);
		p += k;
		if (!*p)
			break;
		if (*p == '"' || *p == '\\') {
			ar_text_putc(t, '\\');
			ar_text_putc(t, (char)*p);
		} else if (*p == '\n') {
			ar_text_puts(t, "\\n");
		} else if (*p == '\t') {
			ar_text_puts(t, "\\t");
		} else {        /* below 0x20, or 0x7f */
			char e[6] = {'\\', 'u', '0', '0',
				     "0123456789abcdef"[*p >> 4],
				     "0123456789abcdef"[*p & 15]};
			ar_text_putn(t, e, 6);
		}
	}
	ar_text_putc(t, '"');
}
