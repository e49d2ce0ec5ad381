/**
 * A frame's text made into a message, and, for a request or notification of
 * a known method, its params checked against the method's schema, exactly
 * as dispatch would check them. What a large frame costs (decoding,
 * parsing, a schema check that counts a long string's characters) can so be
 * paid away from the event loop (off-thread-frames.ts); dispatch then takes
 * the check's outcome instead of checking again.
 */
import { ErrorCode } from "@execmux/shared/core";
import type { RequestMethod, RpcErrorBody } from "@execmux/shared";
import { methods } from "../generated/methods.js";
import { parseFrame, type Incoming } from "./envelope.js";
import { RpcError } from "../errors/rpc-error.js";
import { validateParams } from "./validators.js";

/** The params dispatch hands to the handler, or the error it answers with. */
export type ParamsCheck = { readonly ok: true; readonly params: unknown } | { readonly ok: false; readonly error: RpcErrorBody };

export type CheckedFrame = Incoming & { readonly checked?: ParamsCheck };

/**
 * Absent params are `null`, as upstream decodes them (`invalid type: null,
 * expected struct ReadParams`); execmux's own extensions, which upstream
 * lacks, take them as `{}`. Then the method's schema (-32602).
 */
export async function checkParams(method: string, params: unknown): Promise<ParamsCheck> {
  if (!Object.hasOwn(methods, method)) return { ok: true, params };
  const checked = params ?? (methods[method as RequestMethod].extension ? {} : null);
  try {
    await validateParams(method as RequestMethod, checked);
  } catch (error) {
    if (error instanceof RpcError) return { ok: false, error: error.toBody() };
    return { ok: false, error: { code: ErrorCode.InternalError, message: String((error as Error)?.message) } };
  }
  return { ok: true, params: checked };
}

export async function checkFrame(text: string): Promise<CheckedFrame> {
  const message = parseFrame(text);
  if (message.kind !== "request" && message.kind !== "notification") return message;
  return { ...message, checked: await checkParams(message.method, message.params) };
}
