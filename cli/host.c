/*
 * host.c — the host's bill on the command line (planner/host.h): --loader
 * and --host-memory read, the whole model's facts gathered, the bill
 * made for one device or many, and its block in the summary: per node,
 * which memory holds what at the load and during the steps.
 */
#include "numfmt.h"
#include "options.h"
#include "values.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Nodes whose totals the summary lists, at most (the JSON has all). */
#define NODES_SHOWN 8

/* --loader WORKERS[:PREFETCH]: torch's num_workers and prefetch_factor
 * (2 by default; with 0 workers torch takes none: the main process loads
 * one batch). */
int cli_parse_loader(Cli *c, char *arg)
{
	char *end, *colon = strchr(arg, ':');
	long w, p = 2;
	errno = 0;
	w = strtol(arg, &end, 10);
	if (errno || end == arg || end != (colon ? colon : arg + strlen(arg)) ||
	    w < 0 || w > 1024)
		return cli_usage_error("--loader wants WORKERS[:PREFETCH], "
				       "workers 0 to 1024 (4:2), not '%s'",
				       arg);
	if (colon) {
		p = strtol(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || p < 1 || p > 1024)
			return cli_usage_error("--loader %s: PREFETCH wants "
					       "batches per worker, 1 to 1024, "
					       "not '%s'", arg, colon + 1);
		if (!w)
			return cli_usage_error("--loader %s: with 0 workers the "
					       "main process loads one batch at "
					       "a time; PREFETCH needs workers "
					       "(as torch's prefetch_factor "
					       "does)", arg);
	}
	c->host.workers = (int)w;
	c->host.prefetch = w ? (int)p : 1;
	return AR_OK;
}

/* --host-memory SIZE or NAME:SIZE (a host memory of --list-devices). */
int cli_parse_host_memory(Cli *c, char *arg)
{
	char *colon = strchr(arg, ':');
	const char *size = arg, *bad;
	if (colon) {
		const ArDeviceInfo *d;
		int rc;
		*colon = 0;
		if ((rc = cli_device_named("--host-memory (SIZE, or NAME:SIZE "
					   "of a host memory)", arg, &d)))
			return rc;
		if (d->flops)
			return cli_usage_error("--host-memory %s: a device that "
					       "computes, not a host memory",
					       d->name);
		c->host.memory_name = d->name;
		size = colon + 1;
	}
	if (!cli_parse_size(size, &c->host.memory, &bad) || !c->host.memory)
		return cli_size_error("--host-memory", "a size above 0", size,
				      bad);
	return AR_OK;
}

int cli_host_bill(Cli *c, const ArGraph *g, const ArTrainSpec *spec,
		  const ArTrainModel *m, const ArTrainBill *b,
		  const ArDevicesResult *r, ArError *err)
{
	ArTrainModel *own = NULL;
	ArHostModel hm;
	int rc;
	/* Many devices plan stages of split graphs: the whole model's facts
	 * come from the model itself. */
	if (!m && (rc = ar_train_model(g, spec, &own, err)))
		return rc;
	ar_host_model(g, m ? m : own, &hm);
	ar_train_model_free(own);
	rc = r ? ar_host_bill_devices(&c->host, &hm, r, &c->host_bill, err)
	       : ar_host_bill_one(&c->host, &hm, b, &c->host_bill, err);
	c->host_done = true;
	return rc;
}

void cli_print_host(FILE *f, const ArHostBill *h)
{
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], c[AR_NUMFMT_LEN];
	static const char *const moment[2] = {"steps", "load"};

	fprintf(f, "host           node %d of %d: %d rank%s (--gpus-per-node "
		"%d)%s%s%s\n", h->node, h->nodes, h->ranks,
		h->ranks == 1 ? "" : "s", h->gpus_per_node,
		h->spec.memory_name ? ", host memory '" : "",
		h->spec.memory_name ? h->spec.memory_name : "",
		h->spec.memory_name ? "'" : "");
	for (int k = 0; k < AR_HOST_PARTS; k++) {
		const ArHostPartInfo *p = ar_host_part(k);
		if (!h->part[k])
			continue;
		fprintf(f, "  %-22s %16s  %-5s %-6s %s\n", p->name,
			ar_fmt_count(a, h->part[k]), moment[p->load],
			p->pinned ? "pinned" : "", p->what);
	}
	fprintf(f, "  %-22s %16s  (%s)\n", "load", ar_fmt_count(a, h->load_bytes),
		ar_fmt_size(b, h->load_bytes));
	fprintf(f, "  %-22s %16s  (%s; pinned %s)\n", "steps",
		ar_fmt_count(a, h->step_bytes), ar_fmt_size(b, h->step_bytes),
		ar_fmt_count(c, h->pinned_bytes));
	fprintf(f, "  %-22s %16s  (%s, the larger)", "total", ar_fmt_count(a,
		h->peak_bytes), ar_fmt_size(b, h->peak_bytes));
	if (h->spec.memory && h->headroom_bytes >= 0)
		fprintf(f, "; fits the host's %s, headroom %s",
			ar_fmt_count(a, h->spec.memory),
			ar_fmt_count(b, h->headroom_bytes));
	else if (h->spec.memory)
		fprintf(f, "; over the host's %s by %s",
			ar_fmt_count(a, h->spec.memory),
			ar_fmt_count(b, -h->headroom_bytes));
	fputc('\n', f);
	if (h->nodes > 1) {
		fprintf(f, "  %-22s", "every node's total");
		for (int i = 0; i < h->nodes && i < NODES_SHOWN; i++)
			fprintf(f, "%s%d: %s", i ? ", " : " ", i,
				ar_fmt_count(a, h->node_peak[i]));
		fprintf(f, "%s\n", h->nodes > NODES_SHOWN ? ", ..." : "");
	}
	fprintf(f, "  (DeepSpeed's estimate_zero%d_model_states_mem_needs, "
		"offload %s: %s bytes a node's CPU, %s a GPU)\n", h->ds_stage,
		h->ds_offload_params ? "params and optimizer" : h->ds_offload ?
		"optimizer" : "none", ar_fmt_count(a, h->ds_cpu_bytes),
		ar_fmt_count(b, h->ds_gpu_bytes));
}
