// Declarations of server/dist/generated/methods.js, which scripts/build-protocol.mjs writes from shared/src/methods.ts.
import type { MethodFamily, RequestMethod } from "@execmux/shared";

/**
 * Every request method: the family upstream names in its handshake errors,
 * whether it is execmux's own, where its params validator is
 * (generated/validators/MODULE.js, export EXPORTNAME), and whether its
 * result schema holds base64 (what a reply may splice in, envelope.ts).
 */
export declare const methods: Readonly<
  Record<RequestMethod, { readonly family: MethodFamily | null; readonly extension: boolean; readonly module: string; readonly exportName: string; readonly base64Result: boolean }>
>;
