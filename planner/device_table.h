/*
 * device_table.h — named devices (device_table.c): the hardware facts
 * behind --device, --memory NAME and --fit NxNAME, one row per device or
 * host memory, each value with its source beside it in the table.
 *
 * A row is either an accelerator (flops > 0: a GPU, or a Jetson whose
 * GPU shares the module's memory) or a host memory (flops == 0, memory
 * == 0: its size is how many DIMMs are fitted, so the user gives it).
 */
#ifndef ARENAC_DEVICE_TABLE_H
#define ARENAC_DEVICE_TABLE_H

#include <stdint.h>

typedef struct ArDeviceInfo {
	const char *name;       /* what the command line takes: "H100-SXM" */
	const char *product;    /* the vendor's name for it */
	int64_t memory;         /* bytes (2^30 per GB), 0: a host memory */
	const char *kind;       /* "HBM3", "GDDR6X", "DDR5", ... */
	double bandwidth;       /* memory bytes per second, peak */
	double flops;           /* peak dense 16-bit tensor FLOP/s, 0: none */
	double link;            /* device-to-device bytes/s, one direction */
	const char *link_kind;  /* "NVLink 4", "PCIe 4.0 x16", ... */
	int64_t reserve;        /* default --reserve, bytes */
} ArDeviceInfo;

/* The rows, in the order --list-devices prints them. */
const ArDeviceInfo *ar_device_table(int *n);
/* The row named name (ASCII case ignored), or NULL. */
const ArDeviceInfo *ar_device_find(const char *name);

#endif
