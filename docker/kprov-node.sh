#!/bin/sh
# Starts Node.js with the given arguments as the provisioners' images run it: `kprov-node dist/cli.js start ...`.
#
# Node.js sizes V8's young generation from the memory it may use: a container's memory limit, or the whole machine's
# memory when there is none. With no limit on a large node, the two semi-spaces grow to 64 MiB each under load, and
# V8 keeps them: RSS a provisioner does not need (see bench/README.md, "Where the memory went"). Then this caps them at
# 16 MiB (`--max-semi-space-size=16`, what Node.js 24 picks itself under a 1 GiB limit), for little CPU at the
# provisioners' load. Nothing is added when the process runs under a memory limit (Node.js sizes the young
# generation from it) or when NODE_OPTIONS sets the size already.
#
# KPROV_NODE: the Node.js executable (default: `node` on the PATH).
set -eu
node="${KPROV_NODE:-node}"
case " ${NODE_OPTIONS:-} " in
  *--max-semi-space-size* | *--max_semi_space_size*) exec "$node" "$@" ;;
esac
# Node.js's own view of its limit (libuv reads cgroup v1 and v2 alike): limited when below the machine's memory.
limited='const m = process.constrainedMemory(); process.exit(m > 0 && m < require("node:os").totalmem() ? 0 : 1)'
if "$node" -e "$limited"; then
  exec "$node" "$@"
fi
exec "$node" --max-semi-space-size=16 "$@"
