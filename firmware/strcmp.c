/*
 * strcmp.c — the C library's strcmp for the firmware, one byte at a time.
 *
 * Why: newlib's own for the Armv7-M (strcmp-armv7m.S, compares a word
 * at a time) is 732 bytes of flash, 2.5% of the int8 CNN's firmware; the
 * runtime compares only short names (ops, attributes, graph inputs) once
 * per step, where speed does not matter.  Linked before newlib (-lc comes
 * last), this definition is the one used; ISO C's strcmp otherwise.
 */
#include <string.h>

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}
