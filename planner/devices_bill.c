/*
 * devices_bill.c — from the stages' plans to every device: each rank's
 * bill, the largest total, the step-time estimate, and the capacities of
 * the memories given with --memory.
 *
 * The estimate (seconds per step, for ranking configurations, not a
 * prediction): a microbatch's time on a stage is its FLOPs (forward,
 * backward, recompute) at the device's FLOP/s, plus the bytes it sends
 * (tensor-parallel collectives, pipeline sends) at the link's bandwidth,
 * plus its offload transfers at the offload memory's bandwidth.  A step
 * runs M microbatches through p stages: (M + p - 1) times the slowest
 * stage's microbatch, the p - 1 being the pipeline's bubble; then the
 * data-parallel reduction and the optimizer's offload transfers.  No
 * overlap of communication with compute is assumed.
 */
#include "devices.h"
#include "numfmt.h"

#include <stdlib.h>

static double seconds(int64_t amount, double rate)
{
	return rate > 0 ? (double)amount / rate : 0.0;
}

/* The bandwidth of the memory offload kind k goes to (0: none given). */
static double tier_rate(const ArDevicesSpec *s, int k)
{
	return s->offload[k] > 0 ? s->memories[s->offload[k]].bandwidth : 0;
}

static void estimate_time(ArDevicesResult *r)
{
	const ArDevicesSpec *s = &r->spec;
	double tmax = 0, fmax = 0, cmax = 0, dmax = 0;
	int64_t m = s->microbatches;

	for (int i = 0; i < r->nstages; i++) {
		const ArStage *st = &r->stages[i];
		double f = seconds(st->flops, s->device_flops);
		double c = seconds(st->comm_bytes, s->link_bandwidth);
		double t = f + c;
		for (int k = AR_OFF_PARAMETERS; k < AR_OFF_KINDS; k++)
			t += seconds(st->moved_bytes[k] / m, tier_rate(s, k));
		for (int k = 0; k < AR_OFF_KINDS; k++) {
			double mk = seconds(st->moved_bytes[k], tier_rate(s, k));
			if (mk > r->moved_s[k])
				r->moved_s[k] = mk;
		}
		tmax = t > tmax ? t : tmax;
		fmax = f > fmax ? f : fmax;
		cmax = c > cmax ? c : cmax;
		if (seconds(st->dp_bytes, s->link_bandwidth) > dmax)
			dmax = seconds(st->dp_bytes, s->link_bandwidth);
	}
	r->compute_s = (double)m * fmax;
	r->comm_s = (double)m * cmax + dmax;
	r->bubble_s = (double)(r->nstages - 1) * tmax;
	r->offload_s = 0;
	for (int k = 0; k < AR_OFF_KINDS; k++)
		r->offload_s += r->moved_s[k];
	r->step_s = (double)m * tmax + r->bubble_s + dmax +
		    r->moved_s[AR_OFF_OPTIMIZER];
}

void ar_devices_finish(ArDevicesResult *r)
{
	const ArDevicesSpec *s = &r->spec;
	int world = s->dp * s->tp * r->nstages, n = 0;

	r->ndevices = world;
	r->devices = ar_xcalloc((size_t)world, sizeof *r->devices);
	r->largest = r->offloaded_total = 0;
	for (int st = 0; st < r->nstages; st++)
		for (int d = 0; d < s->dp; d++)
			for (int t = 0; t < s->tp; t++) {
				ArDeviceBill *b = &r->devices[n++];
				*b = r->stages[st].bill;
				b->rank = (st * s->dp + d) * s->tp + t;
				b->stage = st;
				b->dp_rank = d;
				b->tp_rank = t;
				if (b->total > r->largest)
					r->largest = b->total;
				r->offloaded_total = ar_train_add(
					r->offloaded_total, b->offloaded);
			}
	for (int i = 0; i < r->nstages; i++)
		r->stages[i].bill.rank = i * s->dp * s->tp;
	estimate_time(r);
}

int ar_devices_check(const ArDevicesResult *r, ArError *err)
{
	const ArDevicesSpec *s = &r->spec;
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], c[AR_NUMFMT_LEN];
	int gpn = s->gpus_per_node && s->gpus_per_node < r->ndevices ?
		  s->gpus_per_node : r->ndevices;
	if (s->nmemories < 1)
		return AR_OK;
	for (int i = 0; i < r->ndevices; i++)
		if (ar_train_add(r->devices[i].total, s->reserve) >
		    s->memories[0].capacity)
			return ar_fail(err, AR_EXIT_BUDGET, "device rank %d "
				       "(stage %d) needs %s bytes%s%s%s, more "
				       "than the %s of memory '%s'",
				       r->devices[i].rank, r->devices[i].stage,
				       ar_fmt_count(a, r->devices[i].total),
				       s->reserve ? " and --reserve " : "",
				       s->reserve ? ar_fmt_count(c, s->reserve)
						  : "",
				       s->reserve ? " more" : "",
				       ar_fmt_count(b, s->memories[0].capacity),
				       s->memories[0].name);
	/* An offload memory is each node's (host.c bills the rest of it). */
	for (int mem = 1; mem < s->nmemories; mem++)
		for (int node = 0; node * gpn < r->ndevices; node++) {
			int64_t sum = 0;
			int last = node * gpn + gpn < r->ndevices ?
				   node * gpn + gpn : r->ndevices;
			for (int i = node * gpn; i < last; i++)
				for (int k = 0; k < AR_OFF_KINDS; k++)
					if (s->offload[k] == mem)
						sum = ar_train_add(sum, r->stages[
							r->devices[i].stage].
							offloaded[k]);
			if (sum > s->memories[mem].capacity)
				return ar_fail(err, AR_EXIT_BUDGET, "the state "
					       "offloaded to memory '%s' takes "
					       "%s bytes over the %d devices of "
					       "node %d, more than its %s",
					       s->memories[mem].name,
					       ar_fmt_count(a, sum), last -
					       node * gpn, node, ar_fmt_count(b,
					       s->memories[mem].capacity));
		}
	return AR_OK;
}

void ar_devices_offload_most(const ArDevicesResult *r, int k, int64_t *held,
			     int64_t *moved)
{
	*held = *moved = 0;
	for (int i = 0; i < r->nstages; i++) {
		if (r->stages[i].offloaded[k] > *held)
			*held = r->stages[i].offloaded[k];
		if (r->stages[i].moved_bytes[k] > *moved)
			*moved = r->stages[i].moved_bytes[k];
	}
}
