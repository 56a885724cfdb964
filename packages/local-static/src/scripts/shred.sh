#!/bin/bash
# Overwrites a block device N times (default 3) with random data, then once with zeros. Slow on large disks.
set -euo pipefail
. "$(dirname "$0")/common.sh"
if [ "${1:-}" = "-h" ]; then usage_block "[passes]"; exit 0; fi
require_block_device
passes="${1:-3}"
echo "Shredding $LOCAL_PV_BLKDEVICE with $passes passes"
shred -vzf -n "$passes" "$LOCAL_PV_BLKDEVICE"
echo "Shredding $LOCAL_PV_BLKDEVICE completed"
