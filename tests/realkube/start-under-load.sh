#!/usr/bin/env bash
# start-under-load.sh: realkube.sh start/stop, several times, with every core
# kept busy by a shell busy loop: the regression check for the start race of
# issue 20 (a pid checked before the fork had exec'd read as "exited").
#
#   REALKUBE_CACHE=... start-under-load.sh [ROUNDS] -- [start options]
#
# Round 1 also makes the race certain instead of likely: an exported shell
# function `setsid` (bash imports it into realkube.sh) sleeps 2 s in the
# forked shell before it execs setsid(1), so for 2 s /proc/$!/cmdline is the
# script's, which the start of before the fix took for "etcd exited".
#
# Exit 0 when every round started (status ok) and stopped cleanly.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rounds="${1:-3}"
shift || true
[[ "${1:-}" == -- ]] && shift
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [ROUNDS] -- [start options]" >&2; exit 2; }

burners=()
stop_burners() {
  local p
  for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${burners[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap 'stop_burners; bash "$here/realkube.sh" stop >/dev/null 2>&1 || true' EXIT
for ((c = 0; c < $(nproc); c++)); do
  ( while :; do :; done ) &
  burners+=("$!")
done

failed=0
for ((r = 1; r <= rounds; r++)); do
  if ((r == 1)); then
    # exec: `setsid` is only ever run in the background by realkube.sh.
    setsid() { sleep 2; exec setsid "$@"; }
    export -f setsid
  else
    unset -f setsid
  fi
  if bash "$here/realkube.sh" start "$@" 2>"${TMPDIR:-/tmp}/start-under-load.$$.log" \
     && bash "$here/realkube.sh" status >/dev/null; then
    echo "round $r: started"
  else
    echo "round $r: FAILED"; tail -n 5 "${TMPDIR:-/tmp}/start-under-load.$$.log"
    failed=$((failed + 1))
  fi
  bash "$here/realkube.sh" stop 2>/dev/null
done
rm -f "${TMPDIR:-/tmp}/start-under-load.$$.log"
echo "$((rounds - failed)) of $rounds rounds started under load"
((failed == 0))
