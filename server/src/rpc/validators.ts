import { Ajv, type ValidateFunction } from "ajv";
import { RequestMethods, type RequestMethod } from "@execmux/shared";
import { standardBase64Error } from "../methods/fs/base64.js";
import { paramsErrorMessage } from "./params-error.js";
import { invalidParams } from "./rpc-error.js";

// verbose: errors carry the offending value and schema, for serde-like messages.
const ajv = new Ajv({ allErrors: false, strict: false, verbose: true });
// The shared schemas' Base64: canonical standard base64, as upstream decodes it.
ajv.addFormat("standard-base64", { type: "string", validate: (text: string) => standardBase64Error(text) === undefined });

/** One compiled validator per method, built once at start-up from the shared schemas. */
const validators = Object.fromEntries(
  Object.entries(RequestMethods).map(([method, spec]) => [method, ajv.compile(spec.params)]),
) as Record<RequestMethod, ValidateFunction>;

/** Throws -32602 with upstream's kind of message when params do not fit the method's schema. */
export function validateParams(method: RequestMethod, params: unknown): void {
  const validate = validators[method];
  if (validate(params)) return;
  throw invalidParams(paramsErrorMessage(method, validate.errors, params));
}
