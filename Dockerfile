# syntax=docker/dockerfile:1
#
# The images of the provisioner binaries, one Dockerfile for all; PACKAGE names the folder under packages/:
#
#   docker build --build-arg PACKAGE=local-path -t ghcr.io/kprov/local-path:0.2.14 .
#   docker build --build-arg PACKAGE=hostpath-example -t ghcr.io/kprov/hostpath-example:0.2.14 .
#   docker build --build-arg PACKAGE=local-static -t ghcr.io/kprov/local-static:0.2.14 .
#
# `pnpm images` builds all three with buildah, without a daemon (docs/images.md).
#
# The build context is the repository root (a package needs the workspace). Only the files the build needs are copied
# (manifests, then sources), so the host's node_modules and dist never reach the image, whichever ignore file Docker
# reads.
#
# The build stage does not depend on PACKAGE: it builds the three provisioner packages, once for all three images
# (Docker's and buildah's layer cache keep it), and each image takes its package from it. The runtime stage does what
# does not depend on PACKAGE first, for the same reason.

ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: install the workspace, build the provisioner packages and the libraries they use
FROM ${NODE_IMAGE} AS build
# Behind a TLS-intercepting proxy, npm and pnpm trust its CA certificates when they are passed as the build secret
# `build-ca` (`--secret id=build-ca,src=/etc/ssl/certs/ca-certificates.crt`, docker and buildah alike): a secret is
# mounted only while the step runs, so no layer holds it. Without it, Node.js's own CA certificates.
# Corepack cannot be used here; pnpm comes from npm.
RUN --mount=type=secret,id=build-ca \
    if [ -f /run/secrets/build-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build-ca; fi \
 && npm install -g pnpm@10
WORKDIR /workspace

# Dependencies first, so this layer is cached until a manifest or the lockfile changes. The root package.json brings
# the build tools (tsup, typescript); testkit's manifest is there only so the workspace:* dev dependencies on it
# resolve (it is not built). Other workspace packages are left out; the frozen lockfile allows that. pnpm's store is a
# cache mount: a change of the lockfile downloads only what changed.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc tsconfig.base.json tsup.binary.ts tsup.ascii.ts node-version-gate.ts ./
COPY packages/quantity/package.json packages/quantity/
COPY packages/provisioner-lib/package.json packages/provisioner-lib/
COPY packages/testkit/package.json packages/testkit/
COPY packages/local-path/package.json packages/local-path/
COPY packages/local-static/package.json packages/local-static/
COPY packages/hostpath-example/package.json packages/hostpath-example/
RUN --mount=type=secret,id=build-ca --mount=type=cache,id=kprov-pnpm-store,target=/pnpm-store \
    if [ -f /run/secrets/build-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build-ca; fi \
 && pnpm install --frozen-lockfile --store-dir /pnpm-store

COPY packages/quantity/tsconfig.json packages/quantity/tsup.config.ts packages/quantity/README.md packages/quantity/LICENSE packages/quantity/NOTICE packages/quantity/
COPY packages/quantity/src packages/quantity/src
COPY packages/provisioner-lib/tsconfig.json packages/provisioner-lib/tsup.config.ts packages/provisioner-lib/README.md packages/provisioner-lib/LICENSE packages/provisioner-lib/NOTICE packages/provisioner-lib/
COPY packages/provisioner-lib/src packages/provisioner-lib/src
COPY packages/local-path/tsconfig.json packages/local-path/tsup.config.ts packages/local-path/README.md packages/local-path/LICENSE packages/local-path/NOTICE packages/local-path/
COPY packages/local-path/src packages/local-path/src
COPY packages/local-static/tsconfig.json packages/local-static/tsup.config.ts packages/local-static/README.md packages/local-static/LICENSE packages/local-static/NOTICE packages/local-static/
COPY packages/local-static/src packages/local-static/src
COPY packages/hostpath-example/tsconfig.json packages/hostpath-example/tsup.config.ts packages/hostpath-example/README.md packages/hostpath-example/LICENSE packages/hostpath-example/NOTICE packages/hostpath-example/
COPY packages/hostpath-example/src packages/hostpath-example/src
# The binary, dist/cli.js, is one bundle with every dependency in it (tsup.binary.ts): an image needs the package's
# dist and package.json (for its bin names), and no node_modules.
RUN pnpm --filter @kprov/quantity --filter @kprov/provisioner-lib \
      --filter ./packages/local-path --filter ./packages/local-static --filter ./packages/hostpath-example run build \
 && for p in local-path local-static hostpath-example; do test -f "packages/$p/dist/cli.js"; done

# ---- runtime: the built package (dist, package.json) and jemalloc, nothing else
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
# Node.js is started through kprov-node, set up to keep the provisioner's memory low: jemalloc as its allocator (glibc's
# keeps memory Node.js freed), one V8 background thread, no TurboFan, and, without a container memory limit, V8's
# young generation capped, which Node.js would size from the whole node's memory (see the script).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/*
COPY --chmod=0755 docker/kprov-node.sh /usr/local/bin/kprov-node
# The package's part. PACKAGE is declared here and not before, so that the steps above are the same for all three
# images; it is checked first, before the build stage's result is needed.
ARG PACKAGE
RUN case "${PACKAGE}" in \
      local-path | local-static | hostpath-example) ;; \
      *) echo "PACKAGE='${PACKAGE}': set --build-arg PACKAGE=local-path (or hostpath-example, local-static)" >&2 \
         && exit 1 ;; \
    esac
WORKDIR /app
COPY --from=build /workspace/packages/${PACKAGE}/package.json ./
COPY --from=build /workspace/packages/${PACKAGE}/dist ./dist/
# Each bin of the package is also on the PATH under its own name (/usr/bin): upstream local-path-provisioner's
# manifests and chart set `command: [local-path-provisioner, ...]`, which replaces the ENTRYPOINT, so a user can
# switch by changing only the image.
RUN node -e 'const fs=require("fs");const bin=require("/app/package.json").bin||{};for(const [name,file] of Object.entries(bin)){fs.writeFileSync("/usr/bin/"+name,"#!/bin/sh\nexec kprov-node /app/"+file.replace(/^\.\//,"")+" \"$@\"\n",{mode:0o755});}'
# A package that ships cleaner scripts in dist/scripts (local-static's block cleaners) has them at /scripts, the path
# its config names (`blockCleanerCommand: ["/scripts/shred.sh", "2"]`), as in upstream's image. They need bash and
# util-linux and e2fsprogs (ionice, mkfs, wipefs, blkdiscard), which the Debian base image has.
RUN if [ -d /app/dist/scripts ]; then ln -s /app/dist/scripts /scripts; fi
# Runs as root, as upstream local-path-provisioner's image: the hostPath example creates and removes directories in
# a root-owned pvDir; local-path itself touches no host path (its helper pods do). Set runAsUser in the pod spec if
# your setup allows a non-root user.
USER root
# The package's cli.js, through kprov-node. ENTRYPOINT rather than CMD: a pod's `args` (e.g. `start --config ...`,
# or the example's flags) are appended to it, where they would replace a CMD.
ENTRYPOINT ["kprov-node", "dist/cli.js"]
