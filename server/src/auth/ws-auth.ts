/**
 * Upstream's `--ws-auth` options, with upstream's names and checks, so a
 * sandbox platform's launch command for `codex exec-server` works unchanged
 * for `execmux serve`. Every mistake stops the daemon at start-up with
 * upstream's message: a mode without its options, options without their
 * mode, a file that cannot be read or is empty, a bad digest, a short secret.
 * The files are read once, as upstream reads them (surrounding whitespace
 * trimmed); a relative path is taken from the working directory, as upstream
 * does despite its help text.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError, type Config } from "../config.js";
import { CapabilityToken } from "./capability-token.js";
import type { Credential } from "./credential.js";
import { SignedBearerToken } from "./signed-bearer-token.js";

type WsAuthOptions = Pick<
  Config,
  "wsAuth" | "wsTokenFile" | "wsTokenSha256" | "wsSharedSecretFile" | "wsIssuer" | "wsAudience" | "wsMaxClockSkewSeconds"
>;

export type WsAuthSettings =
  | { readonly mode: "capability-token"; readonly tokenFile: string; readonly tokenSha256?: undefined }
  | { readonly mode: "capability-token"; readonly tokenFile?: undefined; readonly tokenSha256: Buffer }
  | {
      readonly mode: "signed-bearer-token";
      readonly sharedSecretFile: string;
      readonly issuer?: string;
      readonly audience?: string;
      readonly maxClockSkewSeconds: number;
    };

/** Upstream's default. */
const DEFAULT_MAX_CLOCK_SKEW_SECONDS = 30;
/** Upstream refuses shorter HMAC secrets. */
const MIN_SHARED_SECRET_BYTES = 32;

const given = (value: string) => value.trim() !== "";

/** The options checked as upstream checks its flags, before any file is read; undefined when --ws-auth is off. */
export function wsAuthSettings(options: WsAuthOptions, cwd = process.cwd()): WsAuthSettings | undefined {
  const tokenOptions = given(options.wsTokenFile) || given(options.wsTokenSha256);
  const jwtOptions =
    given(options.wsSharedSecretFile) || given(options.wsIssuer) || given(options.wsAudience) || given(options.wsMaxClockSkewSeconds);
  switch (options.wsAuth) {
    case "capability-token": {
      if (jwtOptions) {
        throw new ConfigError(
          "`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and `--ws-max-clock-skew-seconds` require `--ws-auth signed-bearer-token`",
        );
      }
      if (given(options.wsTokenFile) && given(options.wsTokenSha256)) {
        throw new ConfigError("`--ws-token-file` and `--ws-token-sha256` are mutually exclusive");
      }
      if (given(options.wsTokenFile)) return { mode: "capability-token", tokenFile: resolve(cwd, options.wsTokenFile) };
      if (given(options.wsTokenSha256)) return { mode: "capability-token", tokenSha256: parseSha256(options.wsTokenSha256) };
      throw new ConfigError("`--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth capability-token` is set");
    }
    case "signed-bearer-token": {
      if (tokenOptions) {
        throw new ConfigError("`--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, not `signed-bearer-token`");
      }
      if (!given(options.wsSharedSecretFile)) {
        throw new ConfigError("`--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is set");
      }
      const issuer = options.wsIssuer.trim();
      const audience = options.wsAudience.trim();
      return {
        mode: "signed-bearer-token",
        sharedSecretFile: resolve(cwd, options.wsSharedSecretFile),
        ...(issuer ? { issuer } : {}),
        ...(audience ? { audience } : {}),
        maxClockSkewSeconds: parseSkew(options.wsMaxClockSkewSeconds),
      };
    }
    case "":
      if (tokenOptions || jwtOptions) {
        throw new ConfigError("websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`");
      }
      return undefined;
  }
}

/** Reads the files the settings name: the credential that admits requests. */
export function loadWsAuth(settings: WsAuthSettings): Credential {
  if (settings.mode === "capability-token") {
    return settings.tokenFile !== undefined
      ? CapabilityToken.fromToken(readTrimmedSecret(settings.tokenFile))
      : CapabilityToken.fromDigest(settings.tokenSha256);
  }
  const secret = Buffer.from(readTrimmedSecret(settings.sharedSecretFile), "utf8");
  if (secret.length < MIN_SHARED_SECRET_BYTES) {
    throw new ConfigError(`signed websocket bearer secret ${settings.sharedSecretFile} must be at least ${MIN_SHARED_SECRET_BYTES} bytes`);
  }
  return new SignedBearerToken(secret, settings);
}

function parseSha256(value: string): Buffer {
  const hex = value.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError("--ws-token-sha256 must be a 64-character hex SHA-256 digest");
  return Buffer.from(hex, "hex");
}

function parseSkew(value: string): number {
  if (!given(value)) return DEFAULT_MAX_CLOCK_SKEW_SECONDS;
  const seconds = Number(value.trim());
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new ConfigError(`--ws-max-clock-skew-seconds must be a whole number of seconds, got ${value}`);
  }
  return seconds;
}

/** The file's text without surrounding whitespace (a trailing newline is not part of the token). Never echoes the content. */
function readTrimmedSecret(path: string): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(path));
  } catch (error) {
    const reason = error instanceof TypeError ? "it is not valid UTF-8" : (error as Error).message;
    throw new ConfigError(`failed to read websocket auth secret ${path}: ${reason}`);
  }
  const trimmed = text.trim();
  if (trimmed === "") throw new ConfigError(`websocket auth secret ${path} must not be empty`);
  return trimmed;
}
