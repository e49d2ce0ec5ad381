/**
 * Is the daemon that these arguments and this environment configure ready?
 * For a probe that runs apart from the daemon (Docker's HEALTHCHECK): it
 * reads the configuration the daemon's own way, so a daemon configured by
 * flag, file or variable is probed where it listens.
 */
import { loadConfig, parseListen } from "./config.js";

export interface ProbeResult {
  ready: boolean;
  /** What was probed and what came back. */
  message: string;
}

/** Where a wildcard address is reached from the same machine. */
const LOCAL_FOR_WILDCARD: Record<string, string> = { "0.0.0.0": "127.0.0.1", "::": "::1" };

export async function probeReadiness(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs = 2_000,
): Promise<ProbeResult> {
  const config = loadConfig(argv, env);
  const { host, port } = parseListen(config.listen);
  if (port === 0) return { ready: false, message: `${config.listen} picks a free port at start: nothing to probe` };
  const probeHost = LOCAL_FOR_WILDCARD[host] ?? host;
  const url = `${config.tlsCert ? "https" : "http"}://${probeHost.includes(":") ? `[${probeHost}]` : probeHost}:${port}/readyz`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return { ready: response.ok, message: `${url}: HTTP ${response.status}` };
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    return { ready: false, message: `${url}: ${cause ?? (error as Error).message}` };
  }
}
