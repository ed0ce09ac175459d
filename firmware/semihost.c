/*
 * semihost.c — the board of board.h on a Cortex-M: the reset handler,
 * the vector table, and output and exit through Arm semihosting (the
 * BKPT 0xAB call of the Arm "Semihosting for AArch32 and AArch64"
 * specification: SYS_WRITE0 = 0x04, SYS_EXIT = 0x18 with
 * ADP_Stopped_ApplicationExit = 0x20026 for success).
 *
 * No C library start-up code is linked (-nostartfiles): the reset
 * handler copies .data from flash, zeroes .bss, turns the FPU on (a
 * hard-float build traps on its first float instruction otherwise) and
 * calls main.
 */
#include <stdint.h>

#include "board.h"

extern uint32_t fw_data_start[], fw_data_end[], fw_data_load[];
extern uint32_t fw_bss_start[], fw_bss_end[], fw_stack_top[];
int main(void);

static int semihost(int op, const void *arg)
{
	register int r0 __asm__("r0") = op;
	register const void *r1 __asm__("r1") = arg;
	__asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
}

void board_write(const char *s)
{
	semihost(0x04, s);
}

_Noreturn void board_exit(int rc)
{
	/* AArch32's SYS_EXIT takes a reason, not a status: anything but
	 * ApplicationExit (here RunTimeErrorUnknown) makes QEMU exit 1. */
	semihost(0x18, (const void *)(uintptr_t)(rc ? 0x20023 : 0x20026));
	for (;;)
		;
}

_Noreturn void fw_reset(void);
_Noreturn void fw_reset(void)
{
	const uint32_t *src = fw_data_load;
	for (uint32_t *d = fw_data_start; d < fw_data_end;)
		*d++ = *src++;
	for (uint32_t *d = fw_bss_start; d < fw_bss_end;)
		*d++ = 0;
#if defined(__ARM_FP)
	/* CPACR: full access to coprocessors 10 and 11 (the FPU). */
	*(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
	__asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
	board_exit(main());
}

static void fw_fault(void)
{
	board_write("firmware: fault\n");
	board_exit(2);
}

/* Reset's stack pointer and handler, then the 14 system exceptions. */
__attribute__((section(".vectors"), used))
static void (*const vectors[16])(void) = {
	(void (*)(void))(uintptr_t)fw_stack_top, (void (*)(void))fw_reset,
	fw_fault, fw_fault, fw_fault, fw_fault, fw_fault, 0, 0, 0, 0,
	fw_fault, fw_fault, 0, fw_fault, fw_fault,
};
