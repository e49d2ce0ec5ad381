import { Ajv, type ValidateFunction } from "ajv";
import { RequestMethods, type RequestMethod } from "@execmux/shared";
import { invalidParams } from "./rpc-error.js";

const ajv = new Ajv({ allErrors: false, strict: false });

/** One compiled validator per method, built once at start-up from the shared schemas. */
const validators = Object.fromEntries(
  Object.entries(RequestMethods).map(([method, spec]) => [method, ajv.compile(spec.params)]),
) as Record<RequestMethod, ValidateFunction>;

/** Throws -32602 with ajv's message in `data` when params do not fit the method's schema. */
export function validateParams(method: RequestMethod, params: unknown): void {
  const validate = validators[method];
  if (validate(params)) return;
  const detail = ajv.errorsText(validate.errors, { dataVar: "params" });
  throw invalidParams(`invalid params for ${method}: ${detail}`, detail);
}
