#!/bin/sh
# e2e_bad.sh — the hostile-input catalogue (testdata/bad, written by
# testdata/gen_bad.py).  testdata/bad/expect.txt gives each file its exit
# code and a fragment of the error message: a broken model is refused with
# exit 2 and a message naming its problem, a valid but extreme one plans
# with exit 0.  Nothing may crash, and nothing may take more than
# ARENAC_BAD_TIMEOUT seconds.  Lines marked "slow" are skipped when
# ARENAC_SANITIZE is set (the sanitizer build is 5-20 times slower).
# Those that plan also write their header and JSON report, or refuse to
# with a message.
ARENAC=${ARENAC:-build/arenac}
LIMIT=${ARENAC_BAD_TIMEOUT:-120}
pass=0
fail=0
skip=0
tab=$(printf '\t')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while IFS="$tab" read -r file code expect slow; do
	if [ "$slow" = slow ] && [ -n "${ARENAC_SANITIZE:-}" ]; then
		skip=$((skip + 1))
		continue
	fi
	out=$(timeout "$LIMIT" "$ARENAC" -q "testdata/bad/$file" 2>&1 >/dev/null)
	rc=$?
	ok=false
	if [ "$rc" -ne "$code" ]; then
		:
	elif [ "$code" -eq 0 ]; then
		[ -z "$out" ] && ok=true
	elif printf '%s' "$out" | grep -qF "arenac: error: testdata/bad/$file: " &&
	     printf '%s' "$out" | grep -qF -- "$expect"; then
		ok=true
	fi
	# A model that plans gets its header and report written too (the
	# fuzzer found a plan of no steps crashing the header's op list):
	# written, or refused with a message, never a crash.
	if $ok && [ "$code" -eq 0 ]; then
		hout=$(timeout "$LIMIT" "$ARENAC" -q -o "$tmp/h.h" \
			--json "$tmp/r.json" "testdata/bad/$file" 2>&1 >/dev/null)
		hrc=$?
		if [ "$hrc" -gt 3 ] || { [ "$hrc" -ne 0 ] &&
		   ! printf '%s' "$hout" | grep -qF "arenac: error: "; }; then
			ok=false
			out="header and report: exit $hrc: $hout"
		fi
	fi
	if $ok; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $file: exit $rc, wanted $code and '$expect'; got: $out"
	fi
done < testdata/bad/expect.txt
echo "bad inputs: $pass passed, $fail failed, $skip skipped (slow, sanitizer build)"
[ "$fail" -eq 0 ]
