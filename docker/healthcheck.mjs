// HEALTHCHECK / probe command: exit 0 when the daemon on EXECMUX_LISTEN (or
// the image's default) answers /readyz, 1 otherwise. No token needed.
const listen = process.env.EXECMUX_LISTEN ?? "ws://0.0.0.0:7373";
const url = new URL(listen);
const host = url.hostname === "0.0.0.0" || url.hostname === "[::]" ? "127.0.0.1" : url.hostname;
const scheme = url.protocol === "wss:" ? "https" : "http";
// A self-signed certificate is still this daemon's: probe it anyway.
if (scheme === "https") process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
try {
  const response = await fetch(`${scheme}://${host}:${url.port || 7373}/readyz`, { signal: AbortSignal.timeout(2000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
