/** The protocol's bounds that code needs beside the schemas that state them. */

/** Largest decoded body slice in one `http/request/bodyDelta` (upstream's MAX_HTTP_BODY_DELTA_BYTES). */
export const MAX_HTTP_BODY_DELTA_BYTES = 1024 * 1024;
