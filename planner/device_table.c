/*
 * device_table.c — the one table of named devices (device_table.h): each
 * GPU's memory size, kind and bandwidth, its peak dense 16-bit tensor
 * FLOP/s, its link to the other devices, and the --reserve a run on it
 * starts with; host memories by speed and channel count.
 *
 * Conventions, so rows compare:
 *  - memory: the vendor's "GB" of DRAM capacity is 2^30 bytes (JEDEC
 *    JESD100B.01 defines giga as 2^30 for memory capacity; HBM and GDDR
 *    stacks come in 2^30-byte multiples: the H100's 80 GB are five
 *    16 GiB stacks).  The total CUDA and PyTorch show is less by the
 *    driver's own share, which depends on the driver, ECC and the board,
 *    so it is not in the table nor in the default reserve: an A100
 *    40GB's deviceQuery shows 42,405,855,232 of its 42,949,672,960 bytes
 *    (the PC2 cluster's page on its A100 nodes), nvidia-smi 81,559 MiB
 *    of an H100 80GB's 81,920 (Modal, "Why does an NVIDIA H100 80GB
 *    card offer 85.52 GB?"), PyTorch's out-of-memory message "23.68 GiB
 *    total capacity" of an RTX 4090's 24.  --device NAME:SIZE takes the
 *    total torch.cuda.mem_get_info() gives on the user's machine;
 *  - bandwidth and link: decimal bytes per second as the vendor states
 *    them; the link one direction (datasheets give NVLink both ways
 *    added: "900 GB/s" is 450 GB/s each way), NVLink through NVSwitch
 *    for SXM parts, PCIe for cards in a slot (an NVLink bridge joins two
 *    cards only, so a --dp over more talks over PCIe);
 *  - flops: dense (datasheets print "with sparsity" figures, twice the
 *    dense ones, marked by an asterisk), bf16 in and fp32 accumulate,
 *    the kind PyTorch's bf16 and fp16 matmuls run (GeForce cards run it
 *    at half their fp16-accumulate rate, which their whitepapers list
 *    apart);
 *  - reserve: what a CUDA process holds before the step's first tensor.
 *    PyTorch PR #86509 ("Sets CUDA_MODULE_LOADING to LAZY when not set
 *    by the user", in torch 1.13) measured total - free of
 *    cudaMemGetInfo after one torch.randn(20, 16, 50, 100).cuda():
 *    287,047,680 bytes with lazy module loading (666,632,192 without).
 *    That tensor's 6,400,000 bytes are a "large" request under 10 MiB,
 *    for which PyTorch's caching allocator cudaMallocs a whole
 *    kLargeBuffer of 20,971,520 bytes (c10/cuda/CUDACachingAllocator.cpp,
 *    get_allocation_size), so the context is 287,047,680 - 20,971,520 =
 *    266,076,160 bytes.  The PR does not name its GPU; a context grows
 *    with the SM count, CUDA's version and the libraries a run loads
 *    (cuDNN, NCCL's buffers), and the allocator's rounding comes on top:
 *    --reserve sets what a run measured.  Lazy loading is PyTorch's
 *    default since 1.13 and CUDA's own since 12.2 (CUDA C Programming
 *    Guide, "Lazy Loading").  Host memories: 0.
 *
 * The documents named are the vendors'; this table was written without
 * the web, from their figures as transcribed in the reference pages at
 * hand (which agreed with each other); a value none of them gave is
 * marked so.
 */
#include "device_table.h"

#include <stddef.h>

#define GIB(n) ((int64_t)(n) << 30)
#define CUDA_CONTEXT ((int64_t)(287047680 - 20971520))
/* A DDR channel is 64 bits wide (DDR5: two 32-bit subchannels), so its
 * peak is MT/s x 8 bytes (JESD79-4 for DDR4, JESD79-5 for DDR5). */
#define DDR(mts, channels) ((double)(mts) * 1e6 * 8 * (channels))

static const ArDeviceInfo table[] = {
	/* NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-
	 * nvidia-1758950-r4-web): A100 40GB SXM: 40GB HBM2, 1,555 GB/s;
	 * BFLOAT16 Tensor Core 312 TFLOPS (624* with sparsity); NVLink
	 * 600 GB/s. */
	{"A100-SXM-40GB", "NVIDIA A100 40GB SXM4", GIB(40), "HBM2", 1555e9,
	 312e12, 300e9, "NVLink 3", CUDA_CONTEXT},
	/* The same datasheet: A100 80GB SXM: 80GB HBM2e, 2,039 GB/s. */
	{"A100-SXM-80GB", "NVIDIA A100 80GB SXM4", GIB(80), "HBM2e", 2039e9,
	 312e12, 300e9, "NVLink 3", CUDA_CONTEXT},
	/* The same datasheet: A100 80GB PCIe: 1,935 GB/s; PCIe Gen4
	 * 64 GB/s (both ways). */
	{"A100-PCIe-80GB", "NVIDIA A100 80GB PCIe", GIB(80), "HBM2e", 1935e9,
	 312e12, 32e9, "PCIe 4.0 x16", CUDA_CONTEXT},
	/* NVIDIA H100 Tensor Core GPU datasheet: H100 SXM: 80GB HBM3,
	 * 3.35 TB/s; BF16 Tensor Core 1,979* TFLOPS with sparsity (the
	 * Hopper architecture whitepaper's table: 989.4 dense); NVLink
	 * 900 GB/s. */
	{"H100-SXM", "NVIDIA H100 SXM5 80GB", GIB(80), "HBM3", 3.35e12,
	 989.4e12, 450e9, "NVLink 4", CUDA_CONTEXT},
	/* The same datasheet: H100 PCIe: 80GB HBM2e, 2 TB/s; BF16 1,513*
	 * TFLOPS with sparsity; PCIe Gen5 128 GB/s (both ways). */
	{"H100-PCIe", "NVIDIA H100 PCIe 80GB", GIB(80), "HBM2e", 2.0e12,
	 756.5e12, 64e9, "PCIe 5.0 x16", CUDA_CONTEXT},
	/* NVIDIA H200 Tensor Core GPU datasheet: H200 SXM: 141GB HBM3e,
	 * 4.8 TB/s; BF16 1,979* TFLOPS with sparsity (the H100's GH100 at
	 * the same clocks: 989.4 dense); NVLink 900 GB/s. */
	{"H200", "NVIDIA H200 SXM 141GB", GIB(141), "HBM3e", 4.8e12,
	 989.4e12, 450e9, "NVLink 4", CUDA_CONTEXT},
	/* NVIDIA HGX B200 datasheet (eight B200 at 1,000 W): FP16/BF16
	 * Tensor Core 36* PFLOPS with sparsity and 1,440 GB of HBM3e for
	 * the eight, so 2.25 PFLOPS dense and 180 GB each; 8 TB/s; NVLink 5
	 * 1.8 TB/s.  (192 GB was the figure at announcement; nvidia-smi on
	 * an HGX B200 shows 179 GB: the driver's share.) */
	{"B200", "NVIDIA B200 (HGX, 1,000 W)", GIB(180), "HBM3e", 8e12,
	 2.25e15, 900e9, "NVLink 5", CUDA_CONTEXT},
	/* NVIDIA L4 Tensor Core GPU datasheet: 24GB GDDR6, 300 GB/s;
	 * BF16 Tensor Core 242* TFLOPS with sparsity; PCIe Gen4 x16
	 * 64 GB/s (both ways). */
	{"L4", "NVIDIA L4", GIB(24), "GDDR6", 300e9, 121e12, 32e9,
	 "PCIe 4.0 x16", CUDA_CONTEXT},
	/* NVIDIA L40S datasheet: 48GB GDDR6 with ECC, 864 GB/s; BFLOAT16
	 * Tensor Core 362.05 TFLOPS (733* with sparsity); PCIe Gen4 x16
	 * 64 GB/s bidirectional. */
	{"L40S", "NVIDIA L40S", GIB(48), "GDDR6", 864e9, 362.05e12, 32e9,
	 "PCIe 4.0 x16", CUDA_CONTEXT},
	/* NVIDIA Ampere GA102 GPU Architecture whitepaper, RTX 3090: 24 GB
	 * GDDR6X, 936 GB/s; Peak BF16 Tensor TFLOPS with FP32 Accumulate
	 * 71 (142 with sparsity).  Its NVLink bridge (112.5 GB/s) joins
	 * two cards; the link here is the slot's. */
	{"RTX-3090", "NVIDIA GeForce RTX 3090", GIB(24), "GDDR6X", 936e9,
	 71e12, 32e9, "PCIe 4.0 x16", CUDA_CONTEXT},
	/* NVIDIA Ada GPU Architecture whitepaper, RTX 4090: 24 GB GDDR6X,
	 * 1,008 GB/s; Peak BF16 Tensor TFLOPS with FP32 Accumulate 165.2
	 * (330.4 with sparsity); no NVLink. */
	{"RTX-4090", "NVIDIA GeForce RTX 4090", GIB(24), "GDDR6X", 1008e9,
	 165.2e12, 32e9, "PCIe 4.0 x16", CUDA_CONTEXT},
	/* NVIDIA RTX Blackwell GPU Architecture whitepaper, RTX 5090: 32 GB
	 * GDDR7, 1,792 GB/s, PCIe Gen5.  Its FP32-accumulate tensor rate
	 * was not in the pages at hand: they give 838.4 TFLOPS FP16 with
	 * sparsity (FP16 accumulate), 419 dense; 209.5 is half of that, as
	 * the whitepapers list it for the 3090 and 4090 (unverified). */
	{"RTX-5090", "NVIDIA GeForce RTX 5090", GIB(32), "GDDR7", 1792e9,
	 209.5e12, 64e9, "PCIe 5.0 x16", CUDA_CONTEXT},
	/* AMD Instinct MI300X accelerator datasheet: 192 GB HBM3,
	 * 5.3 TB/s; Peak BF16 1,307.4 TFLOPS (2,614.9 with sparsity); seven
	 * Infinity Fabric links of 128 GB/s (both ways), 896 GB/s in all.
	 * Reserve: no measurement of a ROCm (HIP) context was at hand; the
	 * CUDA one stands in. */
	{"MI300X", "AMD Instinct MI300X", GIB(192), "HBM3", 5.3e12, 1307.4e12,
	 448e9, "Infinity Fabric", CUDA_CONTEXT},
	/* NVIDIA Jetson AGX Orin Series technical brief: 64GB 256-bit
	 * LPDDR5, 204.8 GB/s, shared by CPU and GPU (Linux's share is not
	 * in the reserve); GPU 170 sparse INT8 TOPS: 85 dense, and half
	 * that in FP16 on Ampere's tensor cores, 42.5 (derived, not a
	 * printed figure).  No NVLink: two modules talk over the
	 * developer kit's 10GbE. */
	{"Jetson-AGX-Orin-64GB", "NVIDIA Jetson AGX Orin 64GB", GIB(64),
	 "LPDDR5", 204.8e9, 42.5e12, 1.25e9, "10GbE", CUDA_CONTEXT},
	/* NVIDIA Jetson Orin Nano Super Developer Kit datasheet (JetPack
	 * 6.1's clocks): 8GB 128-bit LPDDR5, 102 GB/s; 67 sparse INT8 TOPS,
	 * 16.75 dense FP16 by the same halvings (32 tensor cores at
	 * 1,020 MHz doing an A100 tensor core's 512 FLOP a clock agree:
	 * 16.7; so do the AGX's 64 at 1.3 GHz: 42.6).  The kit's Ethernet
	 * is gigabit. */
	{"Jetson-Orin-Nano-8GB", "NVIDIA Jetson Orin Nano 8GB (Super)",
	 GIB(8), "LPDDR5", 102e9, 16.75e12, 0.125e9, "1GbE", CUDA_CONTEXT},

	/* Host memories: give the size (--memory NAME:SIZE).  Two channels:
	 * a desktop; eight: a Xeon socket (Ice Lake DDR4-3200, Sapphire
	 * Rapids DDR5-4800, Emerald Rapids DDR5-5600); twelve: an EPYC 9004
	 * socket (DDR5-4800; AMD gives 460.8 GB/s, as the formula does). */
	{"DDR4-3200-2ch", "DDR4-3200, 2 channels", 0, "DDR4", DDR(3200, 2),
	 0, 0, "-", 0},
	{"DDR4-3200-8ch", "DDR4-3200, 8 channels", 0, "DDR4", DDR(3200, 8),
	 0, 0, "-", 0},
	{"DDR5-4800-2ch", "DDR5-4800, 2 channels", 0, "DDR5", DDR(4800, 2),
	 0, 0, "-", 0},
	{"DDR5-4800-8ch", "DDR5-4800, 8 channels", 0, "DDR5", DDR(4800, 8),
	 0, 0, "-", 0},
	{"DDR5-4800-12ch", "DDR5-4800, 12 channels", 0, "DDR5",
	 DDR(4800, 12), 0, 0, "-", 0},
	{"DDR5-5600-2ch", "DDR5-5600, 2 channels", 0, "DDR5", DDR(5600, 2),
	 0, 0, "-", 0},
	{"DDR5-5600-8ch", "DDR5-5600, 8 channels", 0, "DDR5", DDR(5600, 8),
	 0, 0, "-", 0},
	{"DDR5-5600-12ch", "DDR5-5600, 12 channels", 0, "DDR5",
	 DDR(5600, 12), 0, 0, "-", 0},
	/* JESD209-5B: LPDDR5X up to 8,533 MT/s on 16-bit channels; a
	 * 128-bit bus (eight of them, as laptops fit) peaks at 8,533 MT/s x
	 * 16 bytes. */
	{"LPDDR5X-8533-128bit", "LPDDR5X-8533, 128-bit bus", 0, "LPDDR5X",
	 8533e6 * 16, 0, 0, "-", 0},
};

const ArDeviceInfo *ar_device_table(int *n)
{
	*n = (int)(sizeof table / sizeof *table);
	return table;
}

static int lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

const ArDeviceInfo *ar_device_find(const char *name)
{
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		const char *a = table[i].name, *b = name;
		while (*a && lower(*a) == lower(*b))
			a++, b++;
		if (!*a && !*b)
			return &table[i];
	}
	return NULL;
}
