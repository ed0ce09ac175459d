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
static inline void put_num(ArText *t, uint64_t v, bool hex, bool neg)
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

void ar_text_dec(ArText *t, int64_t v)
{
	/* Most table numbers are one digit or -1 (ranks, flags, "none"). */
	if (v >= -9 && v <= 9) {
		char *d = ar_text_room(t, 2);
		if (v < 0)
			*d++ = '-';
		*d = (char)('0' + (v < 0 ? -v : v));
		t->n += 1 + (v < 0);
		return;
	}
	/* 0 - (uint64_t)v is |v| even for INT64_MIN. */
	put_num(t, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, false, v < 0);
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
			/* Literal text, copied as it is scanned (most runs
			 * are a few bytes, shorter than a call to memcpy), up
			 * to LIT bytes at a time; one table test per byte. */
			char *d = ar_text_room(t, LIT);
			size_t k = 0;
			do {
				d[k] = fmt[k];
				k++;
			} while (k < LIT && !ends_literal[(unsigned char)fmt[k]]);
			t->n += k;
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
			ar_text_dec(t, sv);
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

/*
 * The bytes a C literal (c_plain) and a JSON string (json_plain) take as
 * they are: runs of them are found by one table test per byte and copied
 * at once, as names are most of the header's and the report's bytes.  The
 * terminator is not plain, so a run also stops at the end.
 */
#define PRINTABLE(c) ((c) >= 0x20 && (c) < 0x7f)
#define C_PLAIN(c) (PRINTABLE(c) && (c) != '"' && (c) != '\\' && (c) != '?')
#define JSON_PLAIN(c) ((c) >= 0x20 && (c) != 0x7f && (c) != '"' && \
		       (c) != '\\')
#define ROW(m, c) m(c), m(c + 1), m(c + 2), m(c + 3), m(c + 4), m(c + 5), \
	m(c + 6), m(c + 7)
#define TABLE(m) { ROW(m, 0), ROW(m, 8), ROW(m, 16), ROW(m, 24), ROW(m, 32), \
	ROW(m, 40), ROW(m, 48), ROW(m, 56), ROW(m, 64), ROW(m, 72), ROW(m, 80), \
	ROW(m, 88), ROW(m, 96), ROW(m, 104), ROW(m, 112), ROW(m, 120), \
	ROW(m, 128), ROW(m, 136), ROW(m, 144), ROW(m, 152), ROW(m, 160), \
	ROW(m, 168), ROW(m, 176), ROW(m, 184), ROW(m, 192), ROW(m, 200), \
	ROW(m, 208), ROW(m, 216), ROW(m, 224), ROW(m, 232), ROW(m, 240), \
	ROW(m, 248) }
static const bool c_plain[256] = TABLE(C_PLAIN);
static const bool json_plain[256] = TABLE(JSON_PLAIN);

/* The length of the run of plain bytes at s, at most max. */
static size_t plain_run(const bool *plain, const char *s, size_t max)
{
	size_t k = 0;
	while (k < max && plain[(unsigned char)s[k]])
		k++;
	return k;
}

void ar_text_c_str(ArText *t, const char *s, size_t max)
{
	size_t i = 0;
	ar_text_putc(t, '"');
	for (;;) {
		size_t k = plain_run(c_plain, s + i, max - i);
		unsigned char c;
		ar_text_putn(t, s + i, k);
		i += k;
		if (i >= max || !s[i])
			break;
		c = (unsigned char)s[i++];
		switch (c) {
		case '"': ar_text_puts(t, "\\\""); break;
		case '\\': ar_text_puts(t, "\\\\"); break;
		case '\n': ar_text_puts(t, "\\n"); break;
		case '\t': ar_text_puts(t, "\\t"); break;
		/* "??/" and friends are trigraphs under -std=c99. */
		case '?': ar_text_puts(t, "\\?"); break;
		default: {
			/* Three octal digits always: a following digit in the
			 * name cannot extend the escape. */
			char e[4] = {'\\', (char)('0' + (c >> 6)),
				     (char)('0' + ((c >> 3) & 7)),
				     (char)('0' + (c & 7))};
			ar_text_putn(t, e, 4);
		}
		}
	}
	ar_text_putc(t, '"');
}

void ar_text_json_str(ArText *t, const char *s)
{
	ar_text_putc(t, '"');
	for (;;) {
		size_t k = plain_run(json_plain, s, SIZE_MAX);
		unsigned char c;
		ar_text_putn(t, s, k);
		s += k;
		if (!*s)
			break;
		c = (unsigned char)*s++;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			ar_text_putn(t, e, 2);
		} else if (c == '\n') {
			ar_text_puts(t, "\\n");
		} else if (c == '\t') {
			ar_text_puts(t, "\\t");
		} else {
			char e[6] = {'\\', 'u', '0', '0',
				     "0123456789abcdef"[c >> 4],
				     "0123456789abcdef"[c & 15]};
			ar_text_putn(t, e, 6);
		}
	}
	ar_text_putc(t, '"');
}
