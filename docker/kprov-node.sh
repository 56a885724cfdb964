#!/bin/sh
# Starts Node.js with the given arguments as the provisioners' images run it: `kprov-node dist/cli.js start ...`,
# set up to keep a provisioner's memory low (bench/README.md, "Where the memory goes", has the figures).
#
# Memory allocator: jemalloc, when the system has it (the images install Debian's libjemalloc2), returning freed
# pages to the system after a second (MALLOC_CONF, unless set). glibc's malloc keeps what Node.js and V8 freed below
# memory still in use, and gives it back rarely if ever: with 10,000 claims and PVs cached and the controller idle,
# about 10 MiB more RSS. One arena and no per-thread caches (`narenas:1,tcache:false`): a Node.js process allocates
# on its main thread nearly always, and an arena and a cache per thread (jemalloc's default) kept about 2 MiB more at
# rest for no CPU a provisioner's load could tell (bench/README.md, "The allocator"). KPROV_MALLOC=glibc keeps
# glibc's; an LD_PRELOAD of your own is left alone.
#
# Node.js and V8 (KPROV_NODE_FLAGS, to replace them; empty for none):
# - `--optimize-for-size`, V8's mode for small devices: after a full collection it gives back the heap pages it no
#   longer needs instead of keeping them for reuse, grows the heap in small steps, and keeps the young generation at
#   1 MiB semi-spaces. Without it, a controller whose caches take a stream of updates (the claims and volumes being
#   bound after a burst of provisions) kept the pages of every peak: about 230 MiB of RSS for 35 MiB of heap on a
#   real API server with 10,000 claims and PVs cached, against about 105 with it, for about a tenth more CPU. A
#   program that keeps most of what it allocates runs slower with 1 MiB semi-spaces: an informer's first list of a
#   large cluster takes longer (a probe that keeps 200 MiB of small objects alive: 3.9 s instead of 0.5).
# - `--v8-pool-size=1`: one thread for V8's background work instead of four (each keeps memory of its own);
# - `--no-turbofan` and `--liftoff-only`: JavaScript optimized up to V8's Maglev compiler but not its TurboFan, and
#   WebAssembly (undici's HTTP parser) compiled by Liftoff only: TurboFan's code and the memory it compiles in cost
#   about 4 MiB, and the controller's CPU per provision was no higher without it. (`--no-turbofan` rather than
#   `--max-opt=2`, the same cap: a tier chosen with `--max-opt` would also decide the lower ones, which a binary
#   may turn off for itself, as local-static's provisioner turns off Sparkplug and Maglev.)
#
# V8's young generation: Node.js sizes it from the memory it may use, a container's memory limit or, when there is
# none, the whole machine's memory: on a large node its two semi-spaces grow to 64 MiB each under load. Then this caps
# them at 16 MiB (`--max-semi-space-size=16`, what Node.js 24 picks itself under a 1 GiB limit), for little CPU at the
# provisioners' load. No cap is added when the process runs under a memory limit (Node.js sizes the young generation
# from it) or when NODE_OPTIONS sets the size already; with `--optimize-for-size` (which keeps it at 1 MiB) it is moot.
# When NODE_OPTIONS sets the size, `--optimize-for-size` is left out too, so that the size set there applies.
#
# KPROV_NODE: the Node.js executable (default: `node` on the PATH).
set -eu
node="${KPROV_NODE:-node}"
flags="${KPROV_NODE_FLAGS---optimize-for-size --v8-pool-size=1 --no-turbofan --liftoff-only}"
jemalloc_conf="narenas:1,tcache:false,background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0"

if [ -z "${LD_PRELOAD:-}" ] && [ "${KPROV_MALLOC:-jemalloc}" = jemalloc ]; then
  for lib in /usr/lib/*-linux-gnu/libjemalloc.so.2 /usr/lib64/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
    if [ -e "$lib" ]; then
      export LD_PRELOAD="$lib"
      export MALLOC_CONF="${MALLOC_CONF:-$jemalloc_conf}"
      break
    fi
  done
fi

# shellcheck disable=SC2086 # the flags are words
case " ${NODE_OPTIONS:-} " in
  *--max-semi-space-size* | *--max_semi_space_size*)
    sized=""
    for flag in $flags; do
      case "$flag" in --optimize-for-size | --optimize_for_size) ;; *) sized="$sized $flag" ;; esac
    done
    exec "$node" $sized "$@"
    ;;
esac
# Node.js's own view of its limit (libuv reads cgroup v1 and v2 alike): limited when below the machine's memory.
limited='const m = process.constrainedMemory(); process.exit(m > 0 && m < require("node:os").totalmem() ? 0 : 1)'
if "$node" -e "$limited"; then
  # shellcheck disable=SC2086
  exec "$node" $flags "$@"
fi
# shellcheck disable=SC2086
exec "$node" --max-semi-space-size=16 $flags "$@"
