#!/bin/bash
# Shared checks of the block cleaners: LOCAL_PV_BLKDEVICE must name a block device.
set -euo pipefail

usage_block() {
  echo "usage: $(basename "$0") $1" >&2
  echo "  wipes the block device named by LOCAL_PV_BLKDEVICE" >&2
}

require_block_device() {
  if [ -z "${LOCAL_PV_BLKDEVICE:-}" ]; then
    echo "LOCAL_PV_BLKDEVICE is not set" >&2
    exit 1
  fi
  if [ ! -b "$LOCAL_PV_BLKDEVICE" ]; then
    echo "$LOCAL_PV_BLKDEVICE is not a block device" >&2
    exit 1
  fi
}
