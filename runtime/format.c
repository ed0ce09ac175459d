/*
 * format.c — the runtime's own message formatter, so that the runtime
 * never calls the C library's printf family.
 *
 * Why: on a microcontroller newlib's snprintf/vsnprintf pull in its
 * reentrant heap (_malloc_r, hence _sbrk) and most of stdio; a runtime
 * that promises never to allocate must not link them (issue 29).  The
 * error messages only need the conversions below, with no flags, widths
 * or precisions:
 *
 *   %s  %d  %u  %ld  %lu  %lld  %llu  %zu   as printf prints them
 *   %g  six significant digits, as printf's %g for the values the
 *       messages print (scales, counts), without printf's rounding of
 *       the last digit in every case
 *   %%
 *
 * An unknown conversion is copied as it stands.  The output is always
 * NUL-terminated and cut at the buffer's end.
 */
#include <stdarg.h>
#include <stddef.h>

#include "ops.h"

typedef struct {
	char *p, *end; /* end: the byte kept for the NUL */
} Out;

static void put(Out *o, char ch)
{
	if (o->p < o->end)
		*o->p++ = ch;
}

static void puts_(Out *o, const char *s)
{
	if (!s)         /* a name left out (arenac --strip-names) */
		s = "-";
	while (*s)
		put(o, *s++);
}

static void put_u(Out *o, unsigned long long v)
{
	char d[24];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		put(o, d[--n]);
}

static void put_i(Out *o, long long v)
{
	if (v < 0) {
		put(o, '-');
		put_u(o, 0ull - (unsigned long long)v);
	} else {
		put_u(o, (unsigned long long)v);
	}
}

/* Six significant digits: the mantissa scaled to [100000, 1000000),
 * trailing zeros dropped, in positional notation for exponents -5..5
 * and as d.ddddde±XX beyond, as %g chooses. */
static void put_g(Out *o, double v)
{
	long long m;
	int e = 0, digits, point;
	char d[8];

	if (v != v) {
		puts_(o, "nan");
		return;
	}
	if (v < 0) {
		put(o, '-');
		v = -v;
	}
	if (v > 1.79769e308) {
		puts_(o, "inf");
		return;
	}
	if (v == 0) {
		put(o, '0');
		return;
	}
	while (v >= 1e6)
		v /= 10, e++;
	while (v < 1e5)
		v *= 10, e--;
	m = (long long)(v + 0.5);
	if (m >= 1000000)
		m /= 10, e++;
	e += 5; /* the exponent of the leading digit */
	for (int i = 5; i >= 0; i--, m /= 10)
		d[i] = (char)('0' + m % 10);
	digits = 6;
	while (digits > 1 && d[digits - 1] == '0')
		digits--;
	if (e < -4 || e >= 6) {
		put(o, d[0]);
		if (digits > 1)
			put(o, '.');
		for (int i = 1; i < digits; i++)
			put(o, d[i]);
		put(o, 'e');
		put(o, e < 0 ? '-' : '+');
		if (e < 0)
			e = -e;
		if (e < 10)
			put(o, '0');
		put_u(o, (unsigned long long)e);
		return;
	}
	point = e + 1; /* digits before the point */
	if (point <= 0) {
		puts_(o, "0.");
		for (int i = point; i < 0; i++)
			put(o, '0');
		point = 0;
	}
	for (int i = 0; i < digits || i < point; i++) {
		if (i == point && i)
			put(o, '.');
		put(o, i < digits ? d[i] : '0');
	}
}

int rt_vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
	Out o = {buf, buf + (size ? size - 1 : 0)};

	for (const char *f = fmt; *f; f++) {
		int longs = 0, z = 0;
		const char *start = f;
		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f++;
		for (; *f == 'l'; f++)
			longs++;
		if (*f == 'z')
			z = 1, f++;
		switch (*f) {
		case 's':
			puts_(&o, va_arg(ap, const char *));
			break;
		case 'd':
			put_i(&o, longs > 1 ? va_arg(ap, long long) :
				  longs ? va_arg(ap, long) : va_arg(ap, int));
			break;
		case 'u':
			put_u(&o, z ? va_arg(ap, size_t) :
				  longs > 1 ? va_arg(ap, unsigned long long) :
				  longs ? va_arg(ap, unsigned long) :
					  va_arg(ap, unsigned));
			break;
		case 'g':
			put_g(&o, va_arg(ap, double));
			break;
		case '%':
			put(&o, '%');
			break;
		default: /* not ours: copied, and nothing consumed */
			for (; start <= f && *start; start++)
				put(&o, *start);
			if (!*f)
				f--;
			break;
		}
	}
	if (size)
		*o.p = '\0';
	return (int)(o.p - buf);
}

int rt_format(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = rt_vformat(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
