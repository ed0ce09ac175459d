/*
 * main.c — the firmware program `make firmware` builds: one model's
 * header (arenac's arena layout and tables), its weights as a C array in
 * flash, and the reference runtime.  It copies the inputs (a generated
 * C file, firmware/host_io.c's `carray`) into their arena slots, runs
 * the plan once and prints every output's bytes in hex, exactly, for
 * the host to compare (host_io's `compare`):
 *
 *     output NAME DTYPE BYTES
 *     <hex, 32 bytes a line>
 *     done arena BYTES steps N
 *
 * or "error: MESSAGE" and a failing exit.  Built with -DARENAC_HEADER=
 * '"m.h"' -DLO=m -DUP=M; no printf, no heap: the board (board.h) only
 * writes strings.  A plan of several memories (arenac --memory) runs
 * with the header's arena per memory (art_run_arenas), its weights
 * copied from flash to the start of their memory with --weights-in.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arenac_rt.h"
#include "board.h"
#include "fw_inputs.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define L(x) CAT(LO, x)
#define U(x) CAT(UP, x)

#include ARENAC_HEADER

ARENAC_RT_BIND(LO, UP)

static void put_dec(uint32_t v)
{
	char d[24], *p = d + sizeof d;
	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	board_write(p);
}

static void put_hex(const uint8_t *b, uint32_t n)
{
	static const char hex[] = "0123456789abcdef";
	char line[2 * 32 + 2];
	for (uint32_t i = 0; i < n; i += 32) {
		uint32_t k = 0;
		for (uint32_t j = i; j < n && j < i + 32; j++) {
			line[k++] = hex[b[j] >> 4];
			line[k++] = hex[b[j] & 15];
		}
		line[k++] = '\n';
		line[k] = '\0';
		board_write(line);
	}
}

#if U(_NUM_REGIONS) > 0
static uint8_t *slot(int t)
{
	return L(_arenas)[L(_tensors)[t].region] + L(_tensors)[t].offset;
}

static unsigned long arena_bytes(void)
{
	unsigned long n = 0;
	for (int r = 0; r < U(_NUM_REGIONS); r++)
		n += L(_regions)[r].size;
	return n;
}

static int run(art_error *err)
{
	art_arena a[U(_NUM_REGIONS)];
	const uint8_t *w = L(_weights);
	for (int r = 0; r < U(_NUM_REGIONS); r++) {
		a[r].base = L(_arenas)[r];
		a[r].bytes = L(_regions)[r].size;
	}
#if U(_WEIGHTS_RESERVED) > 0
	memcpy(L(_arenas)[U(_WEIGHTS_REGION)], w, U(_WEIGHTS_SIZE));
	w = L(_arenas)[U(_WEIGHTS_REGION)];
#endif
	return art_run_arenas(L(_rt_model)(), a, U(_NUM_REGIONS), w,
			      U(_WEIGHTS_SIZE), NULL, err);
}
#else
static uint8_t *slot(int t)
{
	return L(_arena) + L(_tensors)[t].offset;
}

static unsigned long arena_bytes(void)
{
	return U(_ARENA_SIZE);
}

static int run(art_error *err)
{
	return art_run(L(_rt_model)(), L(_arena), U(_ARENA_SIZE), L(_weights),
		       U(_WEIGHTS_SIZE), err);
}
#endif

/* Each graph input from fw_inputs by name, or, when there are none,
 * element e of n of every float input set to e/n (the convention of the
 * ONNX suite's light models and of rt_run). */
static int fill_inputs(void)
{
	for (int k = 0; k < U(_NUM_INPUTS); k++) {
		int t = L(_inputs)[k], found = 0;
		for (int i = 0; i < fw_ninputs; i++) {
			if (strcmp(fw_inputs[i].name, L(_tensors)[t].name))
				continue;
			if (fw_inputs[i].bytes != L(_tensors)[t].bytes) {
				board_write("error: input has the wrong size: ");
				board_write(fw_inputs[i].name);
				board_write("\n");
				return -1;
			}
			memcpy(slot(t), fw_inputs[i].data, fw_inputs[i].bytes);
			found = 1;
		}
		if (!found && fw_ninputs) {
			board_write("error: no input data for ");
			board_write(L(_tensors)[t].name);
			board_write("\n");
			return -1;
		}
		if (!found && L(_tensors)[t].dtype == U(_DT_FLOAT32)) {
			float *x = (float *)(void *)slot(t);
			uint32_t n = L(_tensors)[t].numel;
			for (uint32_t e = 0; e < n; e++)
				x[e] = (float)e / (float)n;
		}
	}
	return 0;
}

int main(void)
{
	art_error err;

	if (fill_inputs())
		return 1;
	if (run(&err)) {
		/* The code and the step; host tools turn the record into the
		 * message (art_error_message), the firmware links no
		 * formatter. */
		board_write("error: code ");
		put_dec((unsigned)err.code);
		board_write(" at step ");
		put_dec((unsigned)err.step);
		board_write("\n");
		return 1;
	}
	for (int k = 0; k < U(_NUM_OUTPUTS); k++) {
		int t = L(_outputs)[k];
		board_write("output ");
		board_write(L(_tensors)[t].name);
		board_write(" ");
		put_dec((unsigned)L(_tensors)[t].dtype);
		board_write(" ");
		put_dec(L(_tensors)[t].bytes);
		board_write("\n");
		put_hex(slot(t), L(_tensors)[t].bytes);
	}
	board_write("done arena ");
	put_dec(arena_bytes());
	board_write(" steps ");
	put_dec(U(_NUM_STEPS));
	board_write("\n");
	return 0;
}
