/*
 * format.c — the host-side helper that turns the runtime's error record
 * (art_error: a code, the steps, a few details) into its message, with
 * the runtime's own formatter.
 *
 * Why here and not in the core: the runtime core only records a code
 * and its details, so a firmware links neither this formatter (nor the
 * soft-float double code %g needs on a Cortex-M4F) nor the message
 * table, unless it calls art_error_message (issue 29: no heap and no
 * stdio in the runtime core).  The formatter is the runtime's own and
 * not snprintf because on a microcontroller newlib's printf family pulls
 * in its heap (_malloc_r, hence _sbrk) and most of stdio, and a host
 * tool on a target may still want a message.  The templates only need
 * the conversions below, with no flags, widths or precisions:
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

/* One template filled from args[0..nargs): each conversion takes the
 * next argument as the member of art_err_arg its letter names. */
static void put_template(Out *o, const char *fmt, const art_err_arg *args,
			 int nargs)
{
	int k = 0;
	static const art_err_arg none = {0};

	for (const char *f = fmt; *f; f++) {
		const char *start = f;
		const art_err_arg *a = k < nargs ? &args[k] : &none;
		if (*f != '%') {
			put(o, *f);
			continue;
		}
		f++;
		while (*f == 'l' || *f == 'z')
			f++;
		switch (*f) {
		case 's':
			puts_(o, a->s);
			break;
		case 'd':
			put_i(o, a->i);
			break;
		case 'u':
			put_u(o, a->u);
			break;
		case 'g':
			put_g(o, a->g);
			break;
		case '%':
			put(o, '%');
			continue;
		default: /* not ours: copied, and nothing consumed */
			for (; start <= f && *start; start++)
				put(o, *start);
			if (!*f)
				f--;
			continue;
		}
		k++;
	}
}

int rt_vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
	Out o = {buf, buf + (size ? size - 1 : 0)};
	art_err_arg args[16] = {{0}};
	int n = 0;

	/* The arguments read as the conversions say, then the template. */
	for (const char *f = fmt; *f && n < 16; f++) {
		int longs = 0, z = 0;
		if (*f != '%' || !*++f)
			continue;
		for (; *f == 'l'; f++)
			longs++;
		if (*f == 'z')
			z = 1, f++;
		if (*f == 's')
			args[n++].s = va_arg(ap, const char *);
		else if (*f == 'd')
			args[n++].i = longs > 1 ? va_arg(ap, long long) :
				longs ? va_arg(ap, long) : va_arg(ap, int);
		else if (*f == 'u')
			args[n++].u = z ? va_arg(ap, size_t) :
				longs > 1 ? va_arg(ap, unsigned long long) :
				longs ? va_arg(ap, unsigned long) :
				va_arg(ap, unsigned);
		else if (*f == 'g')
			args[n++].g = va_arg(ap, double);
		else if (!*f)
			break;
	}
	put_template(&o, fmt, args, n);
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

/* The message table: runtime/errors.def's templates by code. */
static const char *const templates[] = {
	"no error",
#define ART_E(name, template) template,
#include "errors.def"
#undef ART_E
};

int art_error_message(const art_error *e, char *buf, size_t size)
{
	Out o = {buf, buf + (size ? size - 1 : 0)};

	for (int k = 0; k < e->depth && k < ART_ERR_DEPTH; k++) {
		puts_(&o, "step ");
		put_i(&o, e->where[k].step);
		puts_(&o, " (");
		puts_(&o, e->where[k].op);
		puts_(&o, " '");
		puts_(&o, e->where[k].name ? e->where[k].name : "");
		puts_(&o, "'): ");
	}
	if (e->code >= 0 && e->code < ART_E_COUNT) {
		put_template(&o, templates[e->code], e->arg, ART_ERR_ARGS);
	} else {
		puts_(&o, "error code ");
		put_i(&o, e->code);
	}
	if (size)
		*o.p = '\0';
	return (int)(o.p - buf);
}
