// HEALTHCHECK / probe command: exit 0 when the daemon this container runs
// answers /readyz, 1 otherwise (the reason on stdout, which `docker inspect`
// shows). No token needed. The daemon's configuration is read the daemon's
// own way: its environment (this process has the container's), a config file
// (EXECMUX_CONFIG or --config), and the flags given to `docker run`, which
// entrypoint.sh leaves in $TMPDIR/execmux-serve.args.
import { readFileSync } from "node:fs";
import { probeReadiness } from "../server/dist/health-probe.js";

let args = [];
try {
  args = readFileSync(`${process.env.TMPDIR || "/tmp"}/execmux-serve.args`, "utf8").split("\0").slice(0, -1);
} catch {
  // Started without the entrypoint: the environment alone.
}
// A self-signed certificate is still this daemon's: probe it anyway.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
try {
  const { ready, message } = await probeReadiness(args, process.env);
  process.stdout.write(`${message}\n`);
  process.exit(ready ? 0 : 1);
} catch (error) {
  process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
