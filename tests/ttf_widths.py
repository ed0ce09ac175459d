#!/usr/bin/env python3
"""ttf_widths.py - advance widths of a TrueType font, read from its own
tables (cmap format 4, hmtx, hhea, head), for the picture tests: a text's
width in a font is the sum of its characters' advances (kerning only ever
narrows a sans label, so the sum is an upper bound).

As a program: prints codegen/textwidth.c's table for a font file,
    /usr/bin/python3 tests/ttf_widths.py /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
"""
import struct
import sys

# The widest of the common sans fonts (DejaVu Sans, Verdana's metrics and
# wider than Helvetica, Arial, Liberation Sans, Nimbus Sans): Debian's
# fonts-dejavu-core.
DEJAVU_SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


class Font:
    def __init__(self, path):
        data = open(path, "rb").read()
        ntables = struct.unpack(">H", data[4:6])[0]
        tables = {}
        for i in range(ntables):
            tag, _, off, length = struct.unpack(">4sIII", data[12 + 16 * i:28 + 16 * i])
            tables[tag.decode("latin-1")] = data[off:off + length]
        self.units = struct.unpack(">H", tables["head"][18:20])[0]
        nmetrics = struct.unpack(">H", tables["hhea"][34:36])[0]
        hmtx = tables["hmtx"]
        self.advance = [struct.unpack(">H", hmtx[4 * i:4 * i + 2])[0]
                        for i in range(nmetrics)]
        self.glyph = self._cmap(tables["cmap"])

    @staticmethod
    def _cmap(cmap):
        """Code point -> glyph from the Unicode BMP subtable (format 4)."""
        n = struct.unpack(">H", cmap[2:4])[0]
        for i in range(n):
            pid, eid, off = struct.unpack(">HHI", cmap[4 + 8 * i:12 + 8 * i])
            if (pid, eid) in ((3, 1), (0, 3)) and \
                    struct.unpack(">H", cmap[off:off + 2])[0] == 4:
                break
        else:
            raise ValueError("no Unicode cmap of format 4")
        t = cmap[off:]
        segs = struct.unpack(">H", t[6:8])[0] // 2
        arr = lambda k: struct.unpack(">%dH" % segs, t[k:k + 2 * segs])
        ends, starts = arr(14), arr(16 + 2 * segs)
        deltas, ranges = arr(16 + 4 * segs), 16 + 6 * segs
        glyph = {}
        for s in range(segs):
            ro = struct.unpack(">H", t[ranges + 2 * s:ranges + 2 * s + 2])[0]
            for c in range(starts[s], min(ends[s], 0x2FFF) + 1):
                if ro == 0:
                    g = (c + deltas[s]) & 0xFFFF
                else:
                    at = ranges + 2 * s + ro + 2 * (c - starts[s])
                    g = struct.unpack(">H", t[at:at + 2])[0]
                    g = (g + deltas[s]) & 0xFFFF if g else 0
                glyph[c] = g
        return glyph

    def em(self, ch):
        """A character's advance in em."""
        g = self.glyph.get(ord(ch), 0)
        return self.advance[min(g, len(self.advance) - 1)] / self.units

    def width(self, text, size):
        """Points taken by text at a font size in points."""
        return sum(self.em(c) for c in text) * size


def main():
    f = Font(sys.argv[1] if len(sys.argv) > 1 else DEJAVU_SANS)
    print("\t/* %d units per em, ' ' to '~' */" % f.units)
    row = []
    for c in range(32, 127):
        row.append(str(f.advance[f.glyph.get(c, 0)]))
        if len(row) == 12:
            print("\t" + ", ".join(row) + ",")
            row = []
    if row:
        print("\t" + ", ".join(row) + ",")
    print("\t/* widest: %d */" % max(f.advance[f.glyph.get(c, 0)] for c in range(32, 127)))


if __name__ == "__main__":
    main()
