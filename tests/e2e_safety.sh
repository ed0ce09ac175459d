#!/bin/sh
# e2e_safety.sh — what a failing run leaves behind, and what hostile names
# in a model can do to the generated files.
#
# Outputs go through a temporary file renamed into place (codegen/outfile.c):
# a run that fails must leave no temporary file, no empty or partial header
# and an older header untouched.  Names come from the model: a tensor named
# "*/ #include <x>" or holding quotes, newlines and backslashes must reach
# the header only as escaped literals and closed comments (the header still
# compiles as C and C++), the DOT file only as escaped labels, the JSON only
# as valid strings that read back to the original names.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
m=testdata/lenet.onnx

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# No stray temporary files in a folder.
clean() { [ -z "$(ls -A "$1" | grep -F .tmp)" ]; }

# 1. Budget too small: exit 3, no header, no temporary file.
mkdir "$tmp/o1"
"$ARENAC" -q --dim N=1 --budget 1 -o "$tmp/o1/arena.h" --json "$tmp/o1/r.json" $m 2>/dev/null
rc=$?
if [ "$rc" -eq 3 ] && [ ! -e "$tmp/o1/arena.h" ] && [ ! -e "$tmp/o1/r.json" ] &&
   clean "$tmp/o1"; then ok; else bad "budget: exit $rc, left $(ls "$tmp/o1")"; fi

# 2. The same over an older header: it stays byte for byte.
echo "/* old header */" > "$tmp/o1/arena.h"
"$ARENAC" -q --dim N=1 --budget 1 -o "$tmp/o1/arena.h" $m 2>/dev/null
if [ "$(cat "$tmp/o1/arena.h")" = "/* old header */" ] && clean "$tmp/o1"; then
	ok; else bad "budget over an old header: it changed"; fi

# 3. An unwritable --dot after the header and the JSON: exit 1, and all or
# nothing: neither is published (an older header stays), no temporary file.
mkdir "$tmp/o3"
echo "/* old header */" > "$tmp/o3/arena.h"
"$ARENAC" -q --dim N=1 -o "$tmp/o3/arena.h" --json "$tmp/o3/r.json" \
	--dot "$tmp/missing/g.dot" $m 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "cannot write" "$tmp/err" && clean "$tmp/o3" &&
   [ "$(cat "$tmp/o3/arena.h")" = "/* old header */" ] &&
   [ ! -e "$tmp/o3/r.json" ]; then
	ok; else bad "unwritable --dot: exit $rc, $(cat "$tmp/err"), left $(ls "$tmp/o3")"; fi

# 3b. The same when the last picture has a format Graphviz cannot write.
"$ARENAC" -q --dim N=1 -o "$tmp/o3/arena.h" --json "$tmp/o3/r.json" \
	--dot "$tmp/o3/g.svg" --timeline "$tmp/o3/t.jpgx" $m 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "unknown picture format" "$tmp/err" &&
   clean "$tmp/o3" && [ "$(cat "$tmp/o3/arena.h")" = "/* old header */" ] &&
   [ ! -e "$tmp/o3/r.json" ] && [ ! -e "$tmp/o3/g.svg" ]; then
	ok; else bad "bad --timeline format: exit $rc, $(cat "$tmp/err"), left $(ls "$tmp/o3")"; fi

# 3c. And when all succeed, all are published.
if "$ARENAC" -q --dim N=1 -o "$tmp/o3/arena.h" --json "$tmp/o3/r.json" \
	--dot "$tmp/o3/g.dot" --timeline "$tmp/o3/t.dot" $m 2>"$tmp/err" &&
   clean "$tmp/o3" && tail -1 "$tmp/o3/arena.h" | grep -q '#endif' &&
   [ -s "$tmp/o3/r.json" ] && [ -s "$tmp/o3/g.dot" ] && [ -s "$tmp/o3/t.dot" ]; then
	ok; else bad "all outputs: $(cat "$tmp/err"), left $(ls "$tmp/o3")"; fi

# 4. A header path that is a folder: exit 1, nothing left in its parent.
mkdir -p "$tmp/o4/arena.h"
"$ARENAC" -q --dim N=1 -o "$tmp/o4/arena.h" $m 2>/dev/null
rc=$?
if [ "$rc" -eq 1 ] && clean "$tmp/o4" && [ -z "$(ls -A "$tmp/o4/arena.h")" ]; then
	ok; else bad "header path is a folder: exit $rc, left $(ls -A "$tmp/o4")"; fi

# 4b. A rerun whose output is already there leaves the file in place (same
# inode) with a new modification time; an older file that only starts like
# the output, is longer, or differs anywhere is replaced by the output.
mkdir "$tmp/o6"
o=$tmp/o6/r.json
"$ARENAC" -q --dim N=1 --json "$tmp/o6/want.json" $m
cp "$tmp/o6/want.json" "$o"
ino=$(stat -c %i "$o")
touch -d @1000000000 "$o"
if "$ARENAC" -q --dim N=1 --json "$o" $m && [ "$(stat -c %i "$o")" = "$ino" ] &&
   [ "$(stat -c %Y "$o")" -gt 1000000000 ] && cmp -s "$o" "$tmp/o6/want.json" &&
   clean "$tmp/o6"; then ok; else bad "identical rerun: replaced or not touched"; fi
for how in shorter longer first last; do
	case $how in
	shorter) head -c 100 "$tmp/o6/want.json" > "$o" ;;
	longer) { cat "$tmp/o6/want.json"; echo more; } > "$o" ;;
	first) { printf x; tail -c +2 "$tmp/o6/want.json"; } > "$o" ;;
	last) { head -c -2 "$tmp/o6/want.json"; printf 'x\n'; } > "$o" ;;
	esac
	if "$ARENAC" -q --dim N=1 --json "$o" $m && cmp -s "$o" "$tmp/o6/want.json" &&
	   clean "$tmp/o6"; then ok; else bad "older output ($how) not replaced"; fi
done

# 4c. A target that is no regular file (a FIFO here; /dev/null as root) is
# written, not replaced by a file.
mkfifo "$tmp/o6/fifo"
timeout 20 cat "$tmp/o6/fifo" > "$tmp/o6/from_fifo" &
"$ARENAC" -q --dim N=1 --json "$tmp/o6/fifo" $m
wait
if [ -p "$tmp/o6/fifo" ] && cmp -s "$tmp/o6/from_fifo" "$tmp/o6/want.json" &&
   clean "$tmp/o6"; then ok; else bad "FIFO target replaced or not written"; fi

# 5. Hostile names.
"$PYTHON" - "$tmp/evil.onnx" <<'PY' || exit 1
import sys
from onnx import TensorProto, helper
names = ["*/ #include <x>", 'quote"d', "new\nline #define X", "back\\slash\\",
         "??/ trigraph", "\\N \\G", '"]; evil [label="x', "caf\u00e9 \u2603",
         "/* open", "", "in:0", "in/0", "123start", "a" * 300]
names[9] = "  "
ins = [helper.make_tensor_value_info("x /*in*/", TensorProto.FLOAT, [1, 4])]
nodes, prev = [], "x /*in*/"
for i, n in enumerate(names):
    nodes.append(helper.make_node("Relu", [prev], [n], name=n + "_node"))
    prev = n
g = helper.make_graph(nodes, "*/ graph \"g\"", ins,
                      [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
mkdir "$tmp/o5"
if "$ARENAC" -q --no-views --inplace none -o "$tmp/o5/evil.h" --json "$tmp/o5/r.json" \
	--dot "$tmp/o5/g.dot" "$tmp/evil.onnx" 2>"$tmp/err"; then
	ok
	# Nothing the model said may start a preprocessor line (the compile
	# below would miss "#define X").
	if grep -n -E '^[[:space:]]*#[[:space:]]*(include <x>|define X)' \
		"$tmp/o5/evil.h"; then
		bad "a name became a preprocessor line"
	else ok; fi
	printf '#include "evil.h"\nint main(void) { return 0; }\n' > "$tmp/o5/main.c"
	for cc in "gcc -std=c99" "clang -std=c11" "g++ -x c++ -std=c++11"; do
		command -v ${cc%% *} >/dev/null || continue
		if $cc -Wall -Wextra -Werror -pedantic -I"$tmp/o5" -fsyntax-only \
			"$tmp/o5/main.c" 2>"$tmp/err"; then ok
		else bad "header does not compile with $cc: $(head -5 "$tmp/err")"; fi
	done
	if "$PYTHON" - "$tmp/o5/r.json" "$tmp/evil.onnx" <<'PY'
import json, sys
import onnx
r = json.load(open(sys.argv[1]))
m = onnx.load(sys.argv[2])
want = {o for n in m.graph.node for o in n.output}
got = {t["name"] for t in r["tensors"]}
assert want <= got, want - got
PY
	then ok; else bad "JSON does not read back the names"; fi
	# A label that broke out of its quotes would make a node named evil.
	if dot -Tplain "$tmp/o5/g.dot" > "$tmp/o5/g.plain" 2>"$tmp/err" &&
	   ! grep -q '^node evil ' "$tmp/o5/g.plain"; then ok
	else bad "DOT does not parse or was injected: $(head -3 "$tmp/err")"; fi
else
	bad "hostile names: $(cat "$tmp/err")"
fi
echo "output safety: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
