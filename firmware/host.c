/*
 * host.c — the board of board.h on the build machine: standard output
 * and exit().  firmware/main.c built with it is the reference run that
 * the emulated firmware's outputs are compared with.
 */
#include <stdio.h>
#include <stdlib.h>

#include "board.h"

void board_write(const char *s)
{
	fputs(s, stdout);
}

_Noreturn void board_exit(int rc)
{
	fflush(stdout);
	exit(rc);
}
