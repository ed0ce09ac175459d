#!/bin/sh
# e2e_determinism.sh — the same model and options give byte-identical
# header, JSON, DOT and timeline (SVG, laid out) files: run to run, and
# under another locale (German decimal commas), time zone, working folder
# and environment.  A comparison timeline (--timeline-compare) reads a
# report copied beside the model.  A firmware
# build that regenerates its header must see no diff unless the model or
# the options changed.
ARENAC=${ARENAC:-build/arenac}
case $ARENAC in /*) ;; *) ARENAC=$(pwd)/$ARENAC ;; esac
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A real German locale, built here when the system has none installed.
de=
if locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
	de="LC_ALL=de_DE.UTF-8"
elif mkdir -p "$tmp/loc" && localedef -i de_DE -f UTF-8 "$tmp/loc/de_DE.UTF-8" >/dev/null 2>&1 ||
     [ -d "$tmp/loc/de_DE.UTF-8" ]; then
	de="LOCPATH=$tmp/loc LC_ALL=de_DE.UTF-8"
else
	echo "skipped: no de_DE locale (C.UTF-8 instead)"
	de="LC_ALL=C.UTF-8"
fi

# run DIR ENV...: plans model.onnx in DIR, writing its four outputs there.
run() {
	dir=$1
	shift
	(cd "$dir" && env "$@" "$ARENAC" -q $opts --json out.json -o out.h \
		--dot out.dot --timeline out.svg model.onnx)
}

# MODEL OPTIONS...
check() {
	model=$1
	shift
	opts="$*"
	rm -rf "$tmp/a" "$tmp/b" "$tmp/c"
	mkdir -p "$tmp/a" "$tmp/b/deeper/folder" "$tmp/c"
	for d in a b/deeper/folder c; do
		cp "$model" "$tmp/$d/model.onnx"
		cp "$tmp/other.json" "$tmp/$d/other.json"
	done
	ok=true
	run "$tmp/a" LC_ALL=C TZ=UTC || ok=false
	run "$tmp/b/deeper/folder" $de TZ=Pacific/Chatham LANG=de_DE.UTF-8 \
		ARENAC_NOISE=1 || ok=false
	run "$tmp/c" LC_ALL=C TZ=UTC || ok=false
	for f in out.json out.h out.dot out.svg; do
		for d in b/deeper/folder c; do
			if ! cmp -s "$tmp/a/$f" "$tmp/$d/$f"; then
				ok=false
				echo "FAIL $(basename "$model") $opts: $f differs in $d"
				diff "$tmp/a/$f" "$tmp/$d/$f" | head -5
			fi
		done
	done
	if $ok && [ -s "$tmp/a/out.h" ] && [ -s "$tmp/a/out.json" ] &&
	   [ -s "$tmp/a/out.dot" ] && [ -s "$tmp/a/out.svg" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $(basename "$model") $opts"
	fi
}

"$ARENAC" -q --train --dim N=1 --order file --json "$tmp/other.json" \
	testdata/lenet.onnx
check testdata/lenet.onnx --dim N=1
check testdata/lenet.onnx --train --dim N=1 --timeline-compare other.json
check testdata/lenet.onnx --dim N=8 --align 64 --algo exact
check testdata/shape_windows9.onnx
if [ -n "${ARENAC_SHARED:-}" ] && [ -d "$ARENAC_SHARED/models" ]; then
	check "$ARENAC_SHARED/models/light_inception_v1.onnx"
	check "$ARENAC_SHARED/models/light_squeezenet.onnx" --order file
	check "$ARENAC_SHARED/models/silero_vad_legacy.onnx" \
		--dim batch=1 --dim sequence=512
else
	echo "skipped: no shared models"
fi
echo "determinism: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
