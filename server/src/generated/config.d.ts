// Declarations of server/dist/generated/config.js, which scripts/build-protocol.mjs writes from config-schema.ts.
import type { ErrorObject } from "ajv";
import type { Config } from "../config-schema.js";

/** The configuration schema as plain JSON: every setting's default, type and description. */
export declare const configSchema: { readonly properties: Readonly<Record<string, { readonly default: unknown; readonly description: string; readonly type?: string }>> };
/** Fills in defaults and coerces strings in place; `errors` says why it returned false. */
export declare const validateConfig: ((data: unknown) => data is Config) & { errors?: ErrorObject[] | null };
