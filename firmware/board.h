/*
 * board.h — what the firmware program (firmware/main.c) needs from the
 * machine it runs on: a way to print and a way to stop.  semihost.c
 * provides them on a Cortex-M through Arm semihosting (QEMU passes the
 * text to its standard output and the verdict to its exit status);
 * host.c provides them on the build machine, so that the same program
 * run there gives the host runtime's outputs to compare with.
 */
#ifndef ARENAC_FW_BOARD_H
#define ARENAC_FW_BOARD_H

void board_write(const char *s);  /* s as it stands: no newline added */
_Noreturn void board_exit(int rc);

#endif
