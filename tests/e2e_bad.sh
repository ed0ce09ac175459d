#!/bin/sh
# e2e_bad.sh — every file in the bad-input catalogue (testdata/bad) must be
# refused with exit code 2 and a message that names its problem, and never
# crash.  The expected message fragments are in testdata/bad/expect.txt.
ARENAC=${ARENAC:-build/arenac}
pass=0
fail=0
while IFS="$(printf '\t')" read -r file expect; do
	out=$("$ARENAC" -q "testdata/bad/$file" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 2 ] && printf '%s' "$out" | grep -qF "arenac: error: testdata/bad/$file: " &&
	   printf '%s' "$out" | grep -qF -- "$expect"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $file: exit $rc, wanted 2 and '$expect'; got: $out"
	fi
done < testdata/bad/expect.txt
echo "bad inputs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
