/**
 * The string formats the protocol's schemas name, for the validators
 * compiled at build time (scripts/build-protocol.mjs imports this module
 * into each). Canonical standard base64, as upstream decodes it.
 */
import { standardBase64Error } from "../methods/fs/base64.js";

export const formats = {
  "standard-base64": { type: "string", validate: (text: string) => standardBase64Error(text) === undefined },
};
