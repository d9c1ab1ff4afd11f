#!/usr/bin/env bash
# step.sh NAME COMMAND...: runs one step of `make test`, records its wall
# time and result in test-results/steps.tsv, and prints the table of the
# steps so far when the step fails or is the last (STEP_LAST=1), so that
# `make test` ends with where its time went, pass or fail.
# `step.sh --reset` starts a new table.
set -uo pipefail
file=test-results/steps.tsv
if [ "${1:-}" = "--reset" ]; then
  mkdir -p test-results && : > "$file"
  exit 0
fi
name=$1; shift
start=$(date +%s)
"$@"
rc=$?
secs=$(( $(date +%s) - start ))
status=ok; [ "$rc" -eq 0 ] || status="FAILED ($rc)"
mkdir -p test-results && printf '%s\t%s\t%s\n' "$name" "$secs" "$status" >> "$file"
if [ "$rc" -ne 0 ] || [ "${STEP_LAST:-}" = 1 ]; then
  echo
  echo "make test: steps and their wall time (load average now: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
  awk -F'\t' '{ printf "  %-12s %6ss  %s\n", $1, $2, $3; t += $2 } END { printf "  %-12s %6ss\n", "total", t }' "$file"
fi
exit "$rc"
