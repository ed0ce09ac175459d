#!/bin/sh
# e2e_docs.sh — the documentation keeps up with the binary: every option
# `arenac --help` lists is in the man page, so is every option of `arenac
# solve --help` (in its own section), every exit code the help names is in
# the man page and the README, exit 3 covers --memory everywhere, and the
# man page's EXAMPLES use only options that exist.
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

opts=$("$ARENAC" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
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

# solve's options, in the man page's section on solve.
solve_man=$(sed -n '/^\.SS solve/,/^\.SH/p' doc/arenac.1)
sopts=$("$ARENAC" solve --help | grep -o -- '--[a-z][a-z0-9-]*' | grep -vx -- --help | sort -u)
[ -n "$sopts" ] || { echo "FAIL: no options in solve --help"; exit 1; }
for o in $sopts; do
	esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
	check "man page's solve section lacks $o" \
		"printf '%s' \"\$solve_man\" | grep -q -- '$esc\\b'"
done
check "man page: exit 3 does not name --memory" \
	"grep -A1 '^3\$' doc/arenac.1 | grep -q 'memory'"
check "README: exit 3 does not name --memory" \
	"grep '^| 3 |' README.md | grep -q -- '--memory'"
check "--help: exit 3 does not name --memory" \
	"'$ARENAC' --help | tr '\n' ' ' | grep -q '3 the plan does not fit.*--memory'"
# The examples: there, and made of options that exist.
check "man page has no EXAMPLES" "grep -q '^\.SH EXAMPLES' doc/arenac.1"
known=$( ("$ARENAC" --help; "$ARENAC" solve --help) | grep -o -- '--[a-z][a-z0-9-]*')
for o in $(sed -n '/^\.SH EXAMPLES/,/^\.SH/p' doc/arenac.1 | sed 's/\\-/-/g' |
	   grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
	check "man page example uses unknown option $o" \
		"printf '%s\n' \"\$known\" | grep -qx -- '$o'"
done

# The README's "Using the header" example compiling as C99 and C++11 is
# tests/e2e_header.sh's business.

echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
