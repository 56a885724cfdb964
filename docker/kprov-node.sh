#!/bin/sh
# Starts Node.js with the given arguments as the provisioners' images run it: `kprov-node dist/cli.js start ...`.
#
# Memory allocator: jemalloc, when the system has it (the images install Debian's libjemalloc2). glibc's malloc keeps
# what Node.js and V8 freed in its arenas, below memory still in use, and gives it back rarely if ever: with 10,000
# claims and PVs cached, about 10 MiB more RSS than with jemalloc, which returns freed pages within seconds (see
# bench/README.md, "Where the memory goes"). KPROV_MALLOC=glibc keeps glibc's; an LD_PRELOAD of your own is left
# alone.
#
# V8's young generation: Node.js sizes it from the memory it may use, a container's memory limit or, when there is
# none, the whole machine's memory: on a large node its two semi-spaces grow to 64 MiB each under load, and V8 keeps
# them. Then this caps them at 16 MiB (`--max-semi-space-size=16`, what Node.js 24 picks itself under a 1 GiB limit),
# for little CPU at the provisioners' load. Nothing is added when the process runs under a memory limit (Node.js
# sizes the young generation from it) or when NODE_OPTIONS sets the size already.
#
# KPROV_NODE: the Node.js executable (default: `node` on the PATH).
set -eu
node="${KPROV_NODE:-node}"

if [ -z "${LD_PRELOAD:-}" ] && [ "${KPROV_MALLOC:-jemalloc}" = jemalloc ]; then
  for lib in /usr/lib/*-linux-gnu/libjemalloc.so.2 /usr/lib64/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
    if [ -e "$lib" ]; then
      export LD_PRELOAD="$lib"
      break
    fi
  done
fi

case " ${NODE_OPTIONS:-} " in
  *--max-semi-space-size* | *--max_semi_space_size*) exec "$node" "$@" ;;
esac
# Node.js's own view of its limit (libuv reads cgroup v1 and v2 alike): limited when below the machine's memory.
limited='const m = process.constrainedMemory(); process.exit(m > 0 && m < require("node:os").totalmem() ? 0 : 1)'
if "$node" -e "$limited"; then
  exec "$node" "$@"
fi
exec "$node" --max-semi-space-size=16 "$@"
