/**
 * The listener's settings that are refused whatever else happens, in one
 * place for the daemon and for `execmux serve`, which checks them before it
 * starts a process host (and loads nothing of the daemon to do so).
 */
import { loadWsAuth, wsAuthSettings } from "./auth/ws-auth.js";
import { ConfigError, parseListen, type Config } from "./config.js";
import { isLoopback } from "./loopback.js";

/** The address, TLS, upstream's --ws-auth options (their files read), and a token wherever anyone else could connect. */
export function checkListenerSettings(config: Config) {
  const { host, port } = parseListen(config.listen);
  const tls = Boolean(config.tlsCert || config.tlsKey);
  if (tls && !(config.tlsCert && config.tlsKey)) throw new ConfigError("--tls-cert and --tls-key go together");
  const wsAuthSetting = wsAuthSettings(config);
  const wsAuth = wsAuthSetting && loadWsAuth(wsAuthSetting);
  const authenticated = config.token !== "" || config.tokenFile !== "" || Boolean(wsAuth);
  if (!authenticated && !isLoopback(host) && !config.insecureNoAuth) {
    throw new ConfigError(
      `refusing to listen on ${host} without a token: anyone who can reach it could run commands. ` +
        "Set --token or --token-file (EXECMUX_TOKEN / EXECMUX_TOKEN_FILE) or --ws-auth, or pass --insecure-no-auth if you really mean it.",
    );
  }
  return { host, port, tls, wsAuth };
}
