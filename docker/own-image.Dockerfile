# Adding execmux to an existing Debian- or Ubuntu-based sandbox image: a recipe
# (docs/containers.md explains each part). Build it on top of yours:
#   docker build -f docker/own-image.Dockerfile --build-arg SANDBOX_IMAGE=your/sandbox:tag -t your/sandbox:execmux docker
# and start `execmux serve` in the container (as its command, or beside what it runs).
ARG SANDBOX_IMAGE=debian:bookworm-slim
ARG NODE_IMAGE=node:20-bookworm-slim

# Node 20.10 or newer. Debian 12's and Ubuntu 24.04's own nodejs are 18, too old:
# take the official image's (NodeSource's packages serve as well).
FROM ${NODE_IMAGE} AS node

FROM ${SANDBOX_IMAGE}
USER root
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/npm
# Required: Node and the package, nothing else. @execmux/server carries its process host
# prebuilt and statically linked (Linux x64), so installing it runs no script and needs no
# compiler; on another architecture, see docs/containers.md.
# Optional: bubblewrap, for sandboxed starts (Codex's default mode; perl-base, in every Debian
# and Ubuntu image, gives a sandboxed child a separate argv[0] when asked); tini, as PID 1 if
# your image has no init of its own.
# NPM_CONFIG_REGISTRY: another registry to install from, if you use one.
ARG NPM_CONFIG_REGISTRY
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap tini \
 && npm install -g --no-audit --no-fund @execmux/server \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /root/.npm /root/.cache
