// Declarations of a module scripts/build-protocol.mjs writes: one params validator per method of a family.
import type { ErrorObject } from "ajv";

declare const validators: Record<string, ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }>;
export = validators;
