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
#define LIT 64

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

/* Decimal digits of v: 1 for 0 to 9, up to 20. */
static int dec_len(uint64_t v)
{
	int n = 1;
	for (uint64_t p = 10; n < 20 && v >= p; p *= 10)
		n++;
	return n;
}

/*
 * v in decimal (hex: in base 16), with a minus sign when neg, written
 * straight into the buffer from its last digit back; decimal two digits
 * per division, and in 32-bit arithmetic once v fits, as tens of
 * thousands of table numbers made the divisions most of a row's cost.
 */
static void put_num(ArText *t, uint64_t v, bool hex, bool neg)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324"
		"25262728293031323334353637383940414243444546474849"
		"50515253545556575859606162636465666768697071727374"
		"75767778798081828384858687888990919293949596979899";
	int n = hex ? 1 : dec_len(v);
	char *d, *p;

	if (hex)
		for (uint64_t x = v >> 4; x; x >>= 4)
			n++;
	d = ar_text_room(t, (size_t)n + 1);
	if (neg)
		*d++ = '-';
	p = d + n;
	if (hex) {
		do {
			*--p = "0123456789abcdef"[v & 15];
			v >>= 4;
		} while (v);
	} else {
		for (; v > UINT32_MAX; v /= 100, p -= 2)
			memcpy(p - 2, pairs + 2 * (v % 100), 2);
		for (uint32_t w = (uint32_t)v; ; w /= 100, p -= 2) {
			if (w < 10) {
				*--p = (char)('0' + w);
				break;
			}
			memcpy(p - 2, pairs + 2 * (w % 100), 2);
			if (w < 100)
				break;
		}
	}
	t->n += (size_t)n + neg;
}

/* The bytes that end a run of literal text in a format. */
static const bool ends_literal[256] = {['\0'] = true, ['%'] = true};

void ar_text_printf(ArText *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	while (*fmt) {
		int len = 0;          /* 0 int, 1 long, 2 long long, 3 size_t */
		int64_t sv;
		uint64_t uv;

		if (*fmt != '%') {
			/* Literal text: one table test per byte, one copy. */
			const char *e = fmt + 1;
			while (!ends_literal[(unsigned char)*e])
				e++;
			ar_text_putn(t, fmt, (size_t)(e - fmt));
			fmt = e;
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
		if (*p == '"' || *p == '\\') {
			ar_text_putc(t, '\\');
			ar_text_putc(t, (char)*p);
		} else if (*p == '\n') {
			ar_text_puts(t, "\\n");
		} else if (*p == '\t') {
			ar_text_puts(t, "\\t");
		} else if (*p < 0x20 || *p == 0x7f) {
			char e[6] = {'\\', 'u', '0', '0',
				     "0123456789abcdef"[*p >> 4],
				     "0123456789abcdef"[*p & 15]};
			ar_text_putn(t, e, 6);
		} else {
			ar_text_putc(t, (char)*p);
		}
	}
	ar_text_putc(t, '"');
}
