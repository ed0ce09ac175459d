/*
 * fw_inputs.h — the inputs compiled into the firmware, as host_io's
 * `carray` writes them from TensorProto files (none: the firmware
 * makes its own, see main.c).
 */
#ifndef ARENAC_FW_INPUTS_H
#define ARENAC_FW_INPUTS_H

#include <stdint.h>

typedef struct fw_blob {
	const char *name;       /* the graph input's name */
	const uint8_t *data;    /* its elements as the arena holds them */
	uint32_t bytes;
} fw_blob;

extern const fw_blob fw_inputs[];
extern const int fw_ninputs;

#endif
