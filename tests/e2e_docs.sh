#!/bin/sh
# e2e_docs.sh — the documentation keeps up with the binary: every option
# `arenac --help` lists is in the man page, every exit code the help names
# is in the man page and the README.
set -u
ARENAC=${ARENAC:-build/arenac}
pass=0
fail=0

check() {
	if eval "$2"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $1"
	fi
}

opts=$("$ARENAC" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
[ -n "$opts" ] || { echo "FAIL: no options in --help"; exit 1; }
for o in $opts; do
	# The man page escapes every '-' as '\-'.
	esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
	check "man page lacks $o" "grep -q -- '$esc\\b' doc/arenac.1"
done
for code in 0 1 2 3 4; do
	check "man page lacks exit code $code" \
		"grep -A1 '^\\.TP' doc/arenac.1 | grep -qx '$code'"
	check "README lacks exit code $code" \
		"grep -q '^| $code |' README.md"
done

echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
