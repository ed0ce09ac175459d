#!/bin/sh
# e2e_safety.sh — what a failing run leaves behind, and what hostile names
# in a model can do to the generated files.
#
# Outputs go through a temporary file renamed into place (codegen/outfile.c):
# a run that fails must leave no temporary file, no empty or partial header
# and an older header untouched; a device or FIFO is written in place.  Names come from the model: a tensor named
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

# 4b. An output that exists and is no regular file (a FIFO here, /dev/null
# in scripts) is written in place: it stays a FIFO and its reader gets the
# JSON a regular file gets (a rename over it would replace the node).
mkdir "$tmp/o4b"
mkfifo "$tmp/o4b/fifo"
cat "$tmp/o4b/fifo" > "$tmp/o4b/got" &
reader=$!
"$ARENAC" -q --dim N=1 --json "$tmp/o4b/fifo" $m 2>"$tmp/err"
rc=$?
# Frees the reader: one still waiting for a writer (a run that never opened
# the FIFO) gets an empty write; one whose FIFO was renamed away is ended.
if [ -p "$tmp/o4b/fifo" ]; then
	"$PYTHON" -c 'import os, sys
try: os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK))
except OSError: pass' "$tmp/o4b/fifo"
else kill $reader; fi
wait $reader
"$ARENAC" -q --dim N=1 --json "$tmp/o4b/r.json" $m 2>/dev/null
if [ "$rc" -eq 0 ] && [ -p "$tmp/o4b/fifo" ] && [ -s "$tmp/o4b/got" ] &&
   cmp -s "$tmp/o4b/got" "$tmp/o4b/r.json" && clean "$tmp/o4b"; then
	ok; else bad "FIFO output: exit $rc, $(cat "$tmp/err"), left $(ls -A "$tmp/o4b")"; fi

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
