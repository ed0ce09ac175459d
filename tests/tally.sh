# tally.sh — what the shell suites that count verdicts share, as
# tests/tally.py is for the Python ones: pass and fail from zero, and
# check NAME STATUS, one verdict (status 0 passes), its line "ok   NAME"
# or "FAIL NAME".  Sourced (. "$(dirname "$0")/tally.sh"); each suite
# prints its own closing "N passed, N failed" line for tests/run.sh.
pass=0
fail=0

check() {
	if [ "$2" = 0 ]; then
		pass=$((pass + 1))
		echo "ok   $1"
	else
		fail=$((fail + 1))
		echo "FAIL $1"
	fi
}
