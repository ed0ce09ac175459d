#!/bin/sh
# e2e_runtime_tiers.sh — plans of several memories (--memory) run by the
# reference runtime: firmware/main.c built for this machine with the
# header and ARENAC_RT_BIND (an arena per memory, art_run_arenas) must
# print the very bytes of every output that the single-arena plan of the
# same model prints, and agree with the reference output:
#
#   lenet            two memories; and the weights reserved in the fast
#                    one (--weights-in: copied there before the run)
#   squeezenet       a shared CNN, two memories (its concats elided
#                    across them); the ONNX suite's output
#   PaddleOCR cls    real weights, --weights-in the slow memory
#   Silero legacy    the sample rate a run-time input: the If kernel
#                    runs its branch in the workspace the plan gave it
#                    in its memory
#
# Each tiered plan must use both memories.  Then: every header layout
# (one arena, --io separate, tiers with and without --weights-in and
# --io separate, one memory, training, subgraphs) compiles with
# ARENAC_RT_BIND and defines its sizes and section hooks; arenas that do
# not match a plan of two memories stop the run with an error code before
# any step (tests/rt_arenas.c); the README's example runs; a memory too
# small for the weights reserved in it is exit 3.  Ends with "N passed, N failed".
BUILD=${BUILD:-build}
ARENAC=${ARENAC:-$BUILD/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
M=${ARENAC_SHARED:-../shared}/models
RT_LIB=$BUILD/libarenac_rt.a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -f "$RT_LIB" ] || [ ! -x "$BUILD/host_io" ]; then
	echo "skipped: $RT_LIB or $BUILD/host_io not built (make test-build)"
	echo "0 passed, 0 failed"
	exit 0
fi
. "$(dirname "$0")/tally.sh"

# prog NAME MODEL "ARENAC OPTIONS" "INPUTS" [WEIGHTS_DIR]: plans MODEL and
# builds firmware/main.c for this machine in $tmp/NAME, runs it into
# out.log.  With WEIGHTS_DIR its weights file must be that plan's, whose
# object it links (a shared CNN's is tens of MB of C: compiled once).
prog() {
	d=$tmp/$1
	mkdir -p "$d"
	# shellcheck disable=SC2086
	"$ARENAC" -q $3 --prefix net -o "$d/net.h" --json "$d/net.json" \
		--weights "$d/weights.c" "$2" 2>"$d/err" || return 1
	if [ -n "${5:-}" ]; then
		cmp "$5/weights.c" "$d/weights.c" >>"$d/err" 2>&1 &&
		ln -s "$5/weights.o" "$d/weights.o"
	else
		$CC -std=c11 -c "$d/weights.c" -o "$d/weights.o" 2>>"$d/err"
	fi &&
	"$BUILD/host_io" carray $4 >"$d/inputs.c" 2>>"$d/err" &&
	$CC -std=c11 -O1 -Wall -Wextra -Werror -Wno-unused-parameter \
		-Iruntime -Ifirmware -I"$d" -DARENAC_HEADER='"net.h"' -DLO=net \
		-DUP=NET -DNET_DEFINE_TABLES -DNET_DEFINE_ARENA -o "$d/run" \
		firmware/main.c firmware/host.c "$d/inputs.c" "$d/weights.o" \
		"$RT_LIB" -lm 2>>"$d/err" &&
	"$d/run" >"$d/out.log" 2>>"$d/err"
}

# same NAME MODEL "BASE OPTIONS" "TIER OPTIONS" "INPUTS" "REFS": the tiered
# plan's outputs, bit for bit the single-arena plan's, and the reference.
same() {
	if ! prog "$1.one" "$2" "$3" "$5"; then
		check "$1: single-arena run: $(head -c 400 "$tmp/$1.one/err")" 1
		return
	fi
	if ! prog "$1" "$2" "$3 $4" "$5" "$tmp/$1.one"; then
		check "$1 ($4): $(head -c 400 "$tmp/$1/err") $(tail -n 2 "$tmp/$1/out.log")" 1
		return
	fi
	used=$("$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join("%s %d" % (x["name"], x["used_bytes"] - x["weights_bytes"])
               for x in r["regions"]))
# The memories of the tensors and of the steps workspaces (where the
# branches of an If run).
used = {t["region"] for t in r["tensors"]
        if t["offset"] is not None and t["bytes"]}
used |= {s["scratch_region"] for s in r["steps"] if s.get("scratch_bytes")}
assert len(used) == len(r["regions"]) > 1, "a memory unused"
' "$tmp/$1/net.json" 2>&1)
	check "$1 ($4) uses every memory: $used" $?
	grep -v '^done ' "$tmp/$1.one/out.log" >"$tmp/$1.a"
	grep -v '^done ' "$tmp/$1/out.log" >"$tmp/$1.b"
	[ -s "$tmp/$1.a" ] && cmp -s "$tmp/$1.a" "$tmp/$1.b"
	check "$1: the same output bits as the single-arena plan ($(grep -c '^output' "$tmp/$1.b") outputs)" $?
	if [ -n "$6" ]; then
		# shellcheck disable=SC2086
		"$BUILD/host_io" compare "$tmp/$1/out.log" $6 >"$tmp/$1.cmp" 2>&1
		check "$1 against the reference: $(tr '\n' ' ' <"$tmp/$1.cmp")" $?
	fi
}

L=testdata/lenet.onnx
same lenet $L "--dim N=1" "--memory sram:16K --memory dram:1M" "" \
	testdata/lenet_output_0.pb
same lenet_wsram $L "--dim N=1" \
	"--memory sram:1700K --memory dram:1M --weights-in sram" "" \
	testdata/lenet_output_0.pb
if [ -n "${ARENAC_SANITIZE:-}" ]; then
	echo "skipped: the shared models under the sanitizers (slow)"
elif [ -f "$M/light_squeezenet.onnx" ]; then
	same squeezenet "$M/light_squeezenet.onnx" "--dim-default 1" \
		"--memory sram:256K --memory dram:8M" "" \
		"$M/light_squeezenet_output_0.pb"
	cls=$M/ch_ppocr_mobile_v2.0_cls_infer
	same paddleocr_cls "$cls.onnx" \
		"--dim-default 1 --input-shape x=1x3x48x192" \
		"--memory sram:64K --memory dram:2M --weights-in dram" \
		"${cls}_input_0.pb" "${cls}_output_0.pb"
	vad=$M/silero_vad_legacy
	same silero_legacy "$vad.onnx" "--dim batch=1 --dim sequence=512" \
		"--memory sram:8K --memory dram:1M" \
		"${vad}_input_0.pb ${vad}_input_1.pb ${vad}_input_2.pb ${vad}_input_3.pb" \
		"${vad}_output_0.pb ${vad}_output_1.pb ${vad}_output_2.pb"
else
	echo "skipped: no shared models (squeezenet, PaddleOCR cls, Silero)"
fi

# Every layout: its size macros and section hooks, and ARENAC_RT_BIND.
layouts="one|--dim N=1
io|--dim N=1 --io separate
train|--train --batch 2 --optimizer momentum
one_memory|--dim N=1 --memory sram:384K
tiers|--dim N=1 --memory sram:16K --memory dram:8M
tiers_io|--dim N=1 --memory sram:16K --memory dram:8M --io separate
weights_in|--dim N=1 --memory sram:16K --memory dram:8M --weights-in dram"
echo "$layouts" | while IFS='|' read -r name opts; do
	d=$tmp/layout_$name
	mkdir -p "$d"
	# shellcheck disable=SC2086
	"$ARENAC" -q $opts --prefix net -o "$d/net.h" $L 2>"$d/err" || {
		echo "FAIL layout $name: arenac: $(cat "$d/err")"; continue; }
	# The sizes a declaration needs: the arena's, or each memory's.
	sizes=$(sed -n 's/^#define NET_ARENA_\([A-Z0-9_]*\)SIZE \([0-9]*\)u$/\1\2/p' "$d/net.h" | tr '\n' ' ')
	printf '%s\n' '#include "arenac_rt.h"' '#include "net.h"' \
		'ARENAC_RT_BIND(net, NET)' \
		'const art_model *bound(void) { return net_rt_model(); }' \
		>"$d/bind.c"
	if $CC -std=c99 -Wall -Wextra -Werror -pedantic -Wno-unused-function \
		-Iruntime -I"$d" -DNET_DEFINE_TABLES -DNET_DEFINE_ARENA \
		'-DNET_ARENA_SECTION=__attribute__((section("net_ram")))' \
		-c "$d/bind.c" -o "$d/bind.o" 2>>"$d/err" &&
	   [ -n "$sizes" ] &&
	   objdump -t "$d/bind.o" | grep -q ' net_ram.*net_arena'; then
		# Every arena in the section (none left elsewhere).
		n=$(objdump -t "$d/bind.o" | grep -Ec ' net_arena(_[a-z0-9_]+)?$')
		m=$(objdump -t "$d/bind.o" | grep -Ec ' net_ram.* net_arena(_[a-z0-9_]+)?$')
		[ "$n" = "$m" ]
		check "layout $name: sizes ${sizes}and NET_ARENA_SECTION for its $n arena(s), ARENAC_RT_BIND compiles" $?
	else
		echo "FAIL layout $name: $(head -c 600 "$d/err")"
	fi
done >"$tmp/layouts"
cat "$tmp/layouts"
pass=$((pass + $(grep -c '^ok ' "$tmp/layouts")))
fail=$((fail + $(grep -c '^FAIL ' "$tmp/layouts")))

# Arenas that do not match a plan of two memories.
d=$tmp/arenas
mkdir -p "$d"
if "$ARENAC" -q --dim N=1 --memory sram:16K --memory dram:1M --prefix net \
	-o "$d/net.h" --weights "$d/w.c" $L &&
   $CC -std=c11 -O1 -Wall -Wextra -Werror -Iruntime -I"$d" \
	-DARENAC_HEADER='"net.h"' -DLO=net -DUP=NET -DNET_DEFINE_TABLES \
	-o "$d/rt_arenas" tests/rt_arenas.c "$d/w.c" "$RT_LIB" -lm; then
	"$d/rt_arenas" >"$d/out"
	rc=$?
	sed 's/^/     /' "$d/out"
	check "mismatched arenas: an error code before any step" $rc
else
	check "rt_arenas builds" 1
fi

# The README's bind of several memories ("Memory tiers"), as a program.
d=$tmp/readme
mkdir -p "$d"
{
	printf '%s\n' '#include <string.h>' '#include "arenac_rt.h"' \
		'#define LENET_DEFINE_TABLES' '#define LENET_DEFINE_ARENA' \
		'#include "lenet_arena.h"' 'ARENAC_RT_BIND(lenet, LENET)' \
		'int main(void) {' 'art_error err;' 'int rc;'
	sed -n '/^### Memory tiers/,/^### /p' README.md |
		sed -n '/^    art_arena arenas/,/&err);$/p'
	printf '%s\n' 'return rc;' '}'
} >"$d/readme.c"
"$ARENAC" -q --dim N=1 --memory sram:1700K --memory dram:1M --weights-in sram \
	--prefix lenet -o "$d/lenet_arena.h" --weights "$d/w.c" $L &&
	grep -q art_run_arenas "$d/readme.c" &&
	$CC -std=c99 -Wall -Wextra -Werror -pedantic -Iruntime -I"$d" \
		-o "$d/readme" "$d/readme.c" "$d/w.c" "$RT_LIB" -lm &&
	"$d/readme"
check "the README's bind of two memories builds (C99) and runs" $?

# The weights reserved in a memory too small for them: exit 3.
"$ARENAC" -q --dim N=1 --memory sram:20K --memory dram:1M --weights-in sram \
	-o "$tmp/small.h" $L 2>"$tmp/small.err"
rc=$?
[ $rc = 3 ] && grep -q "'sram'" "$tmp/small.err" && [ ! -e "$tmp/small.h" ]
check "weights in a memory too small: exit $rc ($(cat "$tmp/small.err"))" $?

echo "runtime tiers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
