/*
 * textwidth.c — how wide a line of text is drawn, for the pictures that
 * place their own text (the timeline's legend, ticks, phase names and
 * tensor names, each in a box of its own).
 *
 * The measure is DejaVu Sans's: the widest of the common sans fonts a
 * picture meets, line for line (Bitstream Vera's metrics, about Verdana's;
 * Helvetica and the fonts that copy its metrics, Arial, Liberation Sans
 * and Nimbus Sans, are narrower: 'e' 0.556 em against 0.615, '0' 0.556
 * against 0.636), and what rsvg and most Linux browsers draw a missing
 * Helvetica with.  Laid out with it, text fits whatever sans the viewer
 * picks; the pictures ask for DejaVu Sans first
 * (AR_GV_FONT) so that a viewer that has it draws what was measured.  The
 * advances are the font's own hmtx entries for ' ' to '~' (fonts-dejavu-
 * core 2.37, printed by tests/ttf_widths.py, which the picture tests also
 * measure with), summed without kerning, which only narrows a line.
 */
#include "gvutil.h"

#define UNITS 2048.0    /* DejaVu Sans's units per em */
#define WIDEST 2048     /* '@', the widest of them */

static const short advance[95] = {
	651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716,
	651, 739, 651, 690, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303,
	1303, 1303, 690, 690, 1716, 1716, 1716, 1087, 2048, 1401, 1405, 1430,
	1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612,
	1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799,
	690, 799, 1716, 1024, 1024, 1255, 1300, 1126, 1300, 1260, 721, 1300,
	1298, 569, 569, 1186, 569, 1995, 1298, 1253, 1300, 1300, 842, 1067,
	803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716,
};

/* A byte's advance: pictures' text is ASCII (ar_dot_label), anything
 * else counts as the widest glyph. */
static long units_of(unsigned char c)
{
	return c >= ' ' && c <= '~' ? advance[c - ' '] : WIDEST;
}

double ar_gv_text_width(const char *s, double size)
{
	long units = 0;
	for (; *s; s++)
		units += units_of((unsigned char)*s);
	return units / UNITS * size;
}

int ar_gv_text_fit(const char *s, double size, double width)
{
	long units = 0;
	int n = 0;
	while (s[n] && (units += units_of((unsigned char)s[n])) / UNITS * size
	       <= width)
		n++;
	return n;
}

double ar_gv_label_width(const char *label, double size)
{
	long units = 0, widest = 0;
	for (const char *c = label; *c; c++) {
		if (*c == '\\' && c[1]) {
			c++;
			if (*c == 'n' || *c == 'l' || *c == 'r') {
				widest = units > widest ? units : widest;
				units = 0;
				continue;
			}
		}
		units += units_of((unsigned char)*c);
	}
	widest = units > widest ? units : widest;
	return widest / UNITS * size;
}
