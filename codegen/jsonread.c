/*
 * jsonread.c — a recursive-descent JSON reader with a depth bound.
 *
 * The input may be any file a user names, so every path refuses what is
 * not JSON with a message and an offset, never reads past the end, and
 * never recurses deeper than AR_JSON_MAX_DEPTH.
 */
#include "jsonread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

typedef struct Parser {
	const char *s;
	size_t n, at;
	char *msg;
	size_t msgn;
	bool failed;
} Parser;

static bool fail(Parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool fail(Parser *p, const char *fmt, ...)
{
	va_list ap;
	size_t k;
	if (p->failed)
		return false;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(p->msg, p->msgn, fmt, ap);
	va_end(ap);
	k = strlen(p->msg);
	snprintf(p->msg + k, p->msgn - k, " at byte %zu", p->at);
	return false;
}

static void skip_space(Parser *p)
{
	while (p->at < p->n && (p->s[p->at] == ' ' || p->s[p->at] == '\t' ||
				p->s[p->at] == '\n' || p->s[p->at] == '\r'))
		p->at++;
}

static bool literal(Parser *p, const char *word)
{
	size_t k = strlen(word);
	if (p->n - p->at < k || memcmp(p->s + p->at, word, k))
		return fail(p, "unexpected text");
	p->at += k;
	return true;
}

static int hex4(Parser *p)
{
	int v = 0;
	if (p->n - p->at < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->at++];
		v = v * 16 + (c >= '0' && c <= '9' ? c - '0' :
			      c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			      c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1000);
	}
	return v < 0 ? -1 : v;
}

static size_t put_utf8(char *d, unsigned cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A \u escape, a surrogate pair whole: its code point, or -1. */
static long escape_u(Parser *p)
{
	int hi = hex4(p), lo;
	if (hi < 0xd800 || hi > 0xdfff)
		return hi;
	if (hi > 0xdbff || p->n - p->at < 2 || p->s[p->at] != '\\' ||
	    p->s[p->at + 1] != 'u')
		return -1;
	p->at += 2;
	lo = hex4(p);
	if (lo < 0xdc00 || lo > 0xdfff)
		return -1;
	return 0x10000 + ((long)(hi - 0xd800) << 10) + (lo - 0xdc00);
}

/* A string at p->at (on its opening quote): malloc'ed, escapes decoded;
 * decoded text is never longer than its source. */
static char *string(Parser *p)
{
	size_t start = ++p->at, k = 0;
	char *d;

	while (p->at < p->n && p->s[p->at] != '"')
		p->at += p->s[p->at] == '\\' ? 2 : 1;
	if (p->at >= p->n) {
		fail(p, "unterminated string");
		return NULL;
	}
	d = ar_xmalloc(p->at - start + 1);
	for (p->at = start; p->s[p->at] != '"';) {
		unsigned char c = (unsigned char)p->s[p->at++];
		long cp;
		if (c < 0x20) {
			p->at--;
			fail(p, "control character in a string");
			free(d);
			return NULL;
		}
		if (c != '\\') {
			d[k++] = (char)c;
			continue;
		}
		switch (p->s[p->at++]) {
		case '"': d[k++] = '"'; break;
		case '\\': d[k++] = '\\'; break;
		case '/': d[k++] = '/'; break;
		case 'b': d[k++] = '\b'; break;
		case 'f': d[k++] = '\f'; break;
		case 'n': d[k++] = '\n'; break;
		case 'r': d[k++] = '\r'; break;
		case 't': d[k++] = '\t'; break;
		case 'u':
			/* 6 source bytes give at most 3, 12 at most 4. */
			if ((cp = escape_u(p)) <= 0) {
				fail(p, "bad \\u escape");
				free(d);
				return NULL;
			}
			k += put_utf8(d + k, (unsigned)cp);
			break;
		default:
			p->at--;
			fail(p, "bad escape");
			free(d);
			return NULL;
		}
	}
	p->at++;
	d[k] = '\0';
	return d;
}

static bool number(Parser *p, ArJson *v)
{
	size_t start = p->at;
	bool real = false;
	char buf[64], *end;

	if (p->at < p->n && p->s[p->at] == '-')
		p->at++;
	if (p->at >= p->n || p->s[p->at] < '0' || p->s[p->at] > '9')
		return fail(p, "bad number");
	if (p->s[p->at] == '0')
		p->at++;
	else
		while (p->at < p->n && p->s[p->at] >= '0' &&
		       p->s[p->at] <= '9')
			p->at++;
	if (p->at < p->n && p->s[p->at] == '.') {
		real = true;
		p->at++;
		if (p->at >= p->n || p->s[p->at] < '0' || p->s[p->at] > '9')
			return fail(p, "bad number");
		while (p->at < p->n && p->s[p->at] >= '0' && p->s[p->at] <= '9')
			p->at++;
	}
	if (p->at < p->n && (p->s[p->at] == 'e' || p->s[p->at] == 'E')) {
		real = true;
		p->at++;
		if (p->at < p->n && (p->s[p->at] == '+' || p->s[p->at] == '-'))
			p->at++;
		if (p->at >= p->n || p->s[p->at] < '0' || p->s[p->at] > '9')
			return fail(p, "bad number");
		while (p->at < p->n && p->s[p->at] >= '0' && p->s[p->at] <= '9')
			p->at++;
	}
	if (p->at - start >= sizeof buf)
		return fail(p, "number too long");
	memcpy(buf, p->s + start, p->at - start);
	buf[p->at - start] = '\0';
	errno = 0;
	v->d = strtod(buf, &end);
	v->type = AR_JSON_REAL;
	if (!real) {
		errno = 0;
		v->i = strtoll(buf, &end, 10);
		if (errno)
			return fail(p, "integer out of range");
		v->type = AR_JSON_INT;
	}
	return true;
}

static bool value(Parser *p, ArJson *v, int depth);

/* Items of an array or members of an object, after the opening bracket. */
static bool members(Parser *p, ArJson *v, int depth, bool object)
{
	int cap = 0;
	char close = object ? '}' : ']';

	skip_space(p);
	if (p->at < p->n && p->s[p->at] == close) {
		p->at++;
		return true;
	}
	for (;;) {
		if (v->n == cap) {
			if (cap > (1 << 28))
				return fail(p, "too many items");
			cap = cap ? 2 * cap : 8;
			v->items = ar_xrealloc(v->items, (size_t)cap *
					       sizeof *v->items);
			if (object)
				v->keys = ar_xrealloc(v->keys, (size_t)cap *
						      sizeof *v->keys);
		}
		memset(&v->items[v->n], 0, sizeof *v->items);
		skip_space(p);
		if (object) {
			if (p->at >= p->n || p->s[p->at] != '"')
				return fail(p, "expected a member name");
			if (!(v->keys[v->n] = string(p)))
				return false;
			skip_space(p);
			if (p->at >= p->n || p->s[p->at] != ':') {
				v->n++;   /* the key is freed with the rest */
				return fail(p, "expected ':'");
			}
			p->at++;
		}
		/* Counted before it is filled, so a failure frees it. */
		if (!value(p, &v->items[v->n++], depth + 1))
			return false;
		skip_space(p);
		if (p->at < p->n && p->s[p->at] == ',') {
			p->at++;
			continue;
		}
		if (p->at < p->n && p->s[p->at] == close) {
			p->at++;
			return true;
		}
		return fail(p, "expected ',' or '%c'", close);
	}
}

static bool value(Parser *p, ArJson *v, int depth)
{
	memset(v, 0, sizeof *v);
	if (depth >= AR_JSON_MAX_DEPTH)
		return fail(p, "nested deeper than %d", AR_JSON_MAX_DEPTH);
	skip_space(p);
	if (p->at >= p->n)
		return fail(p, "unexpected end");
	switch (p->s[p->at]) {
	case '{':
		p->at++;
		v->type = AR_JSON_OBJECT;
		return members(p, v, depth, true);
	case '[':
		p->at++;
		v->type = AR_JSON_ARRAY;
		return members(p, v, depth, false);
	case '"':
		v->type = AR_JSON_STRING;
		return (v->s = string(p)) != NULL;
	case 't':
		v->type = AR_JSON_BOOL;
		v->b = true;
		return literal(p, "true");
	case 'f':
		v->type = AR_JSON_BOOL;
		return literal(p, "false");
	case 'n':
		return literal(p, "null");
	case '-': case '0': case '1': case '2': case '3': case '4': case '5':
	case '6': case '7': case '8': case '9':
		return number(p, v);
	default:
		return fail(p, "expected a value");
	}
}

bool ar_json_parse(const char *text, size_t len, ArJson *out, char *msg,
		   size_t msgn)
{
	Parser p = {text, len, 0, msg, msgn, false};

	if (!value(&p, out, 0)) {
		ar_json_free(out);
		return false;
	}
	skip_space(&p);
	if (p.at != p.n) {
		fail(&p, "text after the value");
		ar_json_free(out);
		return false;
	}
	return true;
}

void ar_json_free(ArJson *v)
{
	for (int i = 0; i < v->n; i++) {
		ar_json_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->s);
	memset(v, 0, sizeof *v);
}

const ArJson *ar_json_get(const ArJson *obj, const char *key)
{
	if (obj->type != AR_JSON_OBJECT)
		return NULL;
	for (int i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}
