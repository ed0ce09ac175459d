#!/bin/sh
# e2e_runtime.sh — proof by execution: each model is compiled by arenac into
# a header and a weights blob, the header is built into a program with the
# reference runtime (runtime/), and the program's output is compared with
# the reference output.  A plan that puts two live tensors on the same
# bytes gives wrong numbers here, whatever the verifier said.
#
#   one-node kernel cases   numpy references (tests/gen_rt_cases.py)
#   lenet                   .c weights linked in == .bin weights read;
#                           logits against numpy's (testdata/gen_lenet.py)
#   light_*                 ONNX suite outputs, rtol 1e-3 (2e-3 densenet121),
#                           atol 1e-7; arena pre-filled with random bytes;
#                           again with --order file --no-views
#                           --inplace=none --concat=copy when arenac has them,
#                           and with --fuse preact
#   PaddleOCR cls, det      real weights, onnxruntime outputs, rtol 1e-3,
#                           atol 1e-5; zero and random arena; plain and
#                           --fuse preact plans
#   Magika, YOLOX-nano      a transformer-style classifier (int32 input,
#                           decomposed LayerNorm, tanh GELU, softmax) and
#                           a detector (SiLU, Resize, Slice, Concat): real
#                           weights, onnxruntime outputs, rtol 1e-3, atol
#                           1e-5 (Magika) and 1e-4 (YOLOX, as the models'
#                           README says); random arena; plain plans too
#                           (not under the sanitizers)
#   Silero VAD legacy, v5   the 16 kHz models (--input-value sr=16000: the
#                           Ifs fold and are inlined), onnxruntime's
#                           speech probability, rtol 1e-3, atol 1e-5; and
#                           with the sample rate a run-time input (the If
#                           kernel): every output, legacy's 8 kHz branch
#                           against its inlined plan, v5's unplanned one
#                           an error
#   corrupted plan          one offset of the det header moved onto a live
#                           tensor, one of Silero legacy's If branch out
#                           of its step's workspace: the runs must fail
#   refused variant         a QLinearMatMul of 2^22 + 1-product sums (past
#                           the exact integer requantisation): an error
#
# ARENAC_SANITIZE=1 (make sanitize) skips the light models, the slow part.
# Ends with "N passed, N failed".
BUILD=${BUILD:-build}
ARENAC=${ARENAC:-$BUILD/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
RT_LIB=$BUILD/libarenac_rt.a
PB_OBJS="$BUILD/obj/tests/pbread.o $BUILD/obj/gen/onnx.pb-c.o"
M=${ARENAC_SHARED:-../shared}/models
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -f "$RT_LIB" ] || [ ! -f "$BUILD/obj/tests/pbread.o" ]; then
	echo "skipped: $RT_LIB not built (run make test-runtime)"
	echo "0 passed, 0 failed"
	exit 0
fi

ok() { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { fail=$((fail + 1)); echo "  FAIL $*"; }

# build NAME PREFIX MODEL [ARENAC OPTIONS...]: header, weights, runner.
build() {
	local name=$1 p=$2 model=$3 up
	shift 3
	up=$(echo "$p" | tr a-z A-Z)
	"$ARENAC" -q --prefix "$p" -o "$tmp/$p.h" --weights "$tmp/$p.bin" \
		"$@" "$model" 2>"$tmp/err" &&
	$CC -std=c11 -O0 -D_POSIX_C_SOURCE=200809L -Iruntime -Itests \
		-I"$BUILD/gen" -I"$tmp" -DARENAC_HEADER="\"$p.h\"" -DLO="$p" \
		-DUP="$up" -D"${up}_DEFINE_ARENA" -D"${up}_DEFINE_TABLES" -o "$tmp/rt_$p" tests/rt_run.c \
		$PB_OBJS "$RT_LIB" -lprotobuf-c -lm 2>>"$tmp/err" && return 0
	bad "$name: $(head -c 600 "$tmp/err")"
	return 1
}

# check NAME PREFIX [RT_RUN OPTIONS...]: runs and compares.
check() {
	local name=$1 p=$2
	shift 2
	if "$tmp/rt_$p" "$@" >"$tmp/out" 2>&1; then
		ok "$name: $(tail -n 1 "$tmp/out")"
	else
		bad "$name: $(tail -n 4 "$tmp/out")"
	fi
}

echo "kernels"
if "$PYTHON" tests/gen_rt_cases.py >"$tmp/cases.txt" &&
   $CC -std=c11 -O1 -D_POSIX_C_SOURCE=200809L -Iruntime -o "$tmp/rt_cases" \
	tests/rt_cases.c "$RT_LIB" -lm; then
	"$tmp/rt_cases" "$tmp/cases.txt" >"$tmp/out"
	grep FAIL "$tmp/out"
	n_ok=$(sed -n 's/^kernels: \([0-9]*\) passed, \([0-9]*\) failed/\1/p' "$tmp/out")
	n_bad=$(sed -n 's/^kernels: \([0-9]*\) passed, \([0-9]*\) failed/\2/p' "$tmp/out")
	pass=$((pass + ${n_ok:-0}))
	fail=$((fail + ${n_bad:-1}))
	echo "  $(tail -n 1 "$tmp/out")"
else
	bad "kernel cases: generator or build failed"
fi

echo "lenet (.c weights against .bin weights, and against numpy)"
if build lenet lenet testdata/lenet.onnx --dim N=1 &&
   "$ARENAC" -q --dim N=1 --prefix lenet --weights "$tmp/lenet_w.c" \
	testdata/lenet.onnx &&
   $CC -std=c11 -O0 -D_POSIX_C_SOURCE=200809L -Iruntime -Itests \
	-I"$BUILD/gen" -I"$tmp" -DARENAC_HEADER='"lenet.h"' -DLO=lenet \
	-DUP=LENET -DLENET_DEFINE_ARENA -DLENET_DEFINE_TABLES -DWEIGHTS_LINKED -o "$tmp/rt_lenet_c" \
	tests/rt_run.c "$tmp/lenet_w.c" $PB_OBJS "$RT_LIB" -lprotobuf-c -lm; then
	"$tmp/rt_lenet" --print "$tmp/lenet.bin" | grep '\[' >"$tmp/a"
	"$tmp/rt_lenet_c" --print --fill random | grep '\[' >"$tmp/b"
	if [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"; then
		ok "lenet: $(wc -l <"$tmp/a") logits agree"
	else
		bad "lenet: .c and .bin weights disagree"
	fi
	# The logits numpy computed when it wrote the model (gen_lenet.py).
	check "lenet against numpy" lenet --fill random --rtol 1e-4 \
		--atol 1e-6 "$tmp/lenet.bin" testdata/lenet_output_0.pb
else
	bad "lenet: build with .c weights failed"
fi

if [ ! -d "$M" ]; then
	echo "skipped: no shared models"
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
fi

# The fully unshared plan, once arenac has its options.
plain_opts="--order file --no-views --inplace=none --concat=copy"
if "$ARENAC" -q $plain_opts -o /dev/null testdata/lenet.onnx --dim N=1 \
	2>/dev/null; then
	have_plain=1
else
	have_plain=0
	echo "skipped: arenac does not take $plain_opts yet"
fi

if [ -z "${ARENAC_SANITIZE:-}" ]; then
	echo "light models"
	for model in "$M"/light_*.onnx; do
		stem=$(basename "$model" .onnx)
		rtol=1e-3
		[ "$stem" = light_densenet121 ] && rtol=2e-3
		if build "$stem" m "$model"; then
			check "$stem" m "$tmp/m.bin" "$M/${stem}_output_0.pb" \
				--rtol $rtol --atol 1e-7 --fill random
		fi
		rm -f "$tmp/m.bin"
		# VGG's 20 GFLOP once is enough for a test; the bench has more.
		if [ $have_plain = 1 ] && [ "$stem" != light_vgg19 ] &&
		   build "$stem plain" m "$model" $plain_opts; then
			check "$stem (plain plan)" m "$tmp/m.bin" \
				"$M/${stem}_output_0.pb" --rtol $rtol \
				--atol 1e-7 --fill random
		fi
		rm -f "$tmp/m.bin"
		# Prologues fused into the convolutions: every model but VGG
		# (only Relus to fuse there) and SqueezeNet (nothing).
		case $stem in light_vgg19 | light_squeezenet) continue ;; esac
		if build "$stem fused" m "$model" --fuse preact; then
			check "$stem (--fuse preact)" m "$tmp/m.bin" \
				"$M/${stem}_output_0.pb" --rtol $rtol \
				--atol 1e-7 --fill random
		fi
		rm -f "$tmp/m.bin"
	done
else
	echo "skipped: light models under sanitizers"
fi

echo "PaddleOCR (real weights)"
cls="$M/ch_ppocr_mobile_v2.0_cls_infer"
det="$M/ch_PP-OCRv4_det_infer"
dims() {
	"$PYTHON" - "$1" <<'PY'
import onnx, sys
t = onnx.TensorProto()
t.ParseFromString(open(sys.argv[1], "rb").read())
print(" ".join("--dim p2o.DynamicDimension.%d=%d" % (i, d)
               for i, d in enumerate([t.dims[0], t.dims[2], t.dims[3]])))
PY
}
for stem in "$cls" "$det"; do
	name=$(basename "$stem")
	opts=$(dims "${stem}_input_0.pb")
	if build "$name" ocr "$stem.onnx" $opts; then
		for fill in zero random; do
			check "$name ($fill arena)" ocr "$tmp/ocr.bin" \
				"${stem}_output_0.pb" --input "${stem}_input_0.pb" \
				--rtol 1e-3 --atol 1e-5 --fill $fill
		done
	fi
	if [ $have_plain = 1 ] && build "$name plain" ocr "$stem.onnx" $opts \
		$plain_opts; then
		check "$name (plain plan)" ocr "$tmp/ocr.bin" \
			"${stem}_output_0.pb" --input "${stem}_input_0.pb" \
			--rtol 1e-3 --atol 1e-5 --fill random
	fi
	# Real weights through the fused kernel (det has 34 chains to fuse).
	if build "$name fused" ocr "$stem.onnx" $opts --fuse preact; then
		check "$name (--fuse preact)" ocr "$tmp/ocr.bin" \
			"${stem}_output_0.pb" --input "${stem}_input_0.pb" \
			--rtol 1e-3 --atol 1e-5 --fill random
	fi
done

echo "Silero VAD legacy and v5 at 16 kHz (--input-value sr=16000)"
# The sample rate fixed, every If folds and is inlined: one graph, the
# 16 kHz model; its speech probability against onnxruntime's.
for spec in "silero_vad_legacy --dim batch=1 --dim sequence=512" \
	    "silero_vad_v5 --input-shape input=1x512 --input-shape state=2x1x128"; do
	set -- $spec
	stem=$1
	shift
	if [ ! -f "$M/$stem.onnx" ]; then
		echo "skipped: no $stem.onnx"
		continue
	fi
	case $stem in
	silero_vad_legacy) ins="0 2 3" ;;
	*) ins="0 1" ;;
	esac
	set -- "$@" --input-value sr=16000
	if build "$stem" vad "$M/$stem.onnx" "$@"; then
		args=""
		for k in $ins; do
			args="$args --input $M/${stem}_input_$k.pb"
		done
		check "$stem" vad $args --rtol 1e-3 --atol 1e-5 --fill random \
			"$tmp/vad.bin" "$M/${stem}_output_0.pb"
	fi
	rm -f "$tmp/vad.bin"
done

echo "Silero VAD legacy and v5, the sample rate a run-time input (If)"
# No --input-value: the If on the sample rate stays and runs its branch in
# its planned workspace (runtime/ops_control.c).  Every output against
# onnxruntime's (the recurrent state too); legacy's 8 kHz branch, taken at
# run time, gives the bytes of the plan with sr=8000 inlined; v5's 8 kHz
# branch cannot take a 512-sample window (onnxruntime fails there too), so
# the plan leaves it out and a run that takes it must fail.
"$PYTHON" -c "
import numpy, sys
from onnx import numpy_helper
open(sys.argv[1], 'wb').write(numpy_helper.from_array(
    numpy.array(8000, dtype=numpy.int64), 'sr').SerializeToString())
" "$tmp/sr8k.pb" 2>/dev/null || echo "skipped: no python3-onnx for the 8 kHz input"
for spec in "silero_vad_legacy 3 --dim batch=1 --dim sequence=512" \
	    "silero_vad_v5 2 --input-shape input=1x512 --input-shape state=2x1x128"; do
	set -- $spec
	stem=$1 nout=$2
	shift 2
	[ -f "$M/$stem.onnx" ] || continue
	ins=""
	for k in 0 1 2 3; do
		[ -f "$M/${stem}_input_$k.pb" ] &&
			ins="$ins --input $M/${stem}_input_$k.pb"
	done
	build "$stem (run-time If)" vad "$M/$stem.onnx" "$@" || continue
	if ! grep -q '{"If", [A-Z0-9_]*_OP_IF, "", "If' "$tmp/vad.h"; then
		bad "$stem: the plan has no If step"
		continue
	fi
	k=0
	while [ $k -lt "$nout" ]; do
		check "$stem run-time If, output $k" vad $ins --output $k \
			--rtol 1e-3 --atol 1e-5 --fill random "$tmp/vad.bin" \
			"$M/${stem}_output_$k.pb"
		k=$((k + 1))
	done
	[ -f "$tmp/sr8k.pb" ] || continue
	case $stem in
	silero_vad_legacy)
		ins8=$(echo "$ins" | sed "s|$M/${stem}_input_1.pb|$tmp/sr8k.pb|")
		noinput=$(echo "$ins" | sed "s|--input $M/${stem}_input_1.pb||")
		# The 8 kHz output must be the inlined plan's, and not the
		# 16 kHz reference (the branch really switched).
		if "$tmp/rt_vad" $ins8 --fill random --dump "$tmp/rt8.out" \
			"$tmp/vad.bin" >/dev/null 2>&1 &&
		   ! "$tmp/rt_vad" $ins8 --fill random "$tmp/vad.bin" \
			"$M/${stem}_output_0.pb" >/dev/null 2>&1 &&
		   build "$stem sr=8000 inlined" vad "$M/$stem.onnx" "$@" \
			--input-value sr=8000 &&
		   "$tmp/rt_vad" $noinput --fill random --dump "$tmp/inl8.out" \
			"$tmp/vad.bin" >/dev/null 2>&1 &&
		   cmp -s "$tmp/rt8.out" "$tmp/inl8.out"; then
			ok "$stem: the 8 kHz branch taken at run time gives the bytes of sr=8000 inlined"
		else
			bad "$stem: the 8 kHz branch at run time differs from sr=8000 inlined"
		fi ;;
	silero_vad_v5)
		ins8=$(echo "$ins" | sed "s|$M/${stem}_input_2.pb|$tmp/sr8k.pb|")
		if "$tmp/rt_vad" $ins8 --fill random "$tmp/vad.bin" \
			>"$tmp/out" 2>&1; then
			bad "$stem: the unplanned 8 kHz branch ran"
		elif grep -q "takes the else_branch, which the plan left out" \
			"$tmp/out"; then
			ok "$stem: sr=8000 fails, naming the branch the plan left out"
		else
			bad "$stem: sr=8000: $(cat "$tmp/out")"
		fi ;;
	esac
	rm -f "$tmp/vad.bin" "$tmp/rt8.out" "$tmp/inl8.out"
done

echo "Magika and YOLOX-nano (real weights)"
for spec in "magika_standard_v3_3 1e-5 --dim unk__214=1" \
	    "yolox_nano 1e-4"; do
	set -- $spec
	stem=$1 atol=$2
	shift 2
	if [ ! -f "$M/$stem.onnx" ]; then
		echo "skipped: no $stem.onnx"
		continue
	fi
	if build "$stem" tr "$M/$stem.onnx" "$@"; then
		check "$stem" tr "$tmp/tr.bin" "$M/${stem}_output_0.pb" \
			--input "$M/${stem}_input_0.pb" --rtol 1e-3 \
			--atol "$atol" --fill random
	fi
	# Under the sanitizers one plan each is enough (YOLOX takes 15 s).
	if [ $have_plain = 1 ] && [ -z "${ARENAC_SANITIZE:-}" ] &&
	   build "$stem plain" tr "$M/$stem.onnx" "$@" $plain_opts; then
		check "$stem (plain plan)" tr "$tmp/tr.bin" \
			"$M/${stem}_output_0.pb" --input "$M/${stem}_input_0.pb" \
			--rtol 1e-3 --atol "$atol" --fill random
	fi
	rm -f "$tmp/tr.bin"
done

echo "corrupted plan (must fail)"
# Moves the first activation that has a disjoint, longer-lived neighbour
# onto that neighbour's bytes: both are live at once, so one overwrites
# the other.
if build det-corrupt bad "$det.onnx" $(dims "${det}_input_0.pb"); then
	if "$PYTHON" - "$tmp/bad.h" <<'PY'
import re, sys
path = sys.argv[1]
src = open(path).read()
row = re.compile(r"(/\* (\d+) \*/ \{\"(?:[^\"\\]|\\.)*\", BAD_DT_FLOAT32, "
                 r"BAD_KIND_ACTIVATION, -?\d+, bad_dims \+ \d+, (\d+)u, )"
                 r"(\d+)u(, (-?\d+), (-?\d+), (-?\d+), \d+u, (-?\d+))")
rows = [(m, int(m.group(3)), int(m.group(4)), int(m.group(6)),
         int(m.group(7)), int(m.group(8)), int(m.group(9)))
        for m in row.finditer(src)]
for m, size, off, first, last, alias, inpl in rows:
    if alias >= 0 or inpl >= 0 or size < 64:
        continue
    for m2, size2, off2, first2, last2, alias2, inpl2 in rows:
        if (alias2 < 0 and inpl2 < 0 and size2 >= size and
                first2 < first and last2 > last and
                (off2 + size2 <= off or off + size <= off2)):
            src = src[:m.start(4)] + str(off2) + src[m.end(4):]
            open(path, "w").write(src)
            print("  moved tensor %s onto tensor %s" % (m.group(2),
                                                       m2.group(2)))
            sys.exit(0)
sys.exit(1)
PY
	then
		up=BAD
		$CC -std=c11 -O0 -D_POSIX_C_SOURCE=200809L -Iruntime -Itests \
			-I"$BUILD/gen" -I"$tmp" -DARENAC_HEADER='"bad.h"' -DLO=bad \
			-DUP=BAD -DBAD_DEFINE_ARENA -DBAD_DEFINE_TABLES -o "$tmp/rt_bad" tests/rt_run.c \
			$PB_OBJS "$RT_LIB" -lprotobuf-c -lm
		if "$tmp/rt_bad" "$tmp/bad.bin" "${det}_output_0.pb" \
			--input "${det}_input_0.pb" --rtol 1e-3 --atol 1e-5 \
			>"$tmp/out" 2>&1; then
			bad "corrupted det plan passed: $(tail -n 1 "$tmp/out")"
		else
			ok "corrupted det plan fails: $(tail -n 2 "$tmp/out" | tr '\n' ' ')"
		fi
	else
		bad "corrupted plan: no tensor to move in the det header"
	fi
fi
# A subgraph's tensor moved out of its If step's workspace, onto the
# graph inputs the branch still reads: the run must refuse it before any
# step runs, naming the subgraph.
leg=$M/silero_vad_legacy
if [ -f "$leg.onnx" ] &&
   build vad-corrupt bad "$leg.onnx" --dim batch=1 --dim sequence=512; then
	if "$PYTHON" - "$tmp/bad.h" <<'PY'
import re, sys
path = sys.argv[1]
src = open(path).read()
at = src.index("const bad_tensor bad_sg0_tensors[")
m = re.compile(r"BAD_KIND_ACTIVATION, -?\d+, bad_sg0_dims \+ \d+, \d+u, "
               r"(\d+)u, (\d+), ").search(src, at)
if not m:
    sys.exit(1)
src = src[:m.start(1)] + "20000" + src[m.end(1):]
open(path, "w").write(src)
PY
	then
		$CC -std=c11 -O0 -D_POSIX_C_SOURCE=200809L -Iruntime -Itests \
			-I"$BUILD/gen" -I"$tmp" -DARENAC_HEADER='"bad.h"' -DLO=bad \
			-DUP=BAD -DBAD_DEFINE_ARENA -DBAD_DEFINE_TABLES -o "$tmp/rt_bad" tests/rt_run.c \
			$PB_OBJS "$RT_LIB" -lprotobuf-c -lm
		if "$tmp/rt_bad" --input "${leg}_input_0.pb" \
			--input "${leg}_input_1.pb" --input "${leg}_input_2.pb" \
			--input "${leg}_input_3.pb" "$tmp/bad.bin" \
			>"$tmp/out" 2>&1; then
			bad "corrupted subgraph plan passed"
		elif grep -q "subgraph 0's tensor .* is outside its step's workspace" \
			"$tmp/out"; then
			ok "corrupted subgraph plan fails: $(tail -n 1 "$tmp/out")"
		else
			bad "corrupted subgraph plan: $(tail -n 1 "$tmp/out")"
		fi
	else
		bad "corrupted plan: no subgraph tensor to move in the VAD header"
	fi
fi

echo "refused variant (must fail, never run)"
# A QLinearMatMul whose sums have 2^22 + 1 products, more than the
# integer requantisation takes exactly (kernels.h RT_REQUANT_TERMS): an
# error code before its kernel runs.
if ! "$PYTHON" -c 'import onnx' 2>/dev/null; then
	echo "  skipped: no python3-onnx for the long-sum model"
elif "$PYTHON" - "$tmp/longsum.onnx" "$tmp/longsum_a.pb" <<'PY' &&
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
k = (1 << 22) + 1
n = helper.make_node
g = helper.make_graph(
    [n("QLinearMatMul", ["a", "s", "z", "b", "s", "z", "s", "z"], ["y"])],
    "longsum", [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, k])],
    [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 1])],
    [numpy_helper.from_array(np.ones((k, 1), np.uint8), "b"),
     numpy_helper.from_array(np.array(0.5, np.float32), "s"),
     numpy_helper.from_array(np.array(0, np.uint8), "z")])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
     sys.argv[1])
with open(sys.argv[2], "wb") as f:
    f.write(numpy_helper.from_array(np.ones((1, k), np.uint8),
                                    "a").SerializeToString())
PY
   build longsum ls "$tmp/longsum.onnx"; then
	"$tmp/rt_ls" --input "$tmp/longsum_a.pb" "$tmp/ls.bin" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q "4194305 products, above the 4194304" "$tmp/out"; then
		ok "QLinearMatMul of 4,194,305-product sums refused: $(tail -n 1 "$tmp/out")"
	else
		bad "QLinearMatMul of 4,194,305-product sums: exit $rc, $(tail -n 2 "$tmp/out")"
	fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
