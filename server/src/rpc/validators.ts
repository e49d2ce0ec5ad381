/**
 * Params against the method's schema. Each method's validator was compiled
 * at build time (scripts/build-protocol.mjs) and is loaded on the method's
 * first call: the daemon starts without TypeBox or ajv, and a method nobody
 * calls costs nothing.
 */
import type { ErrorObject } from "ajv";
import type { RequestMethod } from "@execmux/shared";
import { methods } from "../generated/methods.js";
import { paramsErrorMessage } from "./params-error.js";
import { invalidParams } from "./rpc-error.js";

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const loaded = new Map<RequestMethod, Validator | Promise<Validator>>();

function validatorOf(method: RequestMethod): Validator | Promise<Validator> {
  let validator = loaded.get(method);
  if (!validator) {
    validator = import(`../generated/validators/${methods[method].slug}.js`).then((module: { validate: Validator }) => {
      loaded.set(method, module.validate);
      return module.validate;
    });
    loaded.set(method, validator);
  }
  return validator;
}

/** Throws -32602 with upstream's kind of message when params do not fit the method's schema. */
export async function validateParams(method: RequestMethod, params: unknown): Promise<void> {
  const found = validatorOf(method);
  const validate = typeof found === "function" ? found : await found;
  if (validate(params)) return;
  throw invalidParams(paramsErrorMessage(method, validate.errors, params));
}
