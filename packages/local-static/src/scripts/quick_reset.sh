#!/bin/bash
# Fast reset of a block device: a new filesystem over it, then every signature wiped. Not a secure erase.
set -euo pipefail
. "$(dirname "$0")/common.sh"
if [ "${1:-}" = "-h" ]; then usage_block ""; exit 0; fi
require_block_device
echo "Quick reset of $LOCAL_PV_BLKDEVICE"
ionice -c 3 mkfs -F "$LOCAL_PV_BLKDEVICE"
ionice -c 3 wipefs -a "$LOCAL_PV_BLKDEVICE"
echo "Quick reset of $LOCAL_PV_BLKDEVICE completed"
