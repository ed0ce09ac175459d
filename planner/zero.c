/*
 * zero.c — what a device holds under data parallelism with ZeRO
 * (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training
 * Trillion Parameter Models", SC 2020, section 3.1 and Figure 1).
 *
 * Mixed precision keeps per parameter 2 bytes of working weights, 2 of
 * gradients and K of optimizer state (Adam: fp32 master weights and two
 * moments, K = 12); a stage's bill has them all (checkpoint.h).  With N_d
 * data-parallel devices, stage 1 partitions the optimizer state, stage 2
 * the gradients too, stage 3 the weights too; a partitioned state of Psi
 * elements takes ceil(Psi / N_d) on each device (the last one padded, as
 * DeepSpeed pads its flat partitions), so 7.5e9 parameters over 64
 * devices take 120,000,000,000 / 31,406,250,000 / 16,640,625,000 /
 * 1,875,000,000 bytes of model states at stages 0 to 3.  Frozen weights
 * are partitioned at stage 3 only; constants never are.
 *
 * Buffers: gradients are reduced in buckets (PyTorch DDP's
 * bucket_cap_mb, DeepSpeed's reduce_bucket_size), one bucket of --bucket
 * bytes (at most the gradients); stage 3 gathers one layer's weights at a
 * time, the largest layer's whole.  Communication per step, each device
 * sending: a ring all-reduce of the gradients, 2 (N_d - 1) / N_d of their
 * bytes, at stages 0 to 2 (reduce-scatter plus all-gather of the updated
 * weights at 1 and 2); 3 (N_d - 1) / N_d at stage 3, which gathers the
 * weights for the forward and again for the backward pass.
 */
#include "devices.h"

int64_t ar_zero_part(int64_t bytes, int64_t psi, int dp)
{
	if (dp <= 1)
		return bytes;
	if (psi > 0 && bytes % psi == 0)
		return ar_train_mul((psi + dp - 1) / dp, bytes / psi);
	return (bytes + dp - 1) / dp;
}

void ar_zero_bill(const ArTrainBill *b, int dp, int zero, int64_t bucket,
		  int64_t gathered, ArDeviceBill *out, int64_t *dp_bytes)
{
	int64_t psi = b->parameter_count;
	int64_t state = ar_train_add(b->master_weight_bytes,
				     b->optimizer_state_bytes);
	int shards = dp > 1 ? dp : 1;
	/* Frozen weights, quantised or not, are partitioned by ZeRO-3 as the
	 * trained ones are (FSDP shards QLoRA's 4-bit weights too). */
	int64_t frozen = ar_train_add(b->frozen_bytes, b->quant_base_bytes);
	out->parameters = zero >= 3 ?
		ar_train_add(ar_zero_part(b->parameter_bytes, psi, shards),
			     ar_zero_part(frozen, 0, shards)) :
		ar_train_add(b->parameter_bytes, frozen);
	out->gradients = zero >= 2 ? ar_zero_part(b->gradient_bytes, psi, shards)
				   : b->gradient_bytes;
	out->optimizer_state = zero >= 1 ? ar_zero_part(state, psi, shards)
					 : state;
	out->constants = b->constant_bytes;
	out->buffers = 0;
	*dp_bytes = 0;
	if (dp <= 1)
		return;
	out->buffers = bucket < b->gradient_bytes ? bucket : b->gradient_bytes;
	if (zero >= 3)
		out->buffers = ar_train_add(out->buffers, gathered);
	*dp_bytes = ar_train_mul(b->gradient_bytes / dp,
				 (int64_t)(zero >= 3 ? 3 : 2) * (dp - 1));
}
