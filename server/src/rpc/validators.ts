/**
 * Params against the method's schema. The validators were compiled at build
 * time (scripts/build-protocol.mjs), one module per method family: the
 * daemon starts without TypeBox or ajv and compiles no schema. The families
 * every client uses come with the daemon; the others (fs/*, http/*: the
 * filesystem's validators are a megabyte of code) load on their first call.
 */
import type { ErrorObject } from "ajv";
import type { RequestMethod } from "@execmux/shared";
import * as environment from "../generated/validators/environment.js";
import * as initialize from "../generated/validators/initialize.js";
import * as process from "../generated/validators/process.js";
import { methods } from "../generated/methods.js";
import { paramsErrorMessage } from "./params-error.js";
import { invalidParams } from "../errors/rpc-error.js";

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
type Family = Readonly<Record<string, Validator>>;

const families = new Map<string, Family | Promise<Family>>([
  ["initialize", initialize as unknown as Family],
  ["environment", environment as unknown as Family],
  ["process", process as unknown as Family],
]);

function familyOf(name: string): Family | Promise<Family> {
  let family = families.get(name);
  if (!family) {
    family = import(`../generated/validators/${name}.js`).then((module: Family) => {
      families.set(name, module);
      return module;
    });
    families.set(name, family);
  }
  return family;
}

/** Throws -32602 with upstream's kind of message when params do not fit the method's schema. */
export async function validateParams(method: RequestMethod, params: unknown): Promise<void> {
  const { module, exportName } = methods[method];
  const found = familyOf(module);
  const validate = ("then" in found ? await found : found)[exportName]!;
  if (validate(params)) return;
  throw invalidParams(paramsErrorMessage(method, validate.errors, params));
}
