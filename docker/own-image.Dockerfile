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
# Node's headers: node-pty compiles against them on install (instead of downloading them).
COPY --from=node /usr/local/include/node /usr/local/include/node
# Required: perl (perl-base: the PTY shim), util-linux (setsid), coreutils (mkfifo),
# a writable /tmp; every Debian and Ubuntu image has them.
# Optional: bubblewrap, for sandboxed starts (Codex's default mode); tini, as PID 1
# if your image has no init of its own. python3, make and g++ build node-pty and go again.
# NPM_CONFIG_REGISTRY: another registry to install from, if you use one.
ARG NPM_CONFIG_REGISTRY
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap tini python3 make g++ \
 && npm_config_nodedir=/usr/local npm install -g --allow-scripts=node-pty --no-audit --no-fund @execmux/server \
 && rm -rf /usr/local/lib/node_modules/@execmux/server/node_modules/node-pty/prebuilds /usr/local/lib/node_modules/node-pty/prebuilds \
 && apt-get purge -y python3 make g++ && apt-get autoremove -y --purge \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /root/.npm /root/.cache /usr/local/include/node
