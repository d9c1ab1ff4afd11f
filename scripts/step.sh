#!/usr/bin/env bash
# The steps of `make test`, which may run at the same time:
#   step.sh --reset          starts a new table (and its wall clock).
#   step.sh NAME COMMAND...  runs one step with its output in
#                            test-results/NAME.log (steps running side by
#                            side do not interleave), records its wall time
#                            and result in test-results/steps.tsv, prints one
#                            line when it starts and one when it ends, and
#                            exits with the command's status.
#   step.sh --summary        prints the table of the steps and their wall
#                            time, the total wall time since --reset, the log
#                            of each failed step, and "steps: N passed, N
#                            failed"; exits 1 if a step failed or none ran.
# So `make test` ends with where its time went, pass or fail.
set -uo pipefail
dir=test-results
file=$dir/steps.tsv
started=$dir/steps.start

case "${1:-}" in
--reset)
  mkdir -p "$dir" && : > "$file" && date +%s > "$started"
  exit 0
  ;;
--summary)
  [ -s "$file" ] || { echo "make test: no step ran"; echo "steps: 0 passed, 1 failed"; exit 1; }
  wall=$(( $(date +%s) - $(cat "$started" 2>/dev/null || date +%s) ))
  echo
  echo "make test: steps and their wall time (load average now: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
  awk -F'\t' -v wall="$wall" '{ printf "  %-12s %6ss  %s\n", $1, $2, $3; t += $2 }
    END { printf "  %-12s %6ss  (the steps one after another)\n", "sum", t; printf "  %-12s %6ss  (make test, steps side by side)\n", "wall", wall }' "$file"
  passed=0 failed=0
  while IFS=$'\t' read -r name _ status; do
    if [ "$status" = ok ]; then passed=$((passed + 1)); continue; fi
    failed=$((failed + 1))
    echo
    echo "==== $name: $status; its log ($dir/$name.log):"
    cat "$dir/$name.log" 2>/dev/null
    echo "==== end of $name's log"
  done < "$file"
  echo "steps: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
  ;;
esac

name=$1; shift
mkdir -p "$dir"
log=$dir/$name.log
echo "$name: started ($(date +%T)), log: $log"
start=$(date +%s)
"$@" > "$log" 2>&1 < /dev/null
rc=$?
secs=$(( $(date +%s) - start ))
status=ok; [ "$rc" -eq 0 ] || status="FAILED ($rc)"
printf '%s\t%s\t%s\n' "$name" "$secs" "$status" >> "$file"
echo "$name: $status in ${secs}s (last line: $(tail -n 1 "$log"))"
exit "$rc"
