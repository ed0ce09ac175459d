/*
 * text.h — a lean buffered writer for the header's and the report's big
 * tables.
 *
 * A model's tables are tens of thousands of small fprintf calls (one row
 * per tensor and step), and stdio's per-call work (format parsing, the
 * stream's locking and vtable) was most of the time arenac spent writing
 * them.  An ArText collects text in memory with a formatter that knows
 * only the conversions arenac uses, and hands it to its FILE in large
 * writes.  A function writes a part either through its ArText or straight
 * to the FILE, never both, and closes the ArText before it returns, so the
 * bytes keep their order.
 */
#ifndef ARENAC_TEXT_H
#define ARENAC_TEXT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct ArText {
	FILE *f;
	char *s;                    /* the buffer: n bytes held, cap room */
	size_t n, cap;
} ArText;

/* An empty ArText writing to f. */
ArText ar_text_on(FILE *f);
/* Writes what is buffered to the FILE and frees the buffer. */
void ar_text_close(ArText *t);

/*
 * printf for the conversions d, u, x, s and c with the length modifiers
 * l, ll and z, and %%; no flags, width or precision (asserted).  The
 * compiler checks the arguments as for printf.
 */
void ar_text_printf(ArText *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ar_text_upper(ArText *t, const char *s);      /* s upper-cased */
/* v in decimal: printf's %lld without the format, for the big tables'
 * rows, which write their literal parts with ar_text_puts (a literal's
 * copy is inlined there, where a format is scanned byte by byte). */
void ar_text_dec(ArText *t, int64_t v);
/*
 * The first max bytes of s (all of it when shorter) as a C string
 * literal, quotes included, valid in C99 and C++; s as a JSON string.
 */
void ar_text_c_str(ArText *t, const char *s, size_t max);
void ar_text_json_str(ArText *t, const char *s);

/*
 * Room for n more bytes at t->s + t->n when the buffer is full (text.c):
 * writes the buffer out first.  The small writers below are inline, as
 * the tables make hundreds of thousands of calls.
 */
char *ar_text_room_slow(ArText *t, size_t n);

static inline char *ar_text_room(ArText *t, size_t n)
{
	/* Strictly less, so that an ArText without a buffer yet (cap 0)
	 * always takes the slow path, even for n = 0. */
	return n < t->cap - t->n ? t->s + t->n : ar_text_room_slow(t, n);
}

static inline void ar_text_putn(ArText *t, const char *s, size_t n)
{
	memcpy(ar_text_room(t, n), s, n);
	t->n += n;
}

static inline void ar_text_puts(ArText *t, const char *s)
{
	ar_text_putn(t, s, strlen(s));
}

static inline void ar_text_putc(ArText *t, char c)
{
	*ar_text_room(t, 1) = c;
	t->n++;
}

#endif
