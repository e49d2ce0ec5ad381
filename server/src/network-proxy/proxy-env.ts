/**
 * The environment a proxied process gets, variable for variable what the
 * upstream 0.171 exec-server sets: every proxy variable common tools read
 * (curl, pip, npm, yarn, bundler, docker, websocket clients, Node's own
 * fetch with NODE_USE_ENV_PROXY), pointing at the HTTP proxy, SOCKS5 for
 * ALL_PROXY and FTP_PROXY, every NO_PROXY emptied (loopback goes through the
 * proxy too, where the policy decides) unless local binding is allowed, and
 * Codex's markers.
 */

const HTTP_PROXY_KEYS = [
  "HTTP_PROXY", "HTTPS_PROXY", "WS_PROXY", "WSS_PROXY", "http_proxy", "https_proxy", "ws_proxy", "wss_proxy",
  "NPM_CONFIG_PROXY", "NPM_CONFIG_HTTP_PROXY", "NPM_CONFIG_HTTPS_PROXY", "npm_config_proxy", "npm_config_http_proxy", "npm_config_https_proxy",
  "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "BUNDLE_HTTP_PROXY", "BUNDLE_HTTPS_PROXY", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY", "PIP_PROXY",
];
const SOCKS_PROXY_KEYS = ["ALL_PROXY", "all_proxy", "FTP_PROXY", "ftp_proxy"];
const NO_PROXY_KEYS = ["NO_PROXY", "no_proxy", "NPM_CONFIG_NOPROXY", "npm_config_noproxy", "BUNDLE_NO_PROXY"];
const LOCAL_NO_PROXY = "localhost,127.0.0.1,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16";

export interface ProxyEndpoints {
  readonly httpPort: number;
  /** Absent when the policy turned SOCKS5 off: ALL_PROXY then points at the HTTP proxy. */
  readonly socksPort?: number | undefined;
  readonly allowLocalBinding: boolean;
}

export function proxyEnvironment({ httpPort, socksPort, allowLocalBinding }: ProxyEndpoints): Record<string, string> {
  const http = `http://127.0.0.1:${httpPort}`;
  const socks = socksPort === undefined ? http : `socks5h://127.0.0.1:${socksPort}`;
  const env: Record<string, string> = {};
  for (const key of HTTP_PROXY_KEYS) env[key] = http;
  for (const key of SOCKS_PROXY_KEYS) env[key] = socks;
  // With local binding allowed, local and private destinations skip the proxy, as upstream's list says.
  for (const key of NO_PROXY_KEYS) env[key] = allowLocalBinding ? LOCAL_NO_PROXY : "";
  env.ELECTRON_GET_USE_PROXY = "true";
  env.NODE_USE_ENV_PROXY = "1";
  env.CODEX_NETWORK_PROXY_ACTIVE = "1";
  env.CODEX_NETWORK_ALLOW_LOCAL_BINDING = allowLocalBinding ? "1" : "0";
  return env;
}

/** Every variable proxyEnvironment sets. */
const PROXY_ENVIRONMENT_KEYS = new Set([
  ...HTTP_PROXY_KEYS,
  ...SOCKS_PROXY_KEYS,
  ...NO_PROXY_KEYS,
  "ELECTRON_GET_USE_PROXY",
  "NODE_USE_ENV_PROXY",
  "CODEX_NETWORK_PROXY_ACTIVE",
  "CODEX_NETWORK_ALLOW_LOCAL_BINDING",
]);

/**
 * `env` without what proxyEnvironment set: the settings a shell snapshot
 * captured under one start's proxy, which name that proxy's ports, not the
 * next start's (shell-snapshot/parse.ts).
 */
export function withoutProxyEnvironment(env: Readonly<Record<string, string>>): Record<string, string> {
  const kept = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(env)) if (!PROXY_ENVIRONMENT_KEYS.has(name)) kept[name] = value;
  return kept;
}
