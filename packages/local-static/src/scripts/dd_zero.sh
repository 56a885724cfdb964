#!/bin/bash
# Writes zeros over a whole block device, N times (default 1).
set -euo pipefail
. "$(dirname "$0")/common.sh"
if [ "${1:-}" = "-h" ]; then usage_block "[passes]"; exit 0; fi
require_block_device
passes="${1:-1}"
for ((i = 1; i <= passes; i++)); do
  echo "Zeroing $LOCAL_PV_BLKDEVICE, pass $i of $passes"
  # dd ends with "No space left on device" once the device is full: that is success.
  if output="$(dd if=/dev/zero of="$LOCAL_PV_BLKDEVICE" bs=8096 2>&1)"; then :; fi
  if ! grep -q "No space left on device" <<<"$output"; then
    echo "$output" >&2
    exit 1
  fi
done
echo "Zeroing $LOCAL_PV_BLKDEVICE completed"
