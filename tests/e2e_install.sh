#!/bin/sh
# e2e_install.sh — `make install` into a scratch DESTDIR puts the binary,
# the man page, the reference runtime's library and header and its
# pkg-config file in place; a program builds against the runtime through
# pkg-config alone; `make uninstall` removes every file install wrote.
BUILD=${BUILD:-build}
CC=${CC:-cc}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

dest=$tmp/root
prefix=/opt/arenac
root=$dest$prefix
if ! make -s --no-print-directory install BUILD="$BUILD" DESTDIR="$dest" \
	PREFIX="$prefix" >"$tmp/log" 2>&1; then
	cat "$tmp/log"
	echo "install: 0 passed, 1 failed"
	exit 1
fi
for f in bin/arenac share/man/man1/arenac.1 lib/libarenac_rt.a \
	include/arenac_rt.h lib/pkgconfig/arenac_rt.pc; do
	[ -f "$root/$f" ] && ok || bad "install did not write $prefix/$f"
done
"$root/bin/arenac" --version | grep -q '^arenac ' && ok ||
	bad "the installed arenac does not run"

# A program that needs the runtime's header and library, found through
# the installed pkg-config file (relocated to the scratch root).
if command -v pkg-config >/dev/null; then
	flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig pkg-config --define-prefix \
		--cflags --libs arenac_rt)
	cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <arenac_rt.h>
int main(void)
{
	const char *dom, *op = art_kernel_op(0, &dom);
	return op && *op ? 0 : 1;
}
EOF
	if $CC -std=c11 -o "$tmp/prog" "$tmp/prog.c" $flags 2>"$tmp/err" &&
	   "$tmp/prog"; then ok
	else bad "build against pkg-config arenac_rt ($flags): $(cat "$tmp/err")"; fi
else
	echo "skipped: pkg-config not installed (the .pc file is not tried)"
fi

make -s --no-print-directory uninstall BUILD="$BUILD" DESTDIR="$dest" \
	PREFIX="$prefix" >"$tmp/log" 2>&1 || bad "uninstall: $(cat "$tmp/log")"
left=$(find "$dest" -type f)
[ -z "$left" ] && ok || bad "uninstall left $left"

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
