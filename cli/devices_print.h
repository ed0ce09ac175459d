/*
 * devices_print.h — the multi-device tables on stdout (devices_print.c).
 */
#ifndef ARENAC_DEVICES_PRINT_H
#define ARENAC_DEVICES_PRINT_H

#include <stdio.h>

#include "devices.h"

/* One row per pipeline stage: bytes a device holds, by part. */
void ar_print_devices(FILE *f, const char *model, const ArDevicesResult *r);
/* --fit: the configurations that fit, cheapest first. */
void ar_print_fit(FILE *f, const char *model, const ArFitSpec *spec,
		  const ArFitResult *fr);

#endif
