/*
 * solve.c — `arenac solve INPUT.csv`: reads buffers as "id,lower,upper,
 * size" (half-open lifetimes, MiniMalloc's format), places them with the
 * dsa solvers and writes the same rows with an offset column.
 *
 * The input is checked strictly, with line numbers, because these files
 * are often made by hand or by other tools.  The solution is re-checked by
 * a sweep that shares no code with the solvers before anything is written:
 * a planner bug must surface as exit 4, never as a corrupt layout.
 */
#include "solve.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsa.h"
#include "dsa_bound.h"
#include "emit.h"
#include "graph.h"
#include "numfmt.h"

/* Sizes stay below 2^62 so that sums of them cannot overflow. */
#define MAX_BYTES ((int64_t)1 << 62)

static const char usage_text[] =
"usage: arenac solve INPUT.csv [--capacity N] [-o OUTPUT.csv]\n"
"                    [--algo NAME] [--effort 1-9] [--time-limit SECONDS]\n"
"                    [--prove]\n"
"\n"
"Places buffers given as CSV rows 'id,lower,upper,size' (live over the\n"
"half-open [lower, upper)) so that buffers live at the same time never\n"
"share a byte, and writes the rows with an 'offset' column added.\n"
"\n"
"  --capacity N          any placement of height <= N (exit 3 if none);\n"
"                        without it, the lowest height found\n"
"  -o FILE               output CSV ('-' or none: stdout)\n"
"  --algo NAME           auto, greedy-size, greedy-breadth, greedy-lifetime,\n"
"                        exact (auto: heuristics, blocks, exact search, then\n"
"                        layer split, local search and probes below its\n"
"                        best when not proven; window repair first from\n"
"                        4096 buffers, 1024 with --capacity)\n"
"  --effort 1-9          work the searches may do, 4x more per level\n"
"                        (5); the same input gives the same answer on\n"
"                        every machine\n"
"  --time-limit SECONDS  safety net: stop the search after SECONDS and\n"
"                        say so (off)\n"
"  --prove               then raise the lower bound by exact searches of\n"
"                        time windows and of the most loaded times (as\n"
"                        much work again); print it and its method\n"
"                        ('bound:') and whether the gap closed ('gap:')\n"
"  -h, --help            this text\n";

typedef struct {
	char **id;
	ArBuf *b;
	int *line;
	int n, cap;
} Rows;

static int fail(const char *file, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const char *file, int code, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "arenac: error: %s: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static bool parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;
	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static int parse_row(Rows *r, char *text, int line, const char *file)
{
	static const char *const names[] = { "lower", "upper", "size" };
	char *f[4], *p = text;
	int64_t v[3];
	int nf = 0;

	for (;;) {
		if (nf == 4)
			return fail(file, AR_EXIT_MODEL, "line %d: more than 4 "
				    "fields", line);
		f[nf++] = p;
		if (!(p = strchr(p, ',')))
			break;
		*p++ = '\0';
	}
	if (nf != 4)
		return fail(file, AR_EXIT_MODEL, "line %d: expected 4 fields "
			    "'id,lower,upper,size', got %d", line, nf);
	if (!*f[0])
		return fail(file, AR_EXIT_MODEL, "line %d: empty id", line);
	for (int k = 0; k < 3; k++)
		if (!parse_i64(f[k + 1], &v[k]))
			return fail(file, AR_EXIT_MODEL, "line %d: %s '%s' is "
				    "not an integer", line, names[k], f[k + 1]);
	if (v[0] >= v[1])
		return fail(file, AR_EXIT_MODEL, "line %d: lower %" PRId64
			    " is not below upper %" PRId64, line, v[0], v[1]);
	if (v[2] <= 0 || v[2] > MAX_BYTES)
		return fail(file, AR_EXIT_MODEL, "line %d: size %" PRId64
			    " is not in 1..2^62", line, v[2]);
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->id = ar_xrealloc(r->id, (size_t)r->cap * sizeof *r->id);
		r->b = ar_xrealloc(r->b, (size_t)r->cap * sizeof *r->b);
		r->line = ar_xrealloc(r->line, (size_t)r->cap * sizeof *r->line);
	}
	r->id[r->n] = ar_xstrdup(f[0]);
	r->b[r->n] = (ArBuf){ v[0], v[1], v[2], 0 };
	r->line[r->n] = line;
	r->n++;
	return AR_OK;
}

static const Rows *cmp_rows;

static int id_cmp(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;
	int c = strcmp(cmp_rows->id[a], cmp_rows->id[b]);
	return c ? c : a - b;
}

static int check_unique(const Rows *r, const char *file)
{
	int *ix = ar_xmalloc((size_t)r->n * sizeof *ix + 1), rc = AR_OK;
	int64_t total = 0;
	for (int i = 0; i < r->n; i++) {
		ix[i] = i;
		total += r->b[i].size;
		if (total > MAX_BYTES) {
			free(ix);
			return fail(file, AR_EXIT_MODEL, "line %d: sizes add up "
				    "past 2^62", r->line[i]);
		}
	}
	cmp_rows = r;
	qsort(ix, (size_t)r->n, sizeof *ix, id_cmp);
	for (int i = 1; i < r->n && !rc; i++)
		if (!strcmp(r->id[ix[i - 1]], r->id[ix[i]]))
			rc = fail(file, AR_EXIT_MODEL, "line %d: duplicate id "
				  "'%s' (first on line %d)", r->line[ix[i]],
				  r->id[ix[i]], r->line[ix[i - 1]]);
	free(ix);
	return rc;
}

static int read_rows(const char *file, Rows *r)
{
	FILE *f = fopen(file, "r");
	char *text = NULL;
	size_t cap = 0;
	ssize_t len;
	int line = 0, rc = AR_OK;

	if (!f)
		return fail(file, AR_EXIT_MODEL, "cannot open: %s",
			    strerror(errno));
	while (!rc && (len = getline(&text, &cap, f)) >= 0) {
		line++;
		while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
			text[--len] = '\0';
		if ((size_t)len != strlen(text))
			rc = fail(file, AR_EXIT_MODEL, "line %d: NUL byte", line);
		else if (line == 1 && strcmp(text, "id,lower,upper,size"))
			rc = fail(file, AR_EXIT_MODEL, "line 1: header must be "
				  "'id,lower,upper,size'");
		else if (line > 1 && r->n == 1 << 30)
			rc = fail(file, AR_EXIT_MODEL, "line %d: too many "
				  "buffers", line);
		else if (line > 1)
			rc = parse_row(r, text, line, file);
	}
	if (!rc && ferror(f))
		rc = fail(file, AR_EXIT_MODEL, "read error: %s",
			  strerror(errno));
	if (!rc && line == 0)
		rc = fail(file, AR_EXIT_MODEL, "empty file, expected the "
			  "header 'id,lower,upper,size'");
	free(text);
	fclose(f);
	return rc ? rc : check_unique(r, file);
}

typedef struct {
	int64_t t;
	int start, i;
} Ev;

static int ev_cmp(const void *pa, const void *pb)
{
	const Ev *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->start - b->start;     /* ends first: half-open */
}

/*
 * Independent overlap check.  The live buffers, kept sorted by offset,
 * are pairwise disjoint by induction, so a newcomer needs comparing with
 * its two neighbours only.  Returns the row of a violation, or -1.
 */
static int find_overlap(const ArBuf *b, int n, int *other)
{
	Ev *ev = ar_xmalloc(2 * (size_t)n * sizeof *ev + 1);
	int *live = ar_xmalloc((size_t)n * sizeof *live + 1);
	int nl = 0, bad = -1;

	for (int i = 0; i < n; i++) {
		ev[2 * i] = (Ev){ b[i].lo, 1, i };
		ev[2 * i + 1] = (Ev){ b[i].hi, 0, i };
		if (b[i].offset < 0 && bad < 0)
			bad = i, *other = i;
	}
	qsort(ev, 2 * (size_t)n, sizeof *ev, ev_cmp);
	for (int e = 0; e < 2 * n && bad < 0; e++) {
		const ArBuf *x = &b[ev[e].i];
		int lo = 0, hi = nl;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			const ArBuf *y = &b[live[mid]];
			if (y->offset < x->offset ||
			    (y->offset == x->offset && live[mid] < ev[e].i))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!ev[e].start) {
			memmove(live + lo, live + lo + 1,
				(size_t)(nl - lo - 1) * sizeof *live);
			nl--;
			continue;
		}
		if (lo > 0 && b[live[lo - 1]].offset + b[live[lo - 1]].size >
			      x->offset)
			bad = ev[e].i, *other = live[lo - 1];
		else if (lo < nl && x->offset + x->size > b[live[lo]].offset)
			bad = ev[e].i, *other = live[lo];
		memmove(live + lo + 1, live + lo, (size_t)(nl - lo) * sizeof *live);
		live[lo] = ev[e].i;
		nl++;
	}
	free(ev), free(live);
	return bad;
}

static int write_rows(const Rows *r, const char *out, const char *file)
{
	ArOutFile o;
	ArError err = { 0 };
	int rc = ar_out_open(&o, out ? out : "-", &err);
	if (rc)
		return fail(file, rc, "%s", err.msg);
	fputs("id,lower,upper,size,offset\n", o.f);
	for (int i = 0; i < r->n; i++)
		fprintf(o.f, "%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
			"\n", r->id[i], r->b[i].lo, r->b[i].hi, r->b[i].size,
			r->b[i].offset);
	if ((rc = ar_out_commit(&o, &err)))
		return fail(file, rc, "%s", err.msg);
	return AR_OK;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool known_algo(const char *name)
{
	for (int i = 0; ar_dsa_algorithms[i]; i++)
		if (!strcmp(name, ar_dsa_algorithms[i]))
			return true;
	return false;
}

static int usage(const char *fmt, const char *arg)
{
	fputs("arenac: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n(arenac solve --help for usage)\n", stderr);
	return AR_EXIT_USAGE;
}

/* The value of option *i, as "--opt VALUE" or "--opt=VALUE". */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);
	if (strncmp(argv[*i], name, len))
		return NULL;
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (argv[*i][len] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

/*
 * --prove: the sub-instance searches (dsa_bound.c), with as much work as the
 * solve had, from the bound it proved up to its height; res's bound and
 * optimality take the result, method says where the bound comes from.
 */
static void prove_bound(const Rows *r, int64_t effort, ArWatch *watch,
			ArDsaResult *res, char *method, size_t len)
{
	ArDsaBound pb;
	ArBudget work;

	ar_budget_init(&work, ar_effort_units((int)effort, AR_SOLVE_WORK),
		       watch);
	ar_dsa_prove(r->b, r->n, res->bound, res->height, &work, &pb);
	if (pb.nspan && pb.t0 < pb.t1)
		snprintf(method, len, "window [%" PRId64 ", %" PRId64 ") of %d "
			 "buffers refuted below it", pb.t0, pb.t1, pb.nbuf);
	else if (pb.nspan)
		snprintf(method, len, "the %d most loaded spans' %d buffers "
			 "refuted below it", pb.nspan, pb.nbuf);
	else
		snprintf(method, len, "%s, none of the sub-instances refuted "
			 "it", res->bound > res->lower_bound ? "exact search"
			 : "peak-live");
	snprintf(method + strlen(method), len - strlen(method), "; %d "
		 "searched%s", pb.searched, pb.stopped ? ", work ran out" : "");
	res->bound = pb.bound;
	res->optimal = res->height <= res->bound;
	res->timed_out |= watch->fired;
}

int arenac_solve_main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *algo = "auto", *v;
	int64_t capacity = 0, effort = AR_EFFORT_DEFAULT;
	double limit = 0, t0;
	Rows r = { 0 };
	ArDsaResult res;
	ArWatch watch;
	ArBudget work;
	int rc = AR_OK, other = -1, bad;
	bool prove = false;
	char n1[AR_NUMFMT_LEN], n2[AR_NUMFMT_LEN], method[128];

	for (int i = 1; i < argc; i++) {
		char *end;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return AR_OK;
		} else if (!strcmp(argv[i], "--prove")) {
			prove = true;
		} else if ((v = opt_value(argc, argv, &i, "--capacity"))) {
			if (!parse_i64(v, &capacity) || capacity <= 0)
				return usage("--capacity wants a positive "
					     "integer, not '%s'", v);
		} else if ((v = opt_value(argc, argv, &i, "-o")) ||
			   (v = opt_value(argc, argv, &i, "--output"))) {
			out = v;
		} else if ((v = opt_value(argc, argv, &i, "--algo"))) {
			if (!known_algo(v))
				return usage("unknown --algo '%s'", v);
			algo = v;
		} else if ((v = opt_value(argc, argv, &i, "--effort"))) {
			if (!parse_i64(v, &effort) || effort < AR_EFFORT_MIN ||
			    effort > AR_EFFORT_MAX)
				return usage("--effort wants a level from 1 to "
					     "9, not '%s'", v);
		} else if ((v = opt_value(argc, argv, &i, "--time-limit"))) {
			errno = 0;
			limit = strtod(v, &end);
			if (errno || end == v || *end || !(limit >= 0))
				return usage("--time-limit wants seconds, not "
					     "'%s'", v);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage("unknown or incomplete option '%s'",
				     argv[i]);
		} else if (in) {
			return usage("more than one input ('%s')", argv[i]);
		} else {
			in = argv[i];
		}
	}
	if (!in)
		return usage("%s", "solve wants an INPUT.csv");
	if ((rc = read_rows(in, &r)))
		goto out;
	t0 = now();
	ar_watch_start(&watch, limit);
	ar_budget_init(&work, ar_effort_units((int)effort, AR_SOLVE_WORK),
		       &watch);
	ar_dsa_solve(r.b, r.n, algo, capacity, &work, &res);
	if (prove)
		prove_bound(&r, effort, &watch, &res, method, sizeof method);
	if (capacity > 0 && res.bound > capacity)
		res.infeasible = true;
	if (res.timed_out)
		fprintf(stderr, "arenac: note: %s: --time-limit %g stopped the "
			"search: another run may differ\n", in, limit);
	fprintf(stderr, "height: %" PRId64 "\nlower bound: %" PRId64
		"\nproven bound: %" PRId64 "\n", res.height, res.lower_bound,
		res.bound);
	if (prove)
		fprintf(stderr, "bound: %" PRId64 " (%s)\n", res.bound, method);
	/* The gap: how far the height may still be above the optimum. */
	if (res.height <= res.bound)
		fputs("gap: closed\n", stderr);
	else
		fprintf(stderr, "gap: %" PRId64 " bytes (%.2f%%)\n",
			res.height - res.bound, 100.0 *
			(double)(res.height - res.bound) / (double)res.bound);
	fprintf(stderr, "algorithm: %s\noptimal: %s\nnodes: %" PRId64
		"\ntime: %.3f s\n", res.algorithm ? res.algorithm : "none",
		res.optimal ? "yes" : "no", res.nodes, now() - t0);
	if (capacity > 0 && res.infeasible) {
		rc = fail(in, AR_EXIT_BUDGET, "no placement fits capacity %s: "
			  "proved infeasible", ar_fmt_count(n1, capacity));
		goto out;
	}
	if (capacity > 0 && res.height > capacity) {
		const char *why = res.timed_out ? "the time limit ran out"
			: res.stopped ? "the work budget ran out; a higher "
			"--effort searches longer"
			: strncmp(algo, "greedy-", 7) ? "the exact search gave "
			"up on a component too large for it"
			: "heuristic only, not a proof";
		rc = fail(in, AR_EXIT_BUDGET, "no placement within capacity %s "
			  "found (%s; best height %s)",
			  ar_fmt_count(n1, capacity), why,
			  ar_fmt_count(n2, res.height));
		goto out;
	}
	if ((bad = find_overlap(r.b, r.n, &other)) >= 0) {
		rc = fail(in, AR_EXIT_INTERNAL, "solver bug: line %d (id %s) "
			  "overlaps line %d (id %s)", r.line[bad], r.id[bad],
			  r.line[other], r.id[other]);
		goto out;
	}
	rc = write_rows(&r, out, in);
out:
	for (int i = 0; i < r.n; i++)
		free(r.id[i]);
	free(r.id), free(r.b), free(r.line);
	return rc;
}
