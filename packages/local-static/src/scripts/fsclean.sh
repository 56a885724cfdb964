#!/bin/bash
# Removes every entry of the directory LOCAL_PV_FILESYSTEM, keeping the directory (the mount point) itself.
set -euo pipefail
if [ "${1:-}" = "-h" ]; then
  echo "usage: $(basename "$0")" >&2
  echo "  empties the directory named by LOCAL_PV_FILESYSTEM" >&2
  exit 0
fi
if [ -z "${LOCAL_PV_FILESYSTEM:-}" ] || [ ! -d "$LOCAL_PV_FILESYSTEM" ]; then
  echo "LOCAL_PV_FILESYSTEM is not set or not a directory" >&2
  exit 1
fi
find "$LOCAL_PV_FILESYSTEM" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +
echo "Cleaned $LOCAL_PV_FILESYSTEM"
