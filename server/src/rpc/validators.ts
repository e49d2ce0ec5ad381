import { Ajv, type ValidateFunction } from "ajv";
import { RequestMethods, type RequestMethod } from "@execmux/shared";
import { paramsErrorMessage } from "./params-error.js";
import { invalidParams } from "./rpc-error.js";

// verbose: errors carry the offending value and schema, for serde-like messages.
const ajv = new Ajv({ allErrors: false, strict: false, verbose: true });

/** One compiled validator per method, built once at start-up from the shared schemas. */
const validators = Object.fromEntries(
  Object.entries(RequestMethods).map(([method, spec]) => [method, ajv.compile(spec.params)]),
) as Record<RequestMethod, ValidateFunction>;

/** Throws -32602 with upstream's kind of message when params do not fit the method's schema. */
export function validateParams(method: RequestMethod, params: unknown): void {
  const validate = validators[method];
  if (validate(params)) return;
  throw invalidParams(paramsErrorMessage(method, validate.errors));
}
