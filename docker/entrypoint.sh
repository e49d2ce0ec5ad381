#!/bin/sh
# Container entrypoint: tini (PID 1) runs this, this execs the daemon, so the
# daemon receives SIGTERM directly and tini reaps any orphan.
# A token file mounted as a secret is picked up without configuration.
set -eu
if [ -z "${EXECMUX_TOKEN:-}" ] && [ -z "${EXECMUX_TOKEN_FILE:-}" ] && [ -r /run/secrets/execmux_tokens ]; then
  export EXECMUX_TOKEN_FILE=/run/secrets/execmux_tokens
fi
# The health check runs apart from the daemon, with the container's
# environment but not these arguments: they are left for it here (where
# $TMPDIR is not writable, it goes by the environment alone).
args_file="${TMPDIR:-/tmp}/execmux-serve.args"
{ : > "$args_file" && for argument in "$@"; do printf '%s\0' "$argument" >> "$args_file"; done; } 2>/dev/null || true
exec node --no-memory-reducer "$(dirname "$0")/../server/dist/cli.js" serve "$@"
