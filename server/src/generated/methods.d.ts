// Declarations of server/dist/generated/methods.js, which scripts/build-protocol.mjs writes from shared/src/methods.ts.
import type { MethodFamily, RequestMethod } from "@execmux/shared";

/** Every request method: the family upstream names in its handshake errors, whether it is execmux's own, and its validator's file name. */
export declare const methods: Readonly<Record<RequestMethod, { readonly family: MethodFamily | null; readonly extension: boolean; readonly slug: string }>>;
