/*
 * device_names.c — the command line's side of the named devices
 * (planner/device_table.c holds the facts): --device NAME, the names
 * --memory and --fit take, "did you mean" for a name that is not in the
 * table, and --list-devices.
 *
 * --device NAME is the first --memory (the device's own: its size, or
 * the one given as NAME:SIZE, and its bandwidth), the FLOP/s and link bandwidth of the devices' step-time
 * estimate, and, with --train, the default --reserve (an explicit
 * --reserve wins).  It applies once every option is read, so it is the
 * first memory wherever it stands among the --memory options.
 */
#include "numfmt.h"
#include "values.h"

#include <stdio.h>
#include <string.h>

#define NEAREST 3

/* s in upper case, cut to fit buf (names longer than the distance's
 * 40 characters are simply far). */
static size_t upper(const char *s, char *buf, size_t n)
{
	size_t k = 0;
	for (; s[k] && k + 1 < n; k++)
		buf[k] = s[k] >= 'a' && s[k] <= 'z' ? (char)(s[k] - 'a' + 'A') :
			 s[k];
	buf[k] = 0;
	return k;
}

int cli_device_named(const char *opt, const char *name,
		     const ArDeviceInfo **out)
{
	const ArDeviceInfo *t, *best[NEAREST] = {NULL};
	int n, bestd[NEAREST], k = 0;
	char key[64], row[64], list[160] = "";
	size_t len = upper(name, key, sizeof key), at = 0;

	if ((*out = ar_device_find(name)))
		return AR_OK;
	t = ar_device_table(&n);
	/* The NEAREST closest rows, closest first (ties: table order). */
	for (int i = 0; i < n; i++) {
		int d, j = k < NEAREST ? k++ : NEAREST;
		/* A prefix of a name ("H100") is one step from it. */
		size_t rl = upper(t[i].name, row, sizeof row);
		d = cli_edit_distance(key, len, row);
		if (len < rl) {
			int p;
			row[len] = 0;
			p = cli_edit_distance(key, len, row) + 1;
			d = p < d ? p : d;
		}
		while (j > 0 && bestd[j - 1] > d) {
			if (j < NEAREST)
				best[j] = best[j - 1], bestd[j] = bestd[j - 1];
			j--;
		}
		if (j < NEAREST)
			best[j] = &t[i], bestd[j] = d;
	}
	for (int i = 0; i < k; i++)
		at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
				       i ? ", " : "", best[i]->name);
	return cli_usage_error("%s: no device named '%s'; the nearest: %s "
			       "('arenac --list-devices' lists them all)",
			       opt, name, list);
}

/* --device NAME[:SIZE]: SIZE is what the driver shows of it (CUDA's
 * total, below the datasheet's by the driver's own share). */
int cli_parse_device(Cli *c, char *arg)
{
	const ArDeviceInfo *d;
	char *size = strchr(arg, ':');
	const char *bad;
	int rc;
	if (c->device)
		return cli_usage_error("--device given twice (%s, %s): one "
				       "device kind per run", c->device->name,
				       arg);
	if (size)
		*size++ = 0;
	if ((rc = cli_device_named("--device", arg, &d)))
		return rc;
	if (size && (!cli_parse_size(size, &c->device_memory, &bad) ||
		     !c->device_memory))
		return cli_size_error("--device", "NAME:SIZE with a size above "
				      "0", size, bad);
	if (!d->flops)
		return cli_usage_error("--device %s: a host memory, not a "
				       "device that computes; give it as "
				       "--memory %s:SIZE", d->name, d->name);
	c->device = d;
	return AR_OK;
}

int cli_apply_device(Cli *c, bool reserve_given)
{
	const ArDeviceInfo *d = c->device;
	const ArDeviceInfo *f = c->fit_device ? c->fit_device : d;
	if (c->fitting) {
		if (!c->fit.device_flops)
			c->fit.device_flops = f ? f->flops : AR_DEFAULT_FLOPS;
		if (!c->fit.link_bandwidth)
			c->fit.link_bandwidth = f ? f->link : AR_DEFAULT_LINK;
	}
	if (f && c->train && !reserve_given)
		c->topt.reserve = f->reserve;
	if (!d)
		return AR_OK;
	if (c->plan.nmemories == AR_MAX_TIERS)
		return cli_usage_error("at most %d memories, --device's among "
				       "them", AR_MAX_TIERS);
	memmove(&c->memories[1], &c->memories[0],
		(size_t)c->plan.nmemories * sizeof *c->memories);
	c->memories[0] = (ArMemory){d->name, c->device_memory ?
				    c->device_memory : d->memory,
				    d->bandwidth};
	c->plan.memories = c->memories;
	c->plan.nmemories++;
	c->dev.device_flops = d->flops;
	c->dev.link_bandwidth = d->link;
	return AR_OK;
}

/* "80 GiB", "-" for a host memory's size. */
static const char *size_text(int64_t bytes, char *buf, size_t n)
{
	if (!bytes)
		return "-";
	snprintf(buf, n, "%lld GiB", (long long)(bytes >> 30));
	return buf;
}

/* Decimal rates: "3.35 TB/s", "989.4 TFLOP/s"; "-" for none. */
static const char *rate_text(double v, const char *unit, char *buf,
			     size_t n)
{
	static const char prefix[] = "kMGTP";
	int p = 0;
	if (!(v > 0))
		return "-";
	v /= 1e3;
	while (v >= 1e3 && p < 4)
		v /= 1e3, p++;
	snprintf(buf, n, "%.5g %c%s", v, prefix[p], unit);
	return buf;
}

void cli_device_about(const ArDeviceInfo *d, char *buf, size_t n)
{
	char bw[32];
	snprintf(buf, n, "%s, %s %s", d->name, d->kind,
		 rate_text(d->bandwidth, "B/s", bw, sizeof bw));
}

void cli_print_device(FILE *f, const ArDeviceInfo *d, int64_t reserve)
{
	char bw[32], fl[32], ln[32], rs[AR_NUMFMT_LEN];
	fprintf(f, "  device         %s: %lld GiB %s at %s, %s, %s %s one way; "
		"--reserve %s bytes\n", d->name, (long long)(d->memory >> 30),
		d->kind, rate_text(d->bandwidth, "B/s", bw, sizeof bw),
		rate_text(d->flops, "FLOP/s", fl, sizeof fl), d->link_kind,
		rate_text(d->link, "B/s", ln, sizeof ln),
		ar_fmt_count(rs, reserve));
}

void cli_print_step_rates(FILE *f, const ArDeviceInfo *d,
			  const ArTrainBill *b, const ArPlan *p)
{
	const ArRegion *x = p->nregions ? &p->regions[0] : NULL;
	double flops = (double)b->forward_flops + (double)b->backward_flops +
		       (double)b->recompute_flops;
	char fl[32], bw[32], t[AR_NUMFMT_LEN];
	fprintf(f, "  at peak rates    compute %.3g ms at %s", flops /
		d->flops * 1e3, rate_text(d->flops, "FLOP/s", fl, sizeof fl));
	/* The tiers' estimate of what the steps read and write of the
	 * activations in the device's memory, op by op. */
	if (x && !strcmp(x->name, d->name) && x->bandwidth > 0)
		fprintf(f, "; activation traffic %s bytes, %.3g ms at %s (op by "
			"op, weights not counted)",
			ar_fmt_count(t, x->traffic_bytes),
			(double)x->traffic_bytes / x->bandwidth * 1e3,
			rate_text(x->bandwidth, "B/s", bw, sizeof bw));
	fputc('\n', f);
}

int cli_list_devices(Cli *c, char *arg)
{
	int n;
	const ArDeviceInfo *t = ar_device_table(&n);
	(void)c, (void)arg;
	printf("%-20s %8s %-8s %11s %14s %11s %-16s %11s\n", "name", "memory",
	       "kind", "bandwidth", "bf16 dense", "link", "link kind",
	       "reserve");
	for (int i = 0; i < n; i++) {
		char m[24], bw[32], fl[32], ln[32], rs[AR_NUMFMT_LEN];
		printf("%-20s %8s %-8s %11s %14s %11s %-16s %11s\n", t[i].name,
		       size_text(t[i].memory, m, sizeof m), t[i].kind,
		       rate_text(t[i].bandwidth, "B/s", bw, sizeof bw),
		       rate_text(t[i].flops, "FLOP/s", fl, sizeof fl),
		       rate_text(t[i].link, "B/s", ln, sizeof ln),
		       t[i].link_kind, ar_fmt_count(rs, t[i].reserve));
	}
	puts("\nmemory: 2^30 bytes per GiB (host memories: give the size, "
	     "--memory NAME:SIZE);\nbandwidth, FLOP/s and link: powers of "
	     "1000, the link one direction;\nreserve: the default --reserve "
	     "with --device, bytes (a CUDA context)");
	return CLI_DONE;
}
