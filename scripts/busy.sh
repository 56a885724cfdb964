#!/usr/bin/env bash
# Runs a command on a busy machine: `scripts/busy.sh <command> [args...]` starts CPU-bound Node.js processes
# (KPROV_BUSY_PROCESSES, default 2: as many as the 2 cores CI has), runs the command beside them, and stops them when
# it ends, with its exit status.
#
# `pnpm test:busy` runs the suites where a test's own timing races the machine this way (vitest.busy.config.ts says
# which; docs/testkit.md, "On a busy machine"), on the testkit and real tiers (KPROV_TIERS=testkit,real unless set).
# `scripts/busy.sh vitest run` runs every suite that way.
set -euo pipefail

count="${KPROV_BUSY_PROCESSES:-2}"
case "$count" in '' | *[!0-9]*)
  echo "busy: KPROV_BUSY_PROCESSES must be a number of processes, got '$count'" >&2
  exit 2
  ;;
esac
[ "$#" -gt 0 ] || {
  echo 'busy: usage: scripts/busy.sh <command> [args...]' >&2
  exit 2
}

pids=()
command_pid=""
stop() {
  [ -z "$command_pid" ] || kill "$command_pid" 2>/dev/null || true
  [ "${#pids[@]}" -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true
}
trap stop EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# Each one spins on a core. It also ends by itself once this script is gone without its trap running (SIGKILL): its
# parent process then changes.
burn='const parent = process.ppid; for (let i = 1; ; i++) if (i % 1e8 === 0 && process.ppid !== parent) process.exit(0);'
for _ in $(seq 1 "$count"); do
  node -e "$burn" &
  pids+=("$!")
done
echo "busy: $count CPU-bound processes beside: $*"

# In the background, so that a signal to this script runs its traps at once (bash defers them while a foreground
# command runs); the command is stopped with the others then.
"$@" &
command_pid=$!
status=0
wait "$command_pid" || status=$?
command_pid=""
exit "$status"
