/**
 * The listener's settings that are refused whatever else happens, in one
 * place for the daemon and for `execmux serve`, which checks them before it
 * starts a process host (and loads nothing of the daemon to do so).
 */
import { readFileSync } from "node:fs";
import { loadWsAuth, wsAuthSettings } from "./auth/ws-auth.js";
import { ConfigError, parseListen, type Config } from "./config.js";
import { isLoopback } from "./loopback.js";

/** What checkListenerSettings found: the address, TLS, and upstream's --ws-auth credential. */
export type ListenerSettings = ReturnType<typeof checkListenerSettings>;

/** The address, TLS, upstream's --ws-auth options (their files read), token files readable, and a token wherever anyone else could connect. */
export function checkListenerSettings(config: Config) {
  const { host, port } = parseListen(config.listen);
  const tls = Boolean(config.tlsCert || config.tlsKey);
  if (tls && !(config.tlsCert && config.tlsKey)) throw new ConfigError("--tls-cert and --tls-key go together");
  const wsAuthSetting = wsAuthSettings(config);
  const wsAuth = wsAuthSetting && loadWsAuth(wsAuthSetting);
  // A token file that cannot be read at the start would leave its tokens admitting no one, silently (later, a
  // rotation that cannot be read keeps the tokens it had: auth/token-store.ts). Read as the token store reads it.
  for (const [flag, file] of [["--token-file", config.tokenFile], ["--observer-token-file", config.observerTokenFile]] as const) {
    if (file === "") continue;
    try {
      readFileSync(file, "utf8");
    } catch (error) {
      throw new ConfigError(`cannot read ${flag} ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}): no token in it could admit a client`);
    }
  }
  const authenticated = config.token !== "" || config.tokenFile !== "" || Boolean(wsAuth);
  if (!authenticated && !isLoopback(host) && !config.insecureNoAuth) {
    throw new ConfigError(
      `refusing to listen on ${host} without a token: anyone who can reach it could run commands. ` +
        "Give clients a token with --token-file FILE or EXECMUX_TOKEN (not --token: a command line is readable by every user of this machine), or use --ws-auth, or pass --insecure-no-auth if you really mean it.",
    );
  }
  return { host, port, tls, wsAuth };
}
