#!/bin/bash
# Discards every block of the device (TRIM): fast on SSDs that support it.
set -euo pipefail
. "$(dirname "$0")/common.sh"
if [ "${1:-}" = "-h" ]; then usage_block ""; exit 0; fi
require_block_device
echo "Discarding the blocks of $LOCAL_PV_BLKDEVICE"
blkdiscard -v "$LOCAL_PV_BLKDEVICE"
echo "Discarding the blocks of $LOCAL_PV_BLKDEVICE completed"
