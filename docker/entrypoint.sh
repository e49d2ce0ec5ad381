#!/bin/sh
# Container entrypoint: tini (PID 1) runs this, this execs the daemon, so the
# daemon receives SIGTERM directly and tini reaps any orphan.
# A token file mounted as a secret is picked up without configuration.
set -eu
if [ -z "${EXECMUX_TOKEN:-}" ] && [ -z "${EXECMUX_TOKEN_FILE:-}" ] && [ -r /run/secrets/execmux_tokens ]; then
  export EXECMUX_TOKEN_FILE=/run/secrets/execmux_tokens
fi
exec node "$(dirname "$0")/../server/dist/cli.js" serve "$@"
